import { describe, expect, it } from "@jest/globals";
import { ResponseParser } from "./http-response-parser.js";

// Every response is fed whole, then split at every byte boundary: framing must not depend on packets.
const cases: Array<{
  name: string;
  wire: string;
  readBody: boolean;
  head?: boolean;
  closeAtEnd?: boolean;
  status: number;
  body?: string;
  invalid?: string;
}> = [
  {
    name: "a content-length body",
    wire: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
    readBody: true,
    status: 200,
    body: "hello",
  },
  {
    name: "a chunked body with extensions and trailers",
    wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n",
    readBody: true,
    status: 200,
    body: "hello world",
  },
  {
    name: "a close-delimited body",
    wire: "HTTP/1.0 200 OK\r\n\r\nuntil close",
    readBody: true,
    closeAtEnd: true,
    status: 200,
    body: "until close",
  },
  {
    name: "interim 100 and 103 responses before the final one",
    wire: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 503 Busy\r\nContent-Length: 2\r\n\r\nno",
    readBody: true,
    status: 503,
    body: "no",
  },
  { name: "a 204 without a body", wire: "HTTP/1.1 204 No Content\r\n\r\n", readBody: true, status: 204, body: "" },
  {
    name: "a HEAD response with a content-length and no body",
    wire: "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n",
    readBody: false,
    head: true,
    status: 200,
  },
  {
    name: "a whole body it does not keep",
    wire: "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\npartial",
    readBody: false,
    status: 200,
  },
  {
    name: "a whole chunked body it does not keep",
    wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
    readBody: false,
    status: 200,
  },
  {
    name: "a chunked body after other codings",
    wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
    readBody: true,
    status: 200,
    body: "ok",
  },
  {
    name: "an empty content-length body",
    wire: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
    readBody: true,
    status: 200,
    body: "",
  },
  { name: "garbage", wire: "SSH-2.0-OpenSSH\r\n\r\n", readBody: false, status: 0, invalid: "invalid HTTP response" },
  {
    name: "a status line without a code",
    wire: "HTTP/1.1 OK\r\n\r\n",
    readBody: false,
    status: 0,
    invalid: "invalid HTTP response",
  },
  {
    name: "conflicting content-lengths",
    wire: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
    readBody: true,
    status: 0,
    invalid: "invalid HTTP response: bad content-length",
  },
  {
    name: "a bad chunk size",
    wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    readBody: true,
    status: 0,
    invalid: "invalid HTTP response: bad chunk size",
  },
  {
    name: "headers cut short",
    wire: "HTTP/1.1 200 OK\r\nContent-Le",
    readBody: false,
    closeAtEnd: true,
    status: 0,
    invalid: "invalid HTTP response: truncated headers",
  },
  {
    name: "a body cut short",
    wire: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
    readBody: true,
    closeAtEnd: true,
    status: 0,
    invalid: "connection closed before the end of the body",
  },
  // Regressions from the differential test against llhttp (test/fuzz/http-response-differential.test.ts):
  // each was once read as a response where Node's own client refuses it.
  {
    name: "a bare LF ending the status line",
    wire: "HTTP/1.1 200 OK\nContent-Length: 2\n\nok",
    readBody: true,
    closeAtEnd: true,
    status: 0,
    invalid: "invalid HTTP response: bad line ending",
  },
  {
    name: "a bare LF ending a header line",
    wire: "HTTP/1.1 200 OK\r\nX-A: 1\nContent-Length: 2\r\n\r\nok",
    readBody: true,
    closeAtEnd: true,
    status: 0,
    invalid: "invalid HTTP response: bad line ending",
  },
  {
    name: "a bare CR inside a header line",
    wire: "HTTP/1.1 200 OK\r\nX-A: 1\rX-B: 2\r\nContent-Length: 2\r\n\r\nok",
    readBody: true,
    closeAtEnd: true,
    status: 0,
    invalid: "invalid HTTP response: bad header line",
  },
  {
    name: "a control byte in the reason phrase",
    wire: "HTTP/1.1 200 O\x00K\r\nContent-Length: 2\r\n\r\nok",
    readBody: true,
    closeAtEnd: true,
    status: 0,
    invalid: "invalid HTTP response",
  },
  {
    name: "a header line without a colon",
    wire: "HTTP/1.1 200 OK\r\nX-No-Colon\r\nContent-Length: 2\r\n\r\nok",
    readBody: true,
    closeAtEnd: true,
    status: 0,
    invalid: "invalid HTTP response: bad header line",
  },
  {
    name: "a space before a header's colon",
    wire: "HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nok",
    readBody: true,
    closeAtEnd: true,
    status: 0,
    invalid: "invalid HTTP response: bad header line",
  },
  {
    name: "an empty header name",
    wire: "HTTP/1.1 200 OK\r\n: v\r\nContent-Length: 2\r\n\r\nok",
    readBody: true,
    closeAtEnd: true,
    status: 0,
    invalid: "invalid HTTP response: bad header line",
  },
  {
    name: "a NUL in a header value",
    wire: "HTTP/1.1 200 OK\r\nX-A: a\x00b\r\nContent-Length: 2\r\n\r\nok",
    readBody: true,
    closeAtEnd: true,
    status: 0,
    invalid: "invalid HTTP response: bad header line",
  },
  {
    name: "an obs-fold continuation line",
    wire: "HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\nContent-Length: 2\r\n\r\nok",
    readBody: true,
    closeAtEnd: true,
    status: 0,
    invalid: "invalid HTTP response: bad header line",
  },
  {
    name: "a bad header in an interim response",
    wire: "HTTP/1.1 100 Continue\r\nX-Bad Header\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    readBody: true,
    closeAtEnd: true,
    status: 0,
    invalid: "invalid HTTP response: bad header line",
  },
  {
    name: "a bad content-length in an interim response",
    wire: "HTTP/1.1 100 Continue\r\nContent-Length: -1\r\n\r\nHTTP/1.1 200 OK\r\n\r\n",
    readBody: true,
    closeAtEnd: true,
    status: 0,
    invalid: "invalid HTTP response: bad content-length",
  },
  {
    name: "two equal content-lengths",
    wire: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok",
    readBody: true,
    closeAtEnd: true,
    status: 0,
    invalid: "invalid HTTP response: bad content-length",
  },
  {
    name: "a content-length too long to be exact",
    wire: "HTTP/1.1 200 OK\r\nContent-Length: 9007199254740993\r\n\r\nok",
    readBody: true,
    closeAtEnd: true,
    status: 0,
    invalid: "invalid HTTP response: bad content-length",
  },
  {
    name: "a content-length beside transfer-encoding",
    wire: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
    readBody: true,
    closeAtEnd: true,
    status: 0,
    invalid: "invalid HTTP response: content-length with transfer-encoding",
  },
  {
    name: "an empty element after chunked (llhttp then reads to the close)",
    wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked,\r\n\r\n2\r\nok\r\n0\r\n\r\n",
    readBody: true,
    closeAtEnd: true,
    status: 0,
    invalid: "invalid HTTP response: bad transfer-encoding",
  },
  {
    name: "a space after a chunk size",
    wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2 \r\nok\r\n0\r\n\r\n",
    readBody: true,
    closeAtEnd: true,
    status: 0,
    invalid: "invalid HTTP response: bad chunk size",
  },
  {
    name: "a chunk extension with a space",
    wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;a =b\r\nok\r\n0\r\n\r\n",
    readBody: true,
    closeAtEnd: true,
    status: 0,
    invalid: "invalid HTTP response: bad chunk extension",
  },
  {
    name: "a chunk size line ending in a bare LF",
    wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\nok\r\n0\r\n\r\n",
    readBody: true,
    closeAtEnd: true,
    status: 0,
    invalid: "invalid HTTP response: bad chunk size",
  },
  {
    name: "chunk data ended by CR CR LF",
    wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\r\n0\r\n\r\n",
    readBody: true,
    closeAtEnd: true,
    status: 0,
    invalid: "invalid HTTP response: bad chunk framing",
  },
  {
    name: "a last chunk without the end of its trailers",
    wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-Trailer: 1\r\n",
    readBody: true,
    closeAtEnd: true,
    status: 0,
    invalid: "connection closed before the end of the body",
  },
  {
    name: "a bad trailer line",
    wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-No-Colon\r\n\r\n",
    readBody: true,
    closeAtEnd: true,
    status: 0,
    invalid: "invalid HTTP response: bad trailer line",
  },
  {
    name: "trailers that with the head pass 16 KiB",
    wire: `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-Big: ${"a".repeat(16_379)}\r\n\r\n`,
    readBody: true,
    closeAtEnd: true,
    status: 0,
    invalid: "invalid HTTP response: trailers too large",
  },
];

