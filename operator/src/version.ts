// The operator's version, from the nearest package.json above this module: the same code runs
// from operator/src (tsx) and from dist/ (the image), which sit at different depths.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let cached: string | undefined;

export function operatorVersion(): string {
  if (cached !== undefined) return cached;
  cached = "unknown";
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      try {
        const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
        if (pkg.name === "healthprobe-operator" && pkg.version) {
          cached = pkg.version;
          break;
        }
      } catch {
        // Not ours or unreadable: keep walking up.
      }
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return cached;
}
