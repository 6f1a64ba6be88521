// The syntax of an HTTP/1.1 response head and chunk lines (RFC 9112), byte by byte, as strict
// as Node's own llhttp or stricter: lines end in CRLF only, field names are tokens, field values
// carry no control bytes, no obs-fold. A probe that accepted what llhttp refuses would call a
// broken server healthy (test/fuzz/http-response-differential.test.ts compares the two).

const CR = 13;
const LF = 10;

/** tchar of RFC 9110 5.6.2. */
const TOKEN = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
  TOKEN[c.charCodeAt(0)] = 1;
/** field-vchar, SP and HTAB: what a field value or a reason phrase may hold. */
const FIELD_TEXT = new Uint8Array(256);
for (let c = 0; c < 256; c++) FIELD_TEXT[c] = c === 9 || (c >= 0x20 && c !== 0x7f) ? 1 : 0;

/**
 * Offset just past the blank line that ends a field section starting at `from` (a head's
 * status line counts as its first line), -1 when it has not arrived yet, -2 at an LF without
 * its CR. A CR without its LF is left to the line checks.
 */
export function sectionEnd(buf: Buffer, from: number, withStatusLine: boolean): number {
  if (!withStatusLine && buf[from] === CR) return from + 1 >= buf.length ? -1 : buf[from + 1] === LF ? from + 2 : -2;
  for (let i = buf.indexOf(LF, from); i >= 0; i = buf.indexOf(LF, i + 1)) {
    if (i === from || buf[i - 1] !== CR) return -2;
    if (buf[i + 1] === CR) {
      if (i + 2 >= buf.length) return -1;
      if (buf[i + 2] === LF) return i + 3;
    }
  }
  return -1;
}

/** The code of a status line "HTTP/1.x NNN[ reason]" CRLF at the start of `buf`, or -1. */
export function statusLineCode(buf: Buffer): number {
  if (buf[5] !== 0x31 || buf[6] !== 0x2e || (buf[7] !== 0x30 && buf[7] !== 0x31) || buf[8] !== 0x20) return -1;
  const a = (buf[9] as number) - 0x30;
  const b = (buf[10] as number) - 0x30;
  const c = (buf[11] as number) - 0x30;
  if (a < 1 || a > 5 || b < 0 || b > 9 || c < 0 || c > 9) return -1;
  const lineEnd = buf.indexOf(CR, 12);
  if (lineEnd < 0 || buf[lineEnd + 1] !== LF) return -1;
  if (lineEnd > 12 && buf[12] !== 0x20) return -1;
  for (let i = 13; i < lineEnd; i++) if (!FIELD_TEXT[buf[i] as number]) return -1;
  return a * 100 + b * 10 + c;
}

/** Offset of the first field line: just past the status line's CRLF. */
export function afterStatusLine(buf: Buffer): number {
  return buf.indexOf(CR, 12) + 2;
}

/** The framing fields of a section: the values of every Content-Length and Transfer-Encoding line. */
export interface FramingFields {
  contentLengths: string[];
  transferCodings: string[];
}

/**
 * Checks the field lines from `from` up to the blank line ending at `end`, and gathers the
 * framing fields. Returns false on a malformed line: a name that is not a token, no colon, a
 * value with a control byte, obs-fold, a CR without its LF.
 */
export function readFieldLines(buf: Buffer, from: number, end: number, framing: FramingFields | undefined): boolean {
  let at = from;
  for (;;) {
    const lineEnd = buf.indexOf(CR, at);
    if (lineEnd < 0 || lineEnd >= end || buf[lineEnd + 1] !== LF) return false;
    if (lineEnd === at) return lineEnd + 2 === end;
    let colon = at;
    while (colon < lineEnd && TOKEN[buf[colon] as number]) colon++;
    if (colon === at || colon === lineEnd || buf[colon] !== 0x3a) return false;
    let v = colon + 1;
    let vEnd = lineEnd;
    while (v < vEnd && (buf[v] === 0x20 || buf[v] === 9)) v++;
    while (vEnd > v && (buf[vEnd - 1] === 0x20 || buf[vEnd - 1] === 9)) vEnd--;
    for (let i = v; i < vEnd; i++) if (!FIELD_TEXT[buf[i] as number]) return false;
    if (framing) {
      const name = colon - at === 14 || colon - at === 17 ? buf.toString("latin1", at, colon).toLowerCase() : "";
      if (name === "content-length") framing.contentLengths.push(buf.toString("latin1", v, vEnd));
      else if (name === "transfer-encoding")
        framing.transferCodings.push(...buf.toString("latin1", v, vEnd).split(","));
    }
    at = lineEnd + 2;
  }
}

const CHUNK_LINE =
  /^[0-9A-Fa-f]{1,16}(?:;[!#$%&'*+\-.^_`|~0-9A-Za-z]+(?:=(?:[!#$%&'*+\-.^_`|~0-9A-Za-z]+|"(?:[\t !#-[\]-~\x80-\xff]|\\[\t -~\x80-\xff])*"))?)*\r$/;
const CHUNK_SIZE = /^[0-9A-Fa-f]{1,16}(?:;|\r$)/;

/** The size of a chunk line (latin1, without its LF), or why it is not one. */
export function chunkLineSize(line: string): number | "bad chunk size" | "bad chunk extension" {
  if (CHUNK_LINE.test(line)) return parseInt(line, 16);
  return CHUNK_SIZE.test(line) ? "bad chunk extension" : "bad chunk size";
}
