// Gathers a layer's entries: files from the host or from memory, with every parent directory
// listed once (mode 0755, root-owned unless set), so the layer never depends on how a tool fills gaps.
import { execFileSync } from "node:child_process";
import { lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import { join, posix } from "node:path";
import type { TarEntry } from "./tar.js";

export class Layer {
  private readonly entries = new Map<string, TarEntry>();

  private parents(path: string): void {
    const dir = posix.dirname(path);
    if (dir === "." || dir === "/" || this.entries.has(dir)) return;
    this.parents(dir);
    this.entries.set(dir, { path: dir, type: "dir", mode: 0o755 });
  }

  private add(entry: TarEntry): this {
    const path = entry.path.replace(/^\/+/, "").replace(/\/+$/, "");
    if (path === "" || path.split("/").includes(".."))
      throw new Error(`layer path ${JSON.stringify(entry.path)}: not a path inside the image`);
    this.parents(path);
    this.entries.set(path, { ...entry, path });
    return this;
  }

  dir(path: string, mode = 0o755, owner = 0): this {
    return this.add({ path, type: "dir", mode, uid: owner, gid: owner });
  }

  file(path: string, content: string | Buffer, mode = 0o644): this {
    return this.add({ path, type: "file", mode, content: Buffer.from(content) });
  }

  symlink(path: string, target: string): this {
    return this.add({ path, type: "symlink", mode: 0o777, linkname: target });
  }

  /** A host file's content and permission bits at `imagePath` (its own path by default), symlinks followed. */
  host(hostPath: string, imagePath = hostPath): this {
    const real = realpathSync(hostPath);
    return this.file(imagePath, readFileSync(real), lstatSync(real).mode & 0o777);
  }

  /** A host directory tree, symlinks kept as symlinks, under `imagePath`. */
  tree(hostDir: string, imagePath = hostDir): this {
    this.dir(imagePath);
    for (const name of readdirSync(hostDir).sort()) {
      const from = join(hostDir, name);
      const to = posix.join(imagePath, name);
      const st = lstatSync(from);
      if (st.isSymbolicLink()) this.symlink(to, readlinkSync(from));
      else if (st.isDirectory()) this.tree(from, to);
      else if (st.isFile()) this.file(to, readFileSync(from), st.mode & 0o777);
    }
    return this;
  }

  /** The shared libraries and loader a dynamic binary needs, as ldd finds them, each at the path ldd prints. */
  sharedLibraries(binary: string): this {
    const out = execFileSync("ldd", [binary], { encoding: "utf8" });
    for (const line of out.split("\n")) {
      const lib = /=>\s*(\/\S+)/.exec(line)?.[1] ?? /^\s*(\/\S+)\s+\(/.exec(line)?.[1];
      if (lib) this.host(lib);
    }
    return this;
  }

  list(): TarEntry[] {
    return [...this.entries.values()];
  }
}
