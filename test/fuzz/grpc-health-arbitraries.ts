// Generated gRPC health answers: HealthCheckResponse bytes (status fields repeated, unknown fields
// of every wire type, wrong wire types, overlong and overflowing varints, packed encodings,
// truncation), their length-prefixed framing (compressed flag, wrong lengths, two messages), and
// the HTTP/2 answer around them (HTTP status, content-type, grpc-status trailers or trailers-only).
import fc from "fast-check";
import type { GrpcAnswer } from "./grpc-reference.js";

const varint = (n: bigint): number[] => {
  const out: number[] = [];
  let v = BigInt.asUintN(64, n);
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return out;
};

/** A varint's bytes: mostly small values, sometimes overflowing, negative, overlong or cut short. */
const varintBytes = fc.oneof(
  { arbitrary: fc.integer({ min: 0, max: 4 }).map((n) => varint(BigInt(n))), weight: 10 },
  {
    arbitrary: fc
      .constantFrom(
        2n ** 31n,
        2n ** 32n + 1n,
        2n ** 32n,
        2n ** 53n + 1n,
        2n ** 63n,
        -1n,
        -(2n ** 31n) + 1n,
        2n ** 64n - 1n,
      )
      .map(varint),
    weight: 2,
  },
  // Non-minimal encodings of a small value (protobuf accepts them), and varints past 10 bytes.
  {
    arbitrary: fc
      .tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 1, max: 10 }))
      .map(([n, pad]) => [...Array.from({ length: pad }, (_, i) => (i === 0 ? n | 0x80 : 0x80)), 0]),
    weight: 1,
  },
  {
    arbitrary: fc.constantFrom(
      [0x80],
      [0xff, 0xff],
      [0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01],
    ),
    weight: 1,
  },
);

const fieldNumber = fc.oneof(
  { arbitrary: fc.constant(1), weight: 6 },
  { arbitrary: fc.constantFrom(2, 3, 15, 16, 2047, 536_870_911), weight: 3 },
  { arbitrary: fc.constant(0), weight: 1 },
);

const field = fc
  .tuple(
    fieldNumber,
    fc.oneof(
      { arbitrary: fc.constant(0), weight: 6 },
      { arbitrary: fc.constantFrom(1, 2, 5), weight: 3 },
      { arbitrary: fc.constantFrom(3, 4, 6, 7), weight: 1 },
    ),
  )
  .chain(([no, wt]) => {
    const tag = varint(BigInt(no * 8 + wt));
    switch (wt) {
      case 0:
        return varintBytes.map((v) => [...tag, ...v]);
      case 1:
      case 5: {
        const size = wt === 1 ? 8 : 4;
        return fc
          .tuple(
            fc.integer({ min: 0, max: 255 }),
            fc.oneof({ arbitrary: fc.constant(size), weight: 6 }, { arbitrary: fc.constant(size - 1), weight: 1 }),
          )
          .map(([b, n]) => [...tag, ...Array.from({ length: n }, () => b)]);
      }
      case 2:
        // A length-delimited field: bytes (for field 1: a packed list of statuses), or a length past or short of its end.
        return fc
          .tuple(fc.array(varintBytes, { maxLength: 3 }), fc.constantFrom(0, 0, 0, 1, -1))
          .map(([items, delta]) => {
            const body = items.flat();
            return [...tag, ...varint(BigInt(Math.max(0, body.length + delta))), ...body];
          });
      default:
        return fc.constant(tag);
    }
  });

export const healthMessage = fc.array(field, { maxLength: 4 }).map((fs) => Buffer.from(fs.flat()));

