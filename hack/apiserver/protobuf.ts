// Decodes the Kubernetes protobuf request bodies helm sends: its release Secrets (the default storage
// driver) and their DeleteOptions. Other kinds are 415 (send JSON): kube-apiserver is the reference for the rest.
// Responses stay JSON, which client-go accepts whatever it asked for first.
import { BinaryReader, type WireType } from "@bufbuild/protobuf/wire";
import { ApiError } from "./errors.js";

const MAGIC = [0x6b, 0x38, 0x73, 0x00]; // "k8s\0"

export function isProtobuf(contentType: string): boolean {
  return /application\/vnd\.kubernetes\.protobuf/.test(contentType);
}

/** Field-by-field reading over @bufbuild/protobuf's wire reader. */
class Reader {
  private readonly r: BinaryReader;
  constructor(buf: Uint8Array) {
    this.r = new BinaryReader(buf);
  }
  varint(): bigint {
    return BigInt(this.r.uint64());
  }
  bytes(): Uint8Array {
    return this.r.bytes();
  }
  /** Iterates fields, calling the handler with the field number and wire type; unhandled fields are skipped. */
  each(handler: (field: number, wire: number) => boolean): void {
    while (this.r.pos < this.r.len) {
      const [field, wire] = this.r.tag();
      if (!handler(field, wire)) this.r.skip(wire as WireType, field);
    }
  }
}

const text = (b: Uint8Array): string => new TextDecoder().decode(b);

function mapEntry(b: Uint8Array, valueAsBase64: boolean): [string, string] {
  const r = new Reader(b);
  let key = "";
  let value = "";
  r.each((f, w) => {
    if (f === 1 && w === 2) key = text(r.bytes());
    else if (f === 2 && w === 2) {
      const v = r.bytes();
      value = valueAsBase64 ? Buffer.from(v).toString("base64") : text(v);
    } else return false;
    return true;
  });
  return [key, value];
}

function time(b: Uint8Array): string {
  const r = new Reader(b);
  let seconds = 0n;
  r.each((f, w) => {
    if (f === 1 && w === 0) seconds = r.varint();
    else return false;
    return true;
  });
  return new Date(Number(seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function ownerReference(b: Uint8Array): Record<string, unknown> {
  const r = new Reader(b);
  const out: Record<string, unknown> = {};
  r.each((f, w) => {
    if (w === 2 && f === 5) out.apiVersion = text(r.bytes());
    else if (w === 2 && f === 1) out.kind = text(r.bytes());
    else if (w === 2 && f === 3) out.name = text(r.bytes());
    else if (w === 2 && f === 4) out.uid = text(r.bytes());
    else if (w === 0 && f === 6) out.controller = r.varint() !== 0n;
    else if (w === 0 && f === 7) out.blockOwnerDeletion = r.varint() !== 0n;
    else return false;
    return true;
  });
  return out;
}

function objectMeta(b: Uint8Array): Record<string, unknown> {
  const r = new Reader(b);
  const meta: Record<string, any> = {};
  r.each((f, w) => {
    if (w === 2 && f === 1) meta.name = text(r.bytes());
    else if (w === 2 && f === 2) meta.generateName = text(r.bytes());
    else if (w === 2 && f === 3) meta.namespace = text(r.bytes());
    else if (w === 2 && f === 5) meta.uid = text(r.bytes());
    else if (w === 2 && f === 6) meta.resourceVersion = text(r.bytes());
    else if (w === 0 && f === 7) meta.generation = Number(r.varint());
    else if (w === 2 && f === 8) meta.creationTimestamp = time(r.bytes());
    else if (w === 2 && (f === 11 || f === 12)) {
      const [k, v] = mapEntry(r.bytes(), false);
      const key = f === 11 ? "labels" : "annotations";
      meta[key] = { ...(meta[key] ?? {}), [k]: v };
    } else if (w === 2 && f === 13) meta.ownerReferences = [...(meta.ownerReferences ?? []), ownerReference(r.bytes())];
    else if (w === 2 && f === 14) meta.finalizers = [...(meta.finalizers ?? []), text(r.bytes())];
    else return false;
    return true;
  });
  for (const k of Object.keys(meta)) if (meta[k] === "") delete meta[k];
  return meta;
}

function secret(b: Uint8Array): Record<string, unknown> {
  const r = new Reader(b);
  const out: Record<string, any> = { apiVersion: "v1", kind: "Secret" };
  r.each((f, w) => {
    if (w !== 2 && !(w === 0 && f === 5)) return false;
    if (f === 1) out.metadata = objectMeta(r.bytes());
    else if (f === 2) {
      const [k, v] = mapEntry(r.bytes(), true);
      out.data = { ...(out.data ?? {}), [k]: v };
    } else if (f === 3) out.type = text(r.bytes());
    else if (f === 4) {
      const [k, v] = mapEntry(r.bytes(), false);
      out.stringData = { ...(out.stringData ?? {}), [k]: v };
    } else if (f === 5) out.immutable = r.varint() !== 0n;
    else return false;
    return true;
  });
  return out;
}

function deleteOptions(b: Uint8Array): Record<string, unknown> {
  const r = new Reader(b);
  const out: Record<string, any> = {};
  r.each((f, w) => {
    if (f === 1 && w === 0) out.gracePeriodSeconds = Number(r.varint());
    else if (f === 2 && w === 2) {
      const p = new Reader(r.bytes());
      const pre: Record<string, string> = {};
      p.each((pf, pw) => {
        if (pw !== 2) return false;
        if (pf === 1) pre.uid = text(p.bytes());
        else if (pf === 2) pre.resourceVersion = text(p.bytes());
        else return false;
        return true;
      });
      out.preconditions = pre;
    } else if (f === 3 && w === 0) out.orphanDependents = r.varint() !== 0n;
    else if (f === 4 && w === 2) out.propagationPolicy = text(r.bytes());
    else if (f === 5 && w === 2) out.dryRun = [...(out.dryRun ?? []), text(r.bytes())];
    else return false;
    return true;
  });
  return out;
}

const DECODERS: Record<string, (b: Uint8Array) => Record<string, unknown>> = {
  "v1/Secret": secret,
  "v1/DeleteOptions": deleteOptions,
  "meta.k8s.io/v1/DeleteOptions": deleteOptions,
};

/** Decodes a protobuf-enveloped body into the JSON form of the object. */
export function decodeProtobuf(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || !MAGIC.every((m, i) => body[i] === m)) {
    throw new ApiError(
      415,
      "UnsupportedMediaType",
      "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml",
      {},
    );
  }
  const r = new Reader(body.subarray(4));
  let apiVersion = "";
  let kind = "";
  let raw: Uint8Array = new Uint8Array();
  r.each((f, w) => {
    if (w !== 2) return false;
    if (f === 1) {
      const t = new Reader(r.bytes());
      t.each((tf, tw) => {
        if (tw !== 2) return false;
        if (tf === 1) apiVersion = text(t.bytes());
        else if (tf === 2) kind = text(t.bytes());
        else return false;
        return true;
      });
    } else if (f === 2) raw = r.bytes();
    else return false;
    return true;
  });
  const decoder = DECODERS[`${apiVersion}/${kind}`];
  if (decoder) return decoder(raw);
  throw new ApiError(
    415,
    "UnsupportedMediaType",
    `the test API server decodes protobuf only for Secrets and DeleteOptions, not ${apiVersion}/${kind}; send JSON`,
    {},
  );
}
