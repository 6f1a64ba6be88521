// Decodes Kubernetes protobuf messages of any core/v1 or apps/v1 kind (what `kubectl create
// namespace|deployment|serviceaccount|secret` sends) with @bufbuild/protobuf, from a descriptor set
// compiled from the Kubernetes .proto definitions (kubernetes.binpb, made by
// hack/generate-kube-descriptors.sh), into the object's JSON form. Field names in those .proto files
// are the JSON names; the apimachinery types with their own JSON form (Time, IntOrString, Quantity,
// RawExtension, FieldsV1) are rendered as the real server's JSON encoder renders them.
import { readFileSync } from "node:fs";
import { createFileRegistry, fromBinary, ScalarType, type DescField, type DescMessage } from "@bufbuild/protobuf";
import { reflect, type ReflectMessage } from "@bufbuild/protobuf/reflect";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";

const registry = createFileRegistry(
  fromBinary(FileDescriptorSetSchema, readFileSync(new URL("./kubernetes.binpb", import.meta.url))),
);

const PACKAGES: Record<string, string> = {
  v1: "k8s.io.api.core.v1",
  "apps/v1": "k8s.io.api.apps.v1",
};

const META = "k8s.io.apimachinery.pkg.apis.meta.v1";

const seconds = (s: bigint): string => new Date(Number(s) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");

/** Dropped from the JSON: client-go writes every non-pointer field, the JSON encoder omits these empties. */
const OMIT = Symbol("omit");

/** apimachinery types whose JSON is not their message shape. */
const SPECIAL: Record<string, (m: ReflectMessage) => unknown> = {
  // A zero Time is null in JSON: left out, as the server sets what it means.
  [`${META}.Time`]: (m) => (scalar(m, "seconds") ? seconds(scalar(m, "seconds") as bigint) : OMIT),
  [`${META}.MicroTime`]: (m) => {
    const micros = String(Math.floor(Number(scalar(m, "nanos") ?? 0) / 1000)).padStart(6, "0");
    return seconds(scalar(m, "seconds") as bigint).replace(/Z$/, `.${micros}Z`);
  },
  [`${META}.Duration`]: (m) => `${Number(scalar(m, "duration") as bigint) / 1e9}s`,
  [`${META}.FieldsV1`]: (m) => JSON.parse(new TextDecoder().decode(scalar(m, "Raw") as Uint8Array)),
  "k8s.io.apimachinery.pkg.runtime.RawExtension": (m) =>
    JSON.parse(new TextDecoder().decode(scalar(m, "raw") as Uint8Array)),
  "k8s.io.apimachinery.pkg.api.resource.Quantity": (m) => scalar(m, "string"),
  "k8s.io.apimachinery.pkg.util.intstr.IntOrString": (m) =>
    Number(scalar(m, "type") ?? 0) === 1 ? (scalar(m, "strVal") ?? "") : Number(scalar(m, "intVal") ?? 0),
};

function scalar(m: ReflectMessage, name: string): unknown {
  const f = m.fields.find((x) => x.name === name);
  return f && m.isSet(f) ? m.get(f) : undefined;
}

function scalarJson(type: ScalarType, v: unknown): unknown {
  if (type === ScalarType.BYTES) return Buffer.from(v as Uint8Array).toString("base64");
  if (typeof v === "bigint") return Number(v);
  return v;
}

function messageJson(m: ReflectMessage): unknown {
  const special = SPECIAL[m.desc.typeName];
  if (special) return special(m);
  const out: Record<string, unknown> = {};
  for (const f of m.fields) {
    if (!m.isSet(f)) continue;
    const v = fieldJson(m, f);
    if (v !== OMIT && v !== "") out[f.name] = v;
  }
  return out;
}

function fieldJson(m: ReflectMessage, f: DescField): unknown {
  switch (f.fieldKind) {
    case "scalar":
      return scalarJson(f.scalar, m.get(f));
    case "enum":
      return m.get(f);
    case "message":
      return messageJson(m.get(f));
    case "list": {
      const items = [...m.get(f).values()];
      if (f.listKind === "message") return items.map((i) => messageJson(i as ReflectMessage));
      if (f.listKind === "scalar") return items.map((i) => scalarJson(f.scalar, i));
      return items;
    }
    case "map": {
      const out: Record<string, unknown> = {};
      for (const [k, v] of m.get(f)) {
        out[String(k)] =
          f.mapKind === "message"
            ? messageJson(v as ReflectMessage)
            : f.mapKind === "scalar"
              ? scalarJson(f.scalar, v)
              : v;
      }
      return out;
    }
  }
}

/** The message a kind is encoded as, when the descriptor set has it. */
export function kindMessage(apiVersion: string, kind: string): DescMessage | undefined {
  const pkg = PACKAGES[apiVersion];
  return pkg ? registry.getMessage(`${pkg}.${kind}`) : undefined;
}

/** The JSON form of a protobuf-encoded object of a core/v1 or apps/v1 kind; undefined for other kinds. */
export function decodeKind(apiVersion: string, kind: string, raw: Uint8Array): Record<string, unknown> | undefined {
  const desc = kindMessage(apiVersion, kind);
  if (!desc) return undefined;
  const json = messageJson(reflect(desc, fromBinary(desc, raw))) as Record<string, unknown>;
  return { apiVersion, kind, ...json };
}
