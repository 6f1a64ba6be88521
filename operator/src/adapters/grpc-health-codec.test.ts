import { describe, expect, it } from "@jest/globals";
import { decodeHealthCheckResponse, encodeHealthCheckRequest } from "./grpc-health-codec.js";

const hex = (b: Buffer) => b.toString("hex");
const framed = (...msg: number[]) => Buffer.from([0, 0, 0, 0, msg.length, ...msg]);

describe("encodeHealthCheckRequest", () => {
  it.each([
    ["the overall health as an empty message", "", "0000000000"],
    ["a service as field 1", "a", "00000000030a0161"],
    ["a 200-byte service with a two-byte length", "x".repeat(200), `00000000cb0ac801${"78".repeat(200)}`],
  ])("frames %s", (_n, service, expected) => expect(hex(encodeHealthCheckRequest(service))).toBe(expected));
});

describe("decodeHealthCheckResponse", () => {
  it.each([
    ["SERVING", framed(0x08, 0x01), 1],
    ["NOT_SERVING", framed(0x08, 0x02), 2],
    ["an absent status as UNKNOWN", framed(), 0],
    ["the last of two status fields", framed(0x08, 0x01, 0x08, 0x02), 2],
    ["a status in a non-minimal varint", framed(0x08, 0x81, 0x00), 1],
    [
      "a status after unknown fields of every wire type",
      framed(0x10, 0x05, 0x1a, 0x02, 0x61, 0x62, 0x21, 1, 2, 3, 4, 5, 6, 7, 8, 0x2d, 1, 2, 3, 4, 0x08, 0x03),
      3,
    ],
  ])("reads %s", (_n, body, status) => expect(decodeHealthCheckResponse(body)).toBe(status));

  it.each([
    ["an empty body", Buffer.alloc(0), "gRPC: no response message"],
    ["a compressed message", Buffer.from([1, 0, 0, 0, 0]), "gRPC: compressed response message"],
    ["a truncated message", Buffer.from([0, 0, 0, 0, 5, 0x08]), "gRPC: truncated message"],
    ["two messages", Buffer.concat([framed(0x08, 0x01), framed(0x08, 0x02)]), "gRPC: more than one response message"],
    ["a varint cut short", framed(0x08, 0x81), "gRPC: invalid HealthCheckResponse"],
    ["a length past the end", framed(0x1a, 0x05, 0x61), "gRPC: invalid HealthCheckResponse"],
    ["an unknown wire type", framed(0x0b), "gRPC: invalid HealthCheckResponse"],
    // Regressions from the differential test against protobuf-es (test/fuzz/grpc-health-differential.test.ts):
    // each was once read as SERVING, or as a status protobuf-es reads as SERVING.
    [
      "field number 0 after a SERVING status",
      framed(0x08, 0x01, 0x01, 0, 0, 0, 0, 0, 0, 0, 0),
      "gRPC: invalid HealthCheckResponse",
    ],
    [
      "a status field sent as fixed64 after a SERVING one",
      framed(0x08, 0x01, 0x09, 0, 0, 0, 0, 0, 0, 0, 0),
      "gRPC: invalid HealthCheckResponse",
    ],
    ["a status field sent length-delimited (packed)", framed(0x0a, 0x01, 0x01), "gRPC: invalid HealthCheckResponse"],
    [
      "a status past 2^31-1 (2^32+1, which int32 truncation reads as SERVING)",
      framed(0x08, 0x81, 0x80, 0x80, 0x80, 0x10),
      "gRPC: invalid HealthCheckResponse",
    ],
    [
      "a negative status",
      framed(0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
      "gRPC: invalid HealthCheckResponse",
    ],
  ])("refuses %s", (_n, body, message) => expect(decodeHealthCheckResponse(body)).toEqual(new Error(message)));
});
