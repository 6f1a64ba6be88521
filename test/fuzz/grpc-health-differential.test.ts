// The gRPC health codec (operator/src/adapters/grpc-health-codec.ts) and prober (grpc-prober.ts)
// against references over generated answers: the HealthCheckResponse bytes against protobuf-es
// decoding from the message's descriptor, and whole calls (framing, HTTP status, grpc-status
// trailers) against a @grpc/grpc-js client calling the same local HTTP/2 server. Each case must
// agree or the project must be the stricter one: calling SERVING what the reference does not
// would keep a broken pod in rotation, and fails the test.
//
// The differences allowed, all of them the project refusing or reading less:
//
// | project                                         | reference                                          | why                                         |
// |-------------------------------------------------|----------------------------------------------------|---------------------------------------------|
// | field 1 with a wire type other than varint      | protobuf-es reads a varint there whatever the wire | a status sent as bytes or fixed32 is not a  |
// | (packed, length-delimited, fixed): invalid      | type (it does not check it), so may read SERVING   | status; proto3 parsers treat it as unknown  |
// | a status varint past 2^31-1: invalid            | protobuf-es truncates an enum to int32 (2^32+1     | 2^32+1 is not SERVING; no ServingStatus is  |
// |                                                 | reads as 1, SERVING; 2^64-1 as -1)                 | negative                                    |
// | grpc-status must be digits ("0x0", "", "-0",    | grpc-js takes Number(value): "0x0", "-0", "0.0",   | a status the spec does not define is not OK |
// | "0.0", "1e0" are no status: a failure)          | "" and "1e0" are OK (0) or a code                  |                                             |
// | HTTP status other than 200: a failure           | grpc-js uses grpc-status when present              | gRPC answers are HTTP 200 (the spec)        |
// | a compressed-flag byte other than 0: invalid    | grpc-js takes any flag but 1 as uncompressed       | the probe asks for no compression; 0x02 or  |
// |                                                 | (0x02, 0xff then read SERVING)                     | 0xff is no flag the spec defines            |
// | a second message: invalid                       | grpc-js fails or waits out its deadline            | a unary answer carries one message          |
//
// Both treat a second status field as the last one winning, skip unknown fields of every wire
// type, refuse truncated fields, varints past 10 bytes, wire types 3, 4, 6 and 7, field number 0,
// truncated or doubled messages, and a call with no grpc-status. `npm run fuzz` runs many more.
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { decodeHealthCheckResponse } from "../../operator/src/adapters/grpc-health-codec.js";
import { createGrpcProber } from "../../operator/src/adapters/grpc-prober.js";
import type { RawProbeResult } from "../../operator/src/domain/probe-request.js";
import { fuzzOptions, fuzzRuns, Tally, timeoutFor } from "./fuzz-runs.js";
import { grpcAnswer, healthMessage } from "./grpc-health-arbitraries.js";
import {
  referenceStatus,
  startGrpcServerHarness,
  type GrpcServerHarness,
  type GrpcJsOutcome,
} from "./grpc-reference.js";

const SERVING = 1;

function framed(message: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}

/** The kind of an allowed difference between the codec and protobuf-es, or throws on a dangerous one. */
function compareMessage(message: Buffer): string {
  const project = decodeHealthCheckResponse(framed(message));
  const ref = referenceStatus(message);
  if (project === SERVING && ref !== SERVING)
    throw new Error(`the codec read SERVING where protobuf-es read ${ref instanceof Error ? ref.message : ref}`);
  if (project instanceof Error)
    return ref instanceof Error
      ? "agree: invalid"
      : `stricter: ${project.message} (protobuf-es ${ref === SERVING ? "SERVING" : "another status"})`;
  if (ref instanceof Error) return "stricter: protobuf-es refuses, the codec reads a status that is not SERVING";
  if (project === ref) return `agree: status ${project === SERVING ? "SERVING" : "not SERVING"}`;
  return `differ: the codec reads ${project} where protobuf-es reads ${ref === SERVING ? "SERVING" : ref}`;
}

const documentedMessageKinds = new Set([
  "stricter: gRPC: invalid HealthCheckResponse (protobuf-es SERVING)",
  "stricter: gRPC: invalid HealthCheckResponse (protobuf-es another status)",
]);

/** The kind of an allowed difference between the prober and grpc-js, or throws on a dangerous one. */
function compareCall(project: RawProbeResult, ref: GrpcJsOutcome): string {
  const projectServing = project.kind === "grpc" && project.grpcStatus === 0 && project.servingStatus === SERVING;
  const refServing = ref.ok && ref.status === SERVING;
  if (projectServing && !refServing)
    throw new Error(`the prober read SERVING where grpc-js got ${JSON.stringify(ref)}`);
  if (projectServing) return "agree: SERVING";
  if (!refServing) return "agree: not SERVING";
  if (project.kind === "error") return `stricter: ${project.error.replace(/\d+/g, "N")}`;
  if (project.kind === "grpc")
    return project.grpcStatus !== 0 ? "stricter: a gRPC error status" : "stricter: a status that is not SERVING";
  return `stricter: ${project.kind}`;
}

describe("the gRPC health codec against protobuf-es over generated HealthCheckResponse bytes", () => {
  const runs = fuzzRuns(2000, 100_000);
  it(`never reads SERVING where protobuf-es does not, over ${runs} messages`, () => {
    const tally = new Tally();
    fc.assert(
      fc.property(healthMessage, (m) => tally.add(compareMessage(m), () => m.toString("hex"))),
      fuzzOptions(runs),
    );
    tally.print("gRPC health codec vs protobuf-es:");
    const undocumented = tally.kinds().filter((k) => !k.startsWith("agree: ") && !documentedMessageKinds.has(k));
    expect(undocumented).toEqual([]);
    expect(tally.kinds()).toEqual(expect.arrayContaining(["agree: status SERVING", "agree: invalid"]));
  });
});

describe("the gRPC prober against @grpc/grpc-js over generated answers from a local HTTP/2 server", () => {
  let server: GrpcServerHarness;
  beforeAll(async () => (server = await startGrpcServerHarness()));
  afterAll(() => server?.stop());

  const runs = fuzzRuns(150, 3000);
  // About 25 ms a call: each is a fresh connection for both clients.
  it(
    `never reads SERVING where grpc-js does not, over ${runs} calls`,
    async () => {
      const probe = createGrpcProber();
      const tally = new Tally();
      await fc.assert(
        fc.asyncProperty(grpcAnswer, async (a) => {
          const id = server.answer(a);
          const req = {
            type: "GRPC" as const,
            scheme: "HTTP" as const,
            address: "127.0.0.1",
            port: server.port,
            path: "",
            method: "GET" as const,
            headers: [{ name: "x-case", value: id }],
          };
          const [project, ref] = await Promise.all([probe(req, 10_000, false), server.callGrpcJs(id)]);
          server.forget(id);
          tally.add(compareCall(project, ref), () => `${fc.stringify(a)} → grpc-js ${JSON.stringify(ref)}`);
        }),
        { ...fuzzOptions(runs), timeout: 15_000 },
      );
      tally.print("gRPC prober vs grpc-js:");
      expect(tally.kinds()).toEqual(expect.arrayContaining(["agree: SERVING", "agree: not SERVING"]));
    },
    timeoutFor(runs, 150),
  );
});
