// The references for the gRPC health codec and prober: @bufbuild/protobuf decoding
// grpc.health.v1.HealthCheckResponse from its descriptor, and a @grpc/grpc-js client calling
// Health/Check on a local HTTP/2 server that answers each call with the frames, headers and
// trailers a case gives.
import { create, createFileRegistry, fromBinary, type DescMessage } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Client, credentials, Metadata, type ServiceError } from "@grpc/grpc-js";
import { constants, createServer, type Http2Server, type ServerHttp2Stream } from "node:http2";
import type { AddressInfo } from "node:net";

const healthFile = create(FileDescriptorProtoSchema, {
  name: "grpc/health/v1/health.proto",
  package: "grpc.health.v1",
  syntax: "proto3",
  messageType: [
    {
      name: "HealthCheckResponse",
      field: [
        {
          name: "status",
          number: 1,
          type: 14,
          label: 1,
          typeName: ".grpc.health.v1.HealthCheckResponse.ServingStatus",
          jsonName: "status",
        },
      ],
      enumType: [
        {
          name: "ServingStatus",
          value: ["UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"].map((name, number) => ({ name, number })),
        },
      ],
    },
  ],
});
const responseSchema: DescMessage = createFileRegistry(healthFile, () => undefined).getMessage(
  "grpc.health.v1.HealthCheckResponse",
)!;

/** The status protobuf-es reads from a HealthCheckResponse's bytes, or why it refuses them. */
export function referenceStatus(message: Uint8Array): number | Error {
  try {
    return (fromBinary(responseSchema, message) as unknown as { status: number }).status;
  } catch (err) {
    return err as Error;
  }
}

/** How the server answers one call. */
export interface GrpcAnswer {
  httpStatus: number;
  contentType: string | undefined;
  /** The response body (length-prefixed messages), in writes. */
  pieces: Buffer[];
  /** "trailers" ends the stream with `trailers`; "trailers-only" sends them in the head, no body. */
  ending: "trailers" | "trailers-only" | "no-trailers" | "reset" | "destroy";
  trailers: Record<string, string>;
}

export type GrpcJsOutcome = { ok: true; status: number } | { ok: false; code: number; details: string };

export interface GrpcServerHarness {
  port: number;
  /** Registers an answer; the call carries the id as x-case metadata. */
  answer(a: GrpcAnswer): string;
  forget(id: string): void;
  /** The grpc-js client's view of one call answered with `id`. */
  callGrpcJs(id: string): Promise<GrpcJsOutcome>;
  stop(): Promise<void>;
}

export async function startGrpcServerHarness(): Promise<GrpcServerHarness> {
  const answers = new Map<string, GrpcAnswer>();
  let next = 1;
  const server: Http2Server = createServer();
  server.on("sessionError", () => undefined);
  server.on("stream", (stream, headers) => {
    stream.on("error", () => undefined);
    const a = answers.get(String(headers["x-case"]));
    if (!a) return void stream.close(constants.NGHTTP2_REFUSED_STREAM);
    // The request message is read and dropped: the answer does not depend on it.
    stream.on("data", () => undefined);
    try {
      respond(stream, a);
    } catch {
      // node:http2 refuses some generated header values; both clients then see the same reset.
      stream.close(constants.NGHTTP2_INTERNAL_ERROR);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    answer: (a) => {
      const id = String(next++);
      answers.set(id, a);
      return id;
    },
    forget: (id) => answers.delete(id),
    // A client per call: a channel whose connection the server dropped reconnects only after a back-off.
    callGrpcJs: (id) =>
      new Promise((resolve) => {
        const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
        const metadata = new Metadata();
        metadata.set("x-case", id);
        client.makeUnaryRequest<string, number>(
          "/grpc.health.v1.Health/Check",
          () => Buffer.alloc(0),
          (b: Buffer) => {
            const status = referenceStatus(b);
            if (status instanceof Error) throw status;
            return status;
          },
          "",
          metadata,
          // grpc-js waits out the deadline on some malformed answers (a second message): a call
          // that has not ended in a second on loopback is not SERVING either way.
          { deadline: Date.now() + 1000 },
          (err: ServiceError | null, value?: number) => {
            client.close();
            resolve(err ? { ok: false, code: err.code, details: err.details } : { ok: true, status: value ?? -1 });
          },
        );
      }),
    stop: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function respond(stream: ServerHttp2Stream, a: GrpcAnswer): void {
  const head: Record<string, string | number> = { ":status": a.httpStatus };
  if (a.contentType !== undefined) head["content-type"] = a.contentType;
  if (a.ending === "trailers-only") return void stream.respond({ ...head, ...a.trailers }, { endStream: true });
  stream.respond(head, { waitForTrailers: a.ending === "trailers" });
  if (a.ending === "trailers") {
    stream.once("wantTrailers", () => {
      try {
        stream.sendTrailers(a.trailers);
      } catch {
        stream.close(constants.NGHTTP2_INTERNAL_ERROR);
      }
    });
  }
  for (const p of a.pieces) stream.write(p);
  if (a.ending === "reset") return void stream.close(constants.NGHTTP2_INTERNAL_ERROR);
  if (a.ending === "destroy") return void stream.session?.destroy();
  stream.end();
}
