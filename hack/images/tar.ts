// A minimal, reproducible tar writer: regular files, directories and symlinks, ustar headers with
// a PAX record when a name or link does not fit. Every field that could vary between machines
// (mtime, owner names, device numbers) is fixed, so the same entries always give the same bytes.

export interface TarEntry {
  /** Path inside the archive, without a leading slash; directories without a trailing one. */
  path: string;
  type: "file" | "dir" | "symlink";
  mode: number;
  uid?: number;
  gid?: number;
  content?: Buffer;
  /** Symlink target. */
  linkname?: string;
}

const BLOCK = 512;
/** A fixed mtime (2000-01-01T00:00:00Z): zero confuses some tools that take it for "missing". */
export const FIXED_MTIME = 946684800;

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, "0") + "\0";
}

function header(fields: {
  name: string;
  mode: number;
  uid: number;
  gid: number;
  size: number;
  type: string;
  linkname: string;
  prefix: string;
}): Buffer {
  const h = Buffer.alloc(BLOCK);
  h.write(fields.name, 0, 100, "utf8");
  h.write(octal(fields.mode & 0o7777, 8), 100, "ascii");
  h.write(octal(fields.uid, 8), 108, "ascii");
  h.write(octal(fields.gid, 8), 116, "ascii");
  h.write(octal(fields.size, 12), 124, "ascii");
  h.write(octal(FIXED_MTIME, 12), 136, "ascii");
  h.write(fields.type, 156, "ascii");
  h.write(fields.linkname, 157, 100, "utf8");
  h.write("ustar\0", 257, "ascii");
  h.write("00", 263, "ascii");
  h.write(octal(0, 8), 329, "ascii");
  h.write(octal(0, 8), 337, "ascii");
  h.write(fields.prefix, 345, 155, "utf8");
  // The checksum is computed with its own field as eight spaces.
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(sum.toString(8).padStart(6, "0") + "\0 ", 148, "ascii");
  return h;
}

function pad(length: number): Buffer {
  const rest = length % BLOCK;
  return Buffer.alloc(rest === 0 ? 0 : BLOCK - rest);
}

/** Splits a name into ustar's prefix (155 bytes) and name (100 bytes), or says it cannot. */
function splitName(name: string): { prefix: string; name: string } | undefined {
  if (Buffer.byteLength(name) <= 100) return { prefix: "", name };
  for (let i = name.indexOf("/"); i !== -1; i = name.indexOf("/", i + 1)) {
    const prefix = name.slice(0, i);
    const rest = name.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(rest) <= 100 && rest !== "")
      return { prefix, name: rest };
  }
  return undefined;
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  // The length counts its own digits.
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length)
    length = String(length).length + Buffer.byteLength(body);
  return `${length}${body}`;
}

function entryBlocks(entry: TarEntry): Buffer[] {
  const name = entry.type === "dir" ? `${entry.path}/` : entry.path;
  const content = entry.type === "file" ? (entry.content ?? Buffer.alloc(0)) : Buffer.alloc(0);
  const linkname = entry.linkname ?? "";
  const split = splitName(name);
  const blocks: Buffer[] = [];
  const longLink = Buffer.byteLength(linkname) > 100;
  if (!split || longLink) {
    const pax = Buffer.from((split ? "" : paxRecord("path", name)) + (longLink ? paxRecord("linkpath", linkname) : ""));
    blocks.push(
      header({ name: "PaxHeader", mode: 0o644, uid: 0, gid: 0, size: pax.length, type: "x", linkname: "", prefix: "" }),
      pax,
      pad(pax.length),
    );
  }
  const short = split ?? { prefix: "", name: name.slice(-100) };
  const type = entry.type === "file" ? "0" : entry.type === "dir" ? "5" : "2";
  blocks.push(
    header({
      ...short,
      mode: entry.mode,
      uid: entry.uid ?? 0,
      gid: entry.gid ?? 0,
      size: content.length,
      type,
      linkname: longLink ? "" : linkname,
    }),
    content,
    pad(content.length),
  );
  return blocks;
}

/**
 * The archive of the entries, sorted by path so the order never depends on how they were gathered;
 * every parent directory must be listed (tools create missing ones with their own modes).
 */
export function writeTar(entries: TarEntry[]): Buffer {
  const sorted = [...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.path === sorted[i - 1]!.path) throw new Error(`tar entry ${sorted[i]!.path}: listed twice`);
  }
  return Buffer.concat([...sorted.flatMap(entryBlocks), Buffer.alloc(BLOCK * 2)]);
}

/** Reads the entries back (names, types, sizes, contents): what the tests check an archive with. */
export function readTar(archive: Buffer): TarEntry[] {
  const out: TarEntry[] = [];
  let at = 0;
  let paxPath: string | undefined;
  while (at + BLOCK <= archive.length) {
    const h = archive.subarray(at, at + BLOCK);
    if (h.every((b) => b === 0)) break;
    const str = (from: number, len: number) =>
      h
        .subarray(from, from + len)
        .toString("utf8")
        .replace(/\0.*$/s, "");
    const size = parseInt(str(124, 12), 8);
    const type = str(156, 1);
    const content = archive.subarray(at + BLOCK, at + BLOCK + size);
    at += BLOCK + size + pad(size).length;
    if (type === "x") {
      paxPath = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(content.toString("utf8"))?.[1];
      continue;
    }
    const prefix = str(345, 155);
    const name = paxPath ?? (prefix ? `${prefix}/${str(0, 100)}` : str(0, 100));
    paxPath = undefined;
    out.push({
      path: name.replace(/\/$/, ""),
      type: type === "5" ? "dir" : type === "2" ? "symlink" : "file",
      mode: parseInt(str(100, 8), 8),
      uid: parseInt(str(108, 8), 8),
      gid: parseInt(str(116, 8), 8),
      content: Buffer.from(content),
      linkname: str(157, 100),
    });
  }
  return out;
}
