// helm 4 (client-go 1.35) stores releases through a typed clientset that encodes request bodies
// as Kubernetes protobuf, which the API test server does not decode yet. This proxy sits between
// helm and the server and re-encodes exactly those bodies (Secret, DeleteOptions) as JSON;
// every other request passes through untouched. Anything else in protobuf gets a 415, as a
// server that does not speak it would answer. Drop the proxy once the server decodes protobuf.
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]); // "k8s\0"

interface Field {
  no: number;
  wire: number;
  varint?: bigint;
  bytes?: Buffer;
}

function readVarint(buf: Buffer, pos: number): [bigint, number] {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    if (pos >= buf.length) throw new Error("protobuf: truncated varint");
    const b = buf[pos++]!;
    result |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [result, pos];
    shift += 7n;
  }
}

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const [key, p1] = readVarint(buf, pos);
    pos = p1;
    const no = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (wire === 0) {
      const [v, p2] = readVarint(buf, pos);
      out.push({ no, wire, varint: v });
      pos = p2;
    } else if (wire === 2) {
      const [len, p2] = readVarint(buf, pos);
      const end = p2 + Number(len);
      if (end > buf.length) throw new Error("protobuf: truncated field");
      out.push({ no, wire, bytes: buf.subarray(p2, end) });
      pos = end;
    } else if (wire === 1) {
      out.push({ no, wire, bytes: buf.subarray(pos, pos + 8) });
      pos += 8;
    } else if (wire === 5) {
      out.push({ no, wire, bytes: buf.subarray(pos, pos + 4) });
      pos += 4;
    } else {
      throw new Error(`protobuf: unsupported wire type ${wire}`);
    }
  }
  return out;
}

const str = (f: Field): string => f.bytes!.toString("utf8");

function mapEntry(f: Field): [string, Buffer] {
  let key = "";
  let value: Buffer = Buffer.alloc(0);
  for (const e of fields(f.bytes!)) {
    if (e.no === 1) key = str(e);
    if (e.no === 2) value = e.bytes!;
  }
  return [key, value];
}

function time(f: Field): string {
  let seconds = 0n;
  for (const t of fields(f.bytes!)) if (t.no === 1) seconds = t.varint!;
  return new Date(Number(seconds) * 1000).toISOString().replace(/\.000Z$/, "Z");
}

// k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto, ObjectMeta: the fields helm's release Secrets carry.
function objectMeta(buf: Buffer): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  const labels: Record<string, string> = {};
  const annotations: Record<string, string> = {};
  const finalizers: string[] = [];
  for (const f of fields(buf)) {
    if (f.no === 1) meta.name = str(f);
    else if (f.no === 2) meta.generateName = str(f);
    else if (f.no === 3) meta.namespace = str(f);
    else if (f.no === 5) meta.uid = str(f);
    else if (f.no === 6) meta.resourceVersion = str(f);
    else if (f.no === 7) meta.generation = Number(f.varint);
    else if (f.no === 8) meta.creationTimestamp = time(f);
    else if (f.no === 11) labels[mapEntry(f)[0]] = mapEntry(f)[1].toString("utf8");
    else if (f.no === 12) annotations[mapEntry(f)[0]] = mapEntry(f)[1].toString("utf8");
    else if (f.no === 14) finalizers.push(str(f));
    // managedFields (17) and the rest are the server's business: left out.
  }
  if (Object.keys(labels).length) meta.labels = labels;
  if (Object.keys(annotations).length) meta.annotations = annotations;
  if (finalizers.length) meta.finalizers = finalizers;
  return meta;
}

// k8s.io/api/core/v1/generated.proto, Secret.
function secret(buf: Buffer): Record<string, unknown> {
  const out: Record<string, unknown> = { apiVersion: "v1", kind: "Secret" };
  const data: Record<string, string> = {};
  const stringData: Record<string, string> = {};
  for (const f of fields(buf)) {
    if (f.no === 1) out.metadata = objectMeta(f.bytes!);
    else if (f.no === 2) data[mapEntry(f)[0]] = mapEntry(f)[1].toString("base64");
    else if (f.no === 3) out.type = str(f);
    else if (f.no === 4) stringData[mapEntry(f)[0]] = mapEntry(f)[1].toString("utf8");
    else if (f.no === 5) out.immutable = f.varint !== 0n;
  }
  if (Object.keys(data).length) out.data = data;
  if (Object.keys(stringData).length) out.stringData = stringData;
  return out;
}

// DeleteOptions: gracePeriodSeconds 1, preconditions 2 {uid 1, resourceVersion 2}, orphanDependents 3, propagationPolicy 4, dryRun 5.
function deleteOptions(buf: Buffer): Record<string, unknown> {
  const out: Record<string, unknown> = { apiVersion: "v1", kind: "DeleteOptions" };
  for (const f of fields(buf)) {
    if (f.no === 1) out.gracePeriodSeconds = Number(BigInt.asIntN(64, f.varint!));
    else if (f.no === 2) {
      const pre: Record<string, string> = {};
      for (const p of fields(f.bytes!)) pre[p.no === 1 ? "uid" : "resourceVersion"] = str(p);
      out.preconditions = pre;
    } else if (f.no === 3) out.orphanDependents = f.varint !== 0n;
    else if (f.no === 4) out.propagationPolicy = str(f);
    else if (f.no === 5) out.dryRun = [...((out.dryRun as string[]) ?? []), str(f)];
  }
  return out;
}

/** Decodes a Kubernetes protobuf body (magic + runtime.Unknown) to JSON, or undefined for kinds this proxy does not know. */
export function protobufToJson(body: Buffer): Record<string, unknown> | undefined {
  if (!body.subarray(0, 4).equals(MAGIC)) throw new Error("protobuf: missing k8s magic prefix");
  let kind = "";
  let raw: Buffer = Buffer.alloc(0);
  for (const f of fields(body.subarray(4))) {
    if (f.no === 1) for (const t of fields(f.bytes!)) if (t.no === 2) kind = str(t);
    if (f.no === 2) raw = f.bytes!;
  }
  if (kind === "Secret") return secret(raw);
  if (kind === "DeleteOptions") return deleteOptions(raw);
  return undefined;
}

export interface Proxy {
  url: string;
  /** Protobuf bodies translated so far, by kind and method, e.g. "POST Secret". */
  translated: string[];
  stop(): Promise<void>;
}

export async function startProtobufToJsonProxy(target: string): Promise<Proxy> {
  const upstream = new URL(target);
  const translated: string[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let body = Buffer.concat(chunks);
      const headers = { ...req.headers };
      if ((headers["content-type"] ?? "").startsWith("application/vnd.kubernetes.protobuf")) {
        const json = protobufToJson(body);
        if (!json) {
          res.writeHead(415, { "content-type": "application/json" });
          res.end(JSON.stringify({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", reason: "UnsupportedMediaType", code: 415, message: "protobuf body of an unknown kind" }));
          return;
        }
        translated.push(`${req.method} ${json.kind}`);
        body = Buffer.from(JSON.stringify(json));
        headers["content-type"] = "application/json";
        headers["content-length"] = String(body.length);
      }
      // Responses in JSON: helm accepts them, since it asks for protobuf or JSON.
      const accept = headers.accept ?? "";
      if (accept.includes("protobuf")) {
        headers.accept = accept.split(",").filter((a) => !a.includes("protobuf")).join(",") || "application/json";
      }
      const up = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      up.on("error", (err) => {
        res.writeHead(502);
        res.end(String(err));
      });
      up.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    translated,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
