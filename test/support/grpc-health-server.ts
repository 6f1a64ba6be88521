// A real gRPC server (@grpc/grpc-js) implementing grpc.health.v1.Health/Check, for the
// probers' tests: an independent implementation of the protocol the operator's hand-written
// client speaks. Each service name answers what the test set for it:
//   a ServingStatus (SERVING, NOT_SERVING, SERVICE_UNKNOWN, UNKNOWN), "hang" (never answers),
//   a status after a real delay, or a gRPC error code (the call fails with it); a service never set fails with NOT_FOUND,
//   as the reference health server does.
import {
  Metadata,
  Server,
  ServerCredentials,
  status as grpcStatus,
  type ServerUnaryCall,
  type sendUnaryData,
  type ServiceDefinition,
} from "@grpc/grpc-js";

export const SERVING_STATUS = { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } as const;
export type HealthAnswer =
  keyof typeof SERVING_STATUS | "hang" | { error: number } | { status: keyof typeof SERVING_STATUS; afterMs: number };

export interface SeenCall {
  service: string;
  metadata: Record<string, string>;
  authority: string;
}

export interface GrpcHealthServer {
  port: number;
  /** What a service name answers ("" is the server's overall health). */
  set(service: string, answer: HealthAnswer): void;
  calls: SeenCall[];
  close(): Promise<void>;
}

const healthService: ServiceDefinition = {
  Check: {
    path: "/grpc.health.v1.Health/Check",
    requestStream: false,
    responseStream: false,
    // An object, not the bare string: grpc-js takes a falsy request ("") for no request at all.
    requestSerialize: (r: { service: string }) => Buffer.from(r.service),
    requestDeserialize: (b: Buffer) => ({ service: decodeService(b) }),
    // status = 1, a varint; proto3 leaves out the default 0.
    responseSerialize: (status: number) => (status === 0 ? Buffer.alloc(0) : Buffer.from([0x08, status])),
    responseDeserialize: (b: Buffer) => b[1] ?? 0,
  },
};

export async function startGrpcHealthServer(
  opts: { tls?: { key: string; cert: string }; host?: string } = {},
): Promise<GrpcHealthServer> {
  const answers = new Map<string, HealthAnswer>([["", "SERVING"]]);
  const calls: SeenCall[] = [];
  const hanging = new Set<ServerUnaryCall<{ service: string }, number>>();
  const server = new Server();
  server.addService(healthService, {
    Check: (call: ServerUnaryCall<{ service: string }, number>, callback: sendUnaryData<number>) => {
      const metadata = Object.fromEntries(Object.entries(call.metadata.getMap()).map(([k, v]) => [k, String(v)]));
      calls.push({ service: call.request.service, metadata, authority: call.getHost() });
      const answer = answers.get(call.request.service) ?? { error: grpcStatus.NOT_FOUND };
      if (answer === "hang") return void hanging.add(call);
      if (typeof answer === "string") return callback(null, SERVING_STATUS[answer]);
      if ("error" in answer)
        return callback({ code: answer.error, details: "as the test set", metadata: new Metadata() });
      setTimeout(() => callback(null, SERVING_STATUS[answer.status]), answer.afterMs);
    },
  });
  const creds = opts.tls
    ? ServerCredentials.createSsl(null, [
        { private_key: Buffer.from(opts.tls.key), cert_chain: Buffer.from(opts.tls.cert) },
      ])
    : ServerCredentials.createInsecure();
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${opts.host ?? "127.0.0.1"}:0`, creds, (err, p) => (err ? reject(err) : resolve(p))),
  );
  return {
    port,
    calls,
    set: (service, answer) => void answers.set(service, answer),
    close: () =>
      new Promise<void>((resolve) => {
        server.forceShutdown();
        hanging.clear();
        resolve();
      }),
  };
}

/** HealthCheckRequest { string service = 1; } as the server reads it. */
function decodeService(b: Buffer): string {
  let at = 0;
  let service = "";
  while (at < b.length) {
    const tag = b[at++] as number;
    let len = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = b[at++] as number;
      len += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) break;
    }
    if (tag >> 3 === 1 && (tag & 7) === 2) service = b.subarray(at, at + len).toString("utf8");
    at += (tag & 7) === 2 ? len : 0;
  }
  return service;
}