function feed(parts: Buffer[], readBody: boolean, closeAtEnd: boolean, head = false) {
  const parser = new ResponseParser(readBody, !head);
  const elapsed = () => 1;
  let state: "more" | "done" | "invalid" = "more";
  for (const p of parts) {
    state = parser.push(p, elapsed);
    if (state !== "more") break;
  }
  if (state === "more" && closeAtEnd) state = parser.end(elapsed);
  return { parser, state };
}

describe("the probe response parser", () => {
  it.each(cases)(
    "handles $name, however it is split",
    ({ wire, readBody, head, closeAtEnd, status, body, invalid }) => {
      const bytes = Buffer.from(wire, "latin1");
      const splits: Buffer[][] = [[bytes]];
      for (let i = 1; i < bytes.length; i++) splits.push([bytes.subarray(0, i), bytes.subarray(i)]);
      splits.push([...bytes].map((b) => Buffer.from([b])));
      for (const parts of splits) {
        const { parser, state } = feed(parts, readBody, closeAtEnd ?? false, head);
        if (invalid) {
          expect(state).toBe("invalid");
          expect(parser.problem).toBe(invalid);
          expect(parser.problemKind).toBe(invalid.startsWith("connection closed") ? "connect" : "other");
          continue;
        }
        expect(state).toBe("done");
        const result = parser.result(0, 0);
        expect(result).toMatchObject({ kind: "response", statusCode: status });
        if (result.kind === "response") expect(result.body).toBe(body);
      }
    },
  );

  it.each([
    { name: "a content-length body", wire: "HTTP/1.1 200 OK\r\nContent-Length: 99999\r\n\r\npartial" },
    { name: "a chunked body", wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n" },
    { name: "a close-delimited body", wire: "HTTP/1.1 200 OK\r\n\r\nsome" },
  ])("is not done before the end of $name, even when the body is not kept", ({ wire }) => {
    expect(feed([Buffer.from(wire, "latin1")], false, false).state).toBe("more");
  });

  it("is done at 64 KiB of a body it does not keep, with the time of that byte", () => {
    const parser = new ResponseParser(false);
    let t = 0;
    expect(parser.push(Buffer.from("HTTP/1.1 200 OK\r\n\r\n"), () => t)).toBe("more");
    let state = "more";
    for (let i = 0; i < 100 && state === "more"; i++) {
      t++;
      state = parser.push(Buffer.alloc(1024, "a"), () => t);
    }
    expect(state).toBe("done");
    expect(parser.result(0, 0)).toMatchObject({ kind: "response", statusCode: 200, headersAtMs: 0, endAtMs: 64 });
    expect(parser.result(0, 0)).not.toHaveProperty("body");
  });

  it("keeps at most 64 KiB of a body", () => {
    const parser = new ResponseParser(true);
    expect(parser.push(Buffer.from("HTTP/1.1 200 OK\r\n\r\n"), () => 0)).toBe("more");
    let state = "more";
    for (let i = 0; i < 100 && state === "more"; i++) state = parser.push(Buffer.alloc(1024, "a"), () => 0);
    expect(state).toBe("done");
    const result = parser.result(0, 0);
    expect(result.kind === "response" && result.body?.length).toBe(64 * 1024);
  });
});
