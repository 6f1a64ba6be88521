// Generated HTTP/1.x responses for the differential test: mostly well-formed, with each fault
// a probe might meet drawn now and then (framing conflicts, chunk syntax, control bytes, bare LF
// and CR, obs-fold, oversized heads, early close, bodies past 64 KiB), so both agreeing and
// disagreeing cases come up in every run.
import fc from "fast-check";

export interface HttpCase {
  wire: Buffer;
  /** Where the wire is cut into writes/reads. */
  pieces: Buffer[];
  method: "GET" | "HEAD";
  keepBody: boolean;
  /** The server closes after the last byte (else it holds the connection). */
  close: boolean;
}

/** Mostly `value`, now and then one of `rare`: faults are drawn rarely enough that most cases stay well-formed. */
const oftenWeighted =
  (weight: number) =>
  <T>(value: T, ...rare: T[]) =>
    fc.oneof(
      { arbitrary: fc.constant(value), weight },
      { arbitrary: fc.constantFrom(...(rare.length ? rare : [value])), weight: 1 },
    );
const often = oftenWeighted(12);

const eol = oftenWeighted(60)("\r\n", "\n", "\r", "\r\r\n", "\n\r");

const version = often(
  "HTTP/1.1",
  "HTTP/1.0",
  "HTTP/1.1",
  "HTTP/2.0",
  "HTTP/1.2",
  "http/1.1",
  "HTTP/1.1 ",
  "HTTP/11",
  "HTTP/1.x",
  "HTTP/0.9",
);

const code = fc.oneof(
  { arbitrary: fc.constantFrom("200", "200", "204", "301", "404", "500", "503"), weight: 8 },
  { arbitrary: fc.integer({ min: 100, max: 999 }).map(String), weight: 2 },
  { arbitrary: fc.constantFrom("099", "000", "1000", "20", "2x0", " 200", "２00", "-20", "1e2"), weight: 1 },
);

const reason = often(
  " OK",
  "",
  " ",
  " Some Reason",
  " with\x00nul",
  " tab\there",
  " obs\x80text",
  " del\x7f",
  " vt\x0b",
  " cr\rhere",
  "OK",
);

const token = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,12}$/);
const fieldValue = fc.stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,20}[\x21-\x7e])?$/);

/** A header line without its line ending: ordinary, or one of the faults. */
const plainHeader = fc.oneof(
  { arbitrary: fc.tuple(token, fieldValue).map(([n, v]) => `X-${n}: ${v}`), weight: 30 },
  {
    arbitrary: fc.constantFrom(
      "X-No-Colon",
      "Bad Name: v",
      "X-Space : v",
      " obs-fold continuation",
      "\tobs-fold continuation",
      "X-Nul: a\x00b",
      "X-Ctl: a\x01b",
      "X-Cr: a\rb",
      ": empty name",
      "X-\x7f: v",
      "X-Obs: \x80\xff",
      "X-Tab:\tv\t",
      "X-Empty:",
      "X-Lf: a\nb",
    ),
    weight: 2,
  },
  { arbitrary: fc.integer({ min: 1000, max: 17_500 }).map((n) => `X-Big: ${"a".repeat(n)}`), weight: 1 },
);

const contentLengthValue = (n: number) =>
  fc.oneof(
    { arbitrary: fc.constant(String(n)), weight: 20 },
    {
      arbitrary: fc.constantFrom(
        String(n + 1),
        String(Math.max(0, n - 1)),
        `0${n}`,
        ` ${n} `,
        `+${n}`,
        `${n},${n}`,
        `${n}, ${n}`,
        "",
        "-1",
        "0x5",
        "99999999999999999999",
        "18446744073709551616",
        "9007199254740993",
        "5 5",
        `${n}\x00`,
      ),
      weight: 2,
    },
  );

const transferEncoding = often(
  "chunked",
  "Chunked",
  "CHUNKED",
  "gzip, chunked",
  "chunked, gzip",
  "identity",
  "gzip",
  "chunked ",
  ",chunked",
  "chunked,",
  "chunked, chunked",
  "x-chunked",
  "chunked;q=1",
);

