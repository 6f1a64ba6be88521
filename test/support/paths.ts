// Where things are in a checkout: the repository root and the kubectl and helm binaries that
// `npm ci` unpacks into .tools/bin.
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const kubectlBin = join(repoRoot, ".tools", "bin", "kubectl");
export const helmBin = join(repoRoot, ".tools", "bin", "helm");