/** Framing around a message: mostly right, sometimes compressed, misframed, doubled or cut. */
export const framedBody = fc
  .record({
    // Often a plain SERVING or NOT_SERVING, so that calls reach both verdicts.
    message: fc.oneof(
      { arbitrary: fc.constantFrom(Buffer.from([0x08, 0x01]), Buffer.from([0x08, 0x02])), weight: 2 },
      { arbitrary: healthMessage, weight: 2 },
    ),
    flag: fc.oneof(
      { arbitrary: fc.constant(0), weight: 12 },
      { arbitrary: fc.constantFrom(1, 2, 0x80, 0xff), weight: 1 },
    ),
    lengthDelta: fc.oneof(
      { arbitrary: fc.constant(0), weight: 12 },
      { arbitrary: fc.constantFrom(-1, 1, 2 ** 31, 2 ** 32 - 100), weight: 1 },
    ),
    second: fc.oneof({ arbitrary: fc.constant(null), weight: 12 }, { arbitrary: healthMessage, weight: 1 }),
    cut: fc.oneof({ arbitrary: fc.constant(null), weight: 12 }, { arbitrary: fc.nat(), weight: 1 }),
    empty: fc.oneof({ arbitrary: fc.constant(false), weight: 20 }, { arbitrary: fc.constant(true), weight: 1 }),
  })
  .map(({ message, flag, lengthDelta, second, cut, empty }) => {
    if (empty) return Buffer.alloc(0);
    const frame = (m: Buffer, f: number, d: number) => {
      const head = Buffer.alloc(5);
      head[0] = f;
      head.writeUInt32BE(Math.max(0, Math.min(2 ** 32 - 1, m.length + d)), 1);
      return Buffer.concat([head, m]);
    };
    const body = Buffer.concat([frame(message, flag, lengthDelta), ...(second ? [frame(second, 0, 0)] : [])]);
    return cut === null ? body : body.subarray(0, cut % (body.length + 1));
  });

const grpcStatusValue = fc.oneof(
  { arbitrary: fc.constant("0"), weight: 10 },
  { arbitrary: fc.constantFrom("1", "2", "5", "12", "14", "16", "17", "99"), weight: 2 },
  { arbitrary: fc.constantFrom("00", "0x0", "", "-0", "0.0", "+0", "1e0", "0 ", "OK"), weight: 2 },
);

export const grpcAnswer: fc.Arbitrary<GrpcAnswer> = fc
  .record({
    httpStatus: fc.oneof(
      { arbitrary: fc.constant(200), weight: 12 },
      { arbitrary: fc.constantFrom(204, 404, 500, 503), weight: 1 },
    ),
    contentType: fc.oneof(
      { arbitrary: fc.constant<string | undefined>("application/grpc"), weight: 10 },
      { arbitrary: fc.constantFrom<string | undefined>("application/grpc+proto", "text/html", undefined), weight: 1 },
    ),
    body: framedBody,
    cuts: fc.array(fc.nat(), { maxLength: 3 }),
    ending: fc.oneof(
      { arbitrary: fc.constant<GrpcAnswer["ending"]>("trailers"), weight: 10 },
      {
        arbitrary: fc.constantFrom<GrpcAnswer["ending"]>("trailers-only", "no-trailers", "reset", "destroy"),
        weight: 2,
      },
    ),
    status: fc.option(grpcStatusValue, { freq: 12 }),
    message: fc.option(fc.constantFrom("", "all good", "%20x", "bad%"), { freq: 2 }),
  })
  .map(({ httpStatus, contentType, body, cuts, ending, status, message }) => {
    const at = [...new Set(cuts.map((c) => (body.length ? c % body.length : 0)).filter((c) => c > 0))].sort(
      (a, b) => a - b,
    );
    const pieces = [0, ...at].map((start, i) => body.subarray(start, at[i] ?? body.length)).filter((p) => p.length > 0);
    const trailers: Record<string, string> = {};
    if (status !== null) trailers["grpc-status"] = status;
    if (message !== null) trailers["grpc-message"] = message;
    return {
      httpStatus,
      contentType,
      pieces,
      ending,
      trailers,
      [fc.toStringMethod]: () =>
        `HTTP ${httpStatus} ${contentType ?? "-"} ${ending} ${JSON.stringify(trailers)} body ${body.toString("hex")} in ${pieces.length} pieces`,
    };
  });