/** Body bytes: mostly short, sometimes past 64 KiB. */
const bodyBytes = fc.oneof(
  { arbitrary: fc.uint8Array({ maxLength: 24 }).map((a) => Buffer.from(a)), weight: 6 },
  { arbitrary: fc.string({ maxLength: 40 }).map((s) => Buffer.from(s, "utf8")), weight: 3 },
  {
    arbitrary: fc
      .tuple(fc.integer({ min: 60 * 1024, max: 70 * 1024 }), fc.integer({ min: 0x20, max: 0x7e }))
      .map(([n, b]) => Buffer.alloc(n, b)),
    weight: 1,
  },
);

const chunkSize = (n: number) =>
  often(
    n.toString(16),
    n.toString(16).toUpperCase(),
    `00${n.toString(16)}`,
    `${n.toString(16)} `,
    ` ${n.toString(16)}`,
    `${n.toString(16)}\t`,
    `0x${n.toString(16)}`,
    "",
    "g",
    (n + 1).toString(16),
    "1".repeat(17),
    "fffffffff",
  );
const chunkExt = often(
  "",
  ";a=b",
  ";a",
  ';a="q s"',
  "; a=b",
  ";a =b",
  ";a=b;c",
  ";\x00",
  ";a=b c",
  ";a=\x7f",
  ';a="open',
  ";" + "x".repeat(1100),
);
const chunkDataEnd = often("\r\n", "\n", "", "\r\r\n", "xx", "\r");
const trailer = fc.oneof({ arbitrary: fc.constant("X-Trailer: 1"), weight: 3 }, { arbitrary: plainHeader, weight: 1 });

const chunkedBody = fc
  .record({
    chunks: fc.array(
      fc.record({ data: bodyBytes.filter((b) => b.length > 0), size: fc.nat(), ext: chunkExt, end: chunkDataEnd }),
      { maxLength: 3 },
    ),
    lastSize: often("0", "000", "0 ", "00000000000000000", ""),
    lastExt: chunkExt,
    eol,
    trailers: fc.array(fc.tuple(trailer, eol), { maxLength: 2 }),
    final: often("\r\n", "\n", "", "\r", "x\r\n"),
  })
  .chain((b) =>
    fc.tuple(...b.chunks.map((c) => chunkSize(c.data.length))).map((sizes) => {
      const parts: Buffer[] = [];
      b.chunks.forEach((c, i) =>
        parts.push(Buffer.from(`${sizes[i]}${c.ext}${b.eol}`, "latin1"), c.data, Buffer.from(c.end, "latin1")),
      );
      parts.push(
        Buffer.from(
          `${b.lastSize}${b.lastExt}${b.eol}${b.trailers.map(([t, e]) => t + e).join("")}${b.final}`,
          "latin1",
        ),
      );
      return Buffer.concat(parts);
    }),
  );

type Framing = "length" | "chunked" | "close" | "both" | "two-lengths" | "two-encodings";
const framing: fc.Arbitrary<Framing> = fc.oneof(
  { arbitrary: fc.constantFrom<Framing>("length", "chunked", "close"), weight: 12 },
  { arbitrary: fc.constantFrom<Framing>("both", "two-lengths", "two-encodings"), weight: 2 },
);

/** Framing headers and the body that goes with them. */
const framed = framing.chain((f) =>
  fc.tuple(bodyBytes, chunkedBody).chain(([data, chunked]) => {
    const cl = contentLengthValue(data.length).map((v) => `Content-Length: ${v}`);
    const te = transferEncoding.map((v) => `Transfer-Encoding: ${v}`);
    switch (f) {
      case "length":
        return cl.map((h) => ({ headers: [h], body: data }));
      case "chunked":
        return te.map((h) => ({ headers: [h], body: chunked }));
      case "close":
        return fc.constant({ headers: [] as string[], body: data });
      case "both":
        return fc
          .tuple(cl, te, fc.boolean())
          .map(([a, b, teFirst]) => ({ headers: teFirst ? [b, a] : [a, b], body: chunked }));
      case "two-lengths":
        return fc
          .tuple(cl, fc.boolean())
          .map(([a, same]) => ({ headers: [a, same ? a : `Content-Length: ${data.length + 3}`], body: data }));
      case "two-encodings":
        return fc.tuple(te, te).map(([a, b]) => ({ headers: [a, b], body: chunked }));
    }
  }),
);

