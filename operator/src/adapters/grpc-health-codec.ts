// The few bytes of grpc.health.v1 a probe needs, by hand rather than with a protobuf library:
//   message HealthCheckRequest  { string service = 1; }
//   message HealthCheckResponse { ServingStatus status = 1; }   // enum: a varint
// and gRPC's length-prefixed message framing (1 byte compressed flag, 4 bytes big-endian length).

/** The framed request: the service as field 1 (omitted when empty, as proto3 does). */
export function encodeHealthCheckRequest(service: string): Buffer {
  const name = Buffer.from(service, "utf8");
  const body =
    name.length === 0 ? Buffer.alloc(0) : Buffer.concat([Buffer.from([0x0a]), encodeVarint(name.length), name]);
  const frame = Buffer.allocUnsafe(5 + body.length);
  frame[0] = 0;
  frame.writeUInt32BE(body.length, 1);
  body.copy(frame, 5);
  return frame;
}

/**
 * The status of the one message in a response body (all DATA frames concatenated): a number
 * (0 UNKNOWN when the field is absent, as proto3 encodes it), or why the body is not one.
 */
export function decodeHealthCheckResponse(body: Buffer): number | Error {
  if (body.length < 5) return new Error(body.length === 0 ? "gRPC: no response message" : "gRPC: truncated message");
  if (body[0] !== 0) return new Error("gRPC: compressed response message");
  const length = body.readUInt32BE(1);
  if (body.length !== 5 + length)
    return new Error(body.length < 5 + length ? "gRPC: truncated message" : "gRPC: more than one response message");
  return decodeStatus(body.subarray(5));
}

const MAX_FIELD_NUMBER = 2 ** 29 - 1;
const MAX_STATUS = 2 ** 31 - 1;

function decodeStatus(msg: Buffer): number | Error {
  let status = 0;
  let at = 0;
  while (at < msg.length) {
    const tag = readVarint(msg, at);
    if (!tag) return new Error("gRPC: invalid HealthCheckResponse");
    at = tag.next;
    const field = Math.floor(tag.value / 8);
    const wireType = tag.value % 8;
    // Field 0 does not exist; field 1 is the status, a varint only: read as anything else (as
    // protobuf-es does, it does not check the wire type) it could say SERVING by accident.
    if (field === 0 || field > MAX_FIELD_NUMBER || (field === 1 && wireType !== 0))
      return new Error("gRPC: invalid HealthCheckResponse");
    if (wireType === 0) {
      const v = readVarint(msg, at);
      if (!v) return new Error("gRPC: invalid HealthCheckResponse");
      // A ServingStatus is a non-negative int32: anything past it is no status (protobuf-es
      // would truncate 2^32+1 to 1, SERVING).
      if (field === 1 && v.value > MAX_STATUS) return new Error("gRPC: invalid HealthCheckResponse");
      if (field === 1) status = v.value;
      at = v.next;
    } else if (wireType === 2) {
      const len = readVarint(msg, at);
      if (!len || len.next + len.value > msg.length) return new Error("gRPC: invalid HealthCheckResponse");
      at = len.next + len.value;
    } else if (wireType === 1 || wireType === 5) {
      at += wireType === 1 ? 8 : 4;
      if (at > msg.length) return new Error("gRPC: invalid HealthCheckResponse");
    } else {
      return new Error("gRPC: invalid HealthCheckResponse");
    }
  }
  return status;
}

function encodeVarint(n: number): Buffer {
  const bytes: number[] = [];
  while (n >= 0x80) {
    bytes.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  bytes.push(n);
  return Buffer.from(bytes);
}

/** A varint at `at` (at most 10 bytes); values past 2^53 lose precision, which no field here reaches. */
function readVarint(buf: Buffer, at: number): { value: number; next: number } | undefined {
  let value = 0;
  let scale = 1;
  for (let i = at; i < buf.length && i < at + 10; i++) {
    const b = buf[i] as number;
    value += (b & 0x7f) * scale;
    if (b < 0x80) return { value, next: i + 1 };
    scale *= 128;
  }
  return undefined;
}
