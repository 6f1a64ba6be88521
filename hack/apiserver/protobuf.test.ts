import { describe, expect, it } from "@jest/globals";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { decodeProtobuf } from "./protobuf.js";

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** A length-delimited message built field by field. */
function message(build: (w: BinaryWriter) => void): Uint8Array {
  const w = new BinaryWriter();
  build(w);
  return w.finish();
}

const mapEntry = (key: string, value: Uint8Array | string) =>
  message((w) => {
    w.tag(1, WireType.LengthDelimited).string(key);
    if (typeof value === "string") w.tag(2, WireType.LengthDelimited).string(value);
    else w.tag(2, WireType.LengthDelimited).bytes(value);
  });

function envelope(apiVersion: string, kind: string, raw: Uint8Array): Buffer {
  const typeMeta = message((w) =>
    w.tag(1, WireType.LengthDelimited).string(apiVersion).tag(2, WireType.LengthDelimited).string(kind),
  );
  return Buffer.concat([
    MAGIC,
    message((w) => w.tag(1, WireType.LengthDelimited).bytes(typeMeta).tag(2, WireType.LengthDelimited).bytes(raw)),
  ]);
}

describe("decoding a protobuf request body", () => {
  it("reads a Secret with its metadata, labels, owner, data (as base64) and type, skipping unknown fields", () => {
    const owner = message((w) =>
      w
        .tag(1, WireType.LengthDelimited)
        .string("ReplicaSet")
        .tag(3, WireType.LengthDelimited)
        .string("web")
        .tag(6, WireType.Varint)
        .bool(true),
    );
    const meta = message((w) =>
      w
        .tag(1, WireType.LengthDelimited)
        .string("sh.helm.release.v1.web.v1")
        .tag(3, WireType.LengthDelimited)
        .string("shop")
        .tag(7, WireType.Varint)
        .int64(3)
        .tag(8, WireType.LengthDelimited)
        .bytes(message((t) => t.tag(1, WireType.Varint).int64(1_767_225_600)))
        .tag(11, WireType.LengthDelimited)
        .bytes(mapEntry("owner", "helm"))
        .tag(13, WireType.LengthDelimited)
        .bytes(owner)
        .tag(99, WireType.Varint)
        .int32(7),
    );
    const secret = message((w) =>
      w
        .tag(1, WireType.LengthDelimited)
        .bytes(meta)
        .tag(2, WireType.LengthDelimited)
        .bytes(mapEntry("release", new Uint8Array([1, 2, 3])))
        .tag(3, WireType.LengthDelimited)
        .string("helm.sh/release.v1")
        .tag(5, WireType.Varint)
        .bool(true),
    );
    expect(decodeProtobuf(envelope("v1", "Secret", secret))).toEqual({
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "sh.helm.release.v1.web.v1",
        namespace: "shop",
        generation: 3,
        creationTimestamp: "2026-01-01T00:00:00Z",
        labels: { owner: "helm" },
        ownerReferences: [{ kind: "ReplicaSet", name: "web", controller: true }],
      },
      data: { release: Buffer.from([1, 2, 3]).toString("base64") },
      type: "helm.sh/release.v1",
      immutable: true,
    });
  });

  it("reads DeleteOptions with preconditions and a propagation policy", () => {
    const pre = message((w) => w.tag(1, WireType.LengthDelimited).string("uid-1"));
    const opts = message((w) =>
      w
        .tag(1, WireType.Varint)
        .int64(30)
        .tag(2, WireType.LengthDelimited)
        .bytes(pre)
        .tag(4, WireType.LengthDelimited)
        .string("Foreground"),
    );
    expect(decodeProtobuf(envelope("meta.k8s.io/v1", "DeleteOptions", opts))).toEqual({
      gracePeriodSeconds: 30,
      preconditions: { uid: "uid-1" },
      propagationPolicy: "Foreground",
    });
  });

  it.each([
    { name: "a body without the k8s magic is 415", body: Buffer.from("{}"), error: /unknown format/ },
    {
      name: "a kind it does not decode is 415, asking for JSON",
      body: envelope("batch/v1", "Job", new Uint8Array()),
      error: /not batch\/v1\/Job; send JSON/,
    },
  ])("$name", ({ body, error }) => {
    expect(() => decodeProtobuf(body)).toThrow(error);
  });

  it("refuses a Pod with 415: kinds beyond helm's release storage are kube-apiserver's to decode", () => {
    const meta = message((w) => w.tag(1, WireType.LengthDelimited).string("web-a"));
    const pod = message((w) => w.tag(1, WireType.LengthDelimited).bytes(meta));
    expect(() => decodeProtobuf(envelope("v1", "Pod", pod))).toThrow(/not v1\/Pod; send JSON/);
  });
});