const interim = fc
  .tuple(
    often("HTTP/1.1 100 Continue", "HTTP/1.1 103 Early Hints", "HTTP/1.1 102 Processing", "HTTP/1.1 199 Odd"),
    fc.array(fc.tuple(often("Link: </a>", "X-Bad Header", "X-Nul: \x00"), eol), { maxLength: 2 }),
    eol,
    eol,
  )
  .map(([line, headers, e1, e2]) => `${line}${e1}${headers.map(([h, e]) => h + e).join("")}${e2}`);

const response = fc
  .record({
    interims: fc.oneof(
      { arbitrary: fc.constant([] as string[]), weight: 5 },
      { arbitrary: fc.array(interim, { minLength: 1, maxLength: 2 }), weight: 1 },
    ),
    version,
    code,
    reason,
    lineEnd: eol,
    framed,
    extra: fc.array(fc.tuple(plainHeader, eol), { maxLength: 3 }),
    extraAt: fc.nat(),
    headEnd: eol,
    trailing: often("", "", "HTTP/1.1 200 OK\r\n\r\n", "garbage"),
  })
  .map((r) => {
    const headers = r.framed.headers.map((h) => [h, "\r\n"] as [string, string]);
    headers.splice(r.extraAt % (headers.length + 1), 0, ...r.extra);
    const head = `${r.interims.join("")}${r.version} ${r.code}${r.reason}${r.lineEnd}${headers.map(([h, e]) => h + e).join("")}${r.headEnd}`;
    return Buffer.concat([Buffer.from(head, "latin1"), r.framed.body, Buffer.from(r.trailing, "latin1")]);
  });

/** A response, maybe cut short, in random pieces, for GET or HEAD, closed or held. */
export const httpCase: fc.Arbitrary<HttpCase> = fc
  .record({
    wire: response,
    cutAt: fc.oneof(
      { arbitrary: fc.constant(null), weight: 8 },
      { arbitrary: fc.double({ min: 0, max: 1, noNaN: true }), weight: 1 },
    ),
    cuts: fc.array(fc.nat(), { maxLength: 6 }),
    method: often<"GET" | "HEAD">("GET", "HEAD"),
    keepBody: often(true, false),
    close: fc.oneof({ arbitrary: fc.constant(true), weight: 3 }, { arbitrary: fc.constant(false), weight: 1 }),
  })
  .map(({ wire, cutAt, cuts, method, keepBody, close }) => {
    const bytes = cutAt === null ? wire : wire.subarray(0, Math.floor(wire.length * cutAt));
    const at = [...new Set(cuts.map((c) => (bytes.length ? c % bytes.length : 0)).filter((c) => c > 0))].sort(
      (a, b) => a - b,
    );
    const pieces = [0, ...at]
      .map((start, i) => bytes.subarray(start, at[i] ?? bytes.length))
      .filter((p) => p.length > 0);
    return {
      wire: bytes,
      pieces,
      method,
      keepBody: keepBody && method === "GET",
      close,
      [fc.toStringMethod]: () => describeCase(bytes, pieces.length, method, close),
    };
  });

/** A counterexample as fast-check prints it: the wire as text, long runs of one byte folded. */
function describeCase(wire: Buffer, pieces: number, method: string, close: boolean): string {
  const text = JSON.stringify(wire.toString("latin1")).replace(
    /(.)\1{40,}/g,
    (run, c: string) => `${c}…(${run.length}×)`,
  );
  return `${method} ${close ? "closed" : "held"} in ${pieces} pieces: ${text}`;
}
