// Writes the CustomResourceDefinition generated from the zod schema (`make crds`).
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { CRD_FILE, renderCrdYaml } from "../operator/src/api/crd.js";

const target = fileURLToPath(new URL(`../${CRD_FILE}`, import.meta.url));
try {
  writeFileSync(target, renderCrdYaml());
} catch (cause) {
  throw new Error(`writing ${CRD_FILE}`, { cause });
}
console.log(`wrote ${CRD_FILE}`);
