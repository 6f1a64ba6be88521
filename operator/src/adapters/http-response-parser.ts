// The probe's HTTP/1.1 response reader: status line, the two framing headers, and the body to
// its end or its first MAX_BODY_BYTES. Byte-level, so the common case (a status and no body)
// allocates little. As strict as llhttp or stricter (http-wire-syntax.ts): a response Node's
// own client would refuse is never called healthy.
import { MAX_BODY_BYTES, type ProbeErrorKind, type RawProbeResult } from "../domain/probe-request.js";
import {
  afterStatusLine,
  chunkLineSize,
  readFieldLines,
  sectionEnd,
  statusLineCode,
  type FramingFields,
} from "./http-wire-syntax.js";

const MAX_HEAD_BYTES = 16 * 1024;
const MAX_CHUNK_LINE = 1024;

export type ParseState = "more" | "done" | "invalid";

/** "HTTP/" so far, for however many bytes have arrived. */
function startsLikeHttp(buf: Buffer): boolean {
  const n = Math.min(buf.length, 5);
  for (let i = 0; i < n; i++) if (buf[i] !== HTTP_PREFIX[i]) return false;
  return true;
}
const HTTP_PREFIX = [0x48, 0x54, 0x54, 0x50, 0x2f];

type BodyMode = "none" | "length" | "chunked" | "close";

/**
 * Incremental HTTP/1.1 response parser for probes: status line, framing headers, body up to
 * MAX_BODY_BYTES. The body is always read to its end or that limit (a response is complete
 * only then); it is kept only when `keepBody`. `expectBody` is false for HEAD.
 */
export class ResponseParser {
  problem = "invalid HTTP response";
  /** "connect" when the peer closed before a complete response, else "other" (not HTTP). */
  problemKind: ProbeErrorKind = "other";
  statusCode = 0;
  headersAtMs = 0;
  endAtMs = 0;
  private head: Buffer | undefined;
  private mode: BodyMode = "none";
  private remaining = 0; // length mode: bytes left; chunked: bytes left in the current chunk
  private chunkState: "size" | "data" | "cr" | "lf" | "trailers" = "size";
  private chunkLine = "";
  private trailers: Buffer | undefined;
  /** Size of the final head: the trailers' limit is what it leaves. */
  private headBytes = 0;
  private body: Buffer[] = [];
  private bodyBytes = 0;
  private finished = false;

  constructor(
    private readonly keepBody: boolean,
    private readonly expectBody = true,
  ) {}

  push(chunk: Buffer, elapsed: () => number): ParseState {
    if (this.finished) return "done";
    if (this.statusCode === 0) {
      const buf = this.head ? (this.head = Buffer.concat([this.head, chunk])) : chunk;
      const state = this.parseHead(buf, elapsed);
      if (state !== "done") return state;
      if (this.statusCode === 0) return "more";
      if (this.finished) return "done";
      if (this.mode === "none") return this.complete(elapsed);
      return "more";
    }
    return this.pushBody(chunk, elapsed);
  }

  /** The peer closed its side. */
  end(elapsed: () => number): ParseState {
    if (this.finished) return "done";
    if (this.statusCode === 0 && this.head && this.head.length > 0) {
      this.problem = "invalid HTTP response: truncated headers";
      return "invalid";
    }
    if (this.statusCode === 0) return this.closedEarly("connection closed before the response");
    if (this.mode === "close") return this.complete(elapsed);
    return this.closedEarly("connection closed before the end of the body");
  }

  private closedEarly(problem: string): ParseState {
    this.problem = problem;
    this.problemKind = "connect";
    return "invalid";
  }

  result(sentAtMs: number, finishedAt: number): RawProbeResult {
    const r: RawProbeResult = {
      kind: "response",
      statusCode: this.statusCode,
      sentAtMs,
      headersAtMs: this.headersAtMs,
      endAtMs: this.endAtMs,
      finishedAt,
    };
    if (this.keepBody) r.body = Buffer.concat(this.body).toString("utf8");
    return r;
  }

  private complete(elapsed: () => number): ParseState {
    this.finished = true;
    this.endAtMs = this.mode !== "none" ? elapsed() : this.headersAtMs;
    return "done";
  }

  /** Returns "done" when a final response head was parsed (statusCode set), or when only 1xx heads were consumed and more is needed (statusCode 0). */
  private parseHead(buf: Buffer, elapsed: () => number): ParseState {
    for (;;) {
      if (!startsLikeHttp(buf)) return "invalid";
      const end = sectionEnd(buf, 0, true);
      if (end === -2) return this.invalid("bad line ending");
      if (end < 0) {
        if (buf.length > MAX_HEAD_BYTES) return this.invalid("headers too large");
        // The read buffer may be reused by the socket: keep a copy.
        this.head = this.head === buf ? buf : Buffer.from(buf);
        return "more";
      }
      if (end > MAX_HEAD_BYTES) return this.invalid("headers too large");
      const code = statusLineCode(buf);
      if (code < 0) return "invalid";
      const framing: FramingFields = { contentLengths: [], transferCodings: [] };
      if (!readFieldLines(buf, afterStatusLine(buf), end, framing)) return this.invalid("bad header line");
      // Checked on interim heads too, as llhttp does; the final head sets the framing.
      const framingProblem = this.framing(framing);
      if (framingProblem) return this.invalid(framingProblem);
      const rest = buf.subarray(end);
      if (code >= 100 && code < 200 && code !== 101) {
        // Interim response (100 Continue, 103 Early Hints): the final one follows.
        buf = rest;
        this.head = undefined;
        if (buf.length === 0) return "more";
        continue;
      }
      this.statusCode = code;
      this.headBytes = end;
      this.head = undefined;
      this.headersAtMs = elapsed();
      if (!this.expectBody || code === 204 || code === 304 || code === 101) {
        this.mode = "none";
        return "done";
      }
      if (this.mode !== "none" && rest.length > 0) {
        const state = this.pushBody(rest, elapsed);
        if (state === "invalid") {
          this.statusCode = 0;
          return "invalid";
        }
      }
      return "done";
    }
  }

  private invalid(problem: string): "invalid" {
    this.problem = `invalid HTTP response: ${problem}`;
    return "invalid";
  }

  /**
   * The body's framing, or why it is ambiguous. Stricter than RFC 9112 6.3 allows a recipient
   * to be, as llhttp is: a second Content-Length, or one beside Transfer-Encoding, is refused
   * (they are how responses are smuggled); so is "chunked" anywhere but last, or twice, and
   * an empty coding.
   */
  private framing(f: FramingFields): string | undefined {
    if (f.contentLengths.length > 1) return "bad content-length";
    if (f.contentLengths.length === 1 && f.transferCodings.length > 0) return "content-length with transfer-encoding";
    if (f.transferCodings.length > 0) {
      // Empty list elements are refused too: llhttp reads "chunked," as not chunked.
      const codings = f.transferCodings.map((c) => c.trim().toLowerCase());
      if (codings.some((c) => !/^[!#$%&'*+\-.^_`|~0-9a-z]+$/.test(c))) return "bad transfer-encoding";
      const chunkedAt = codings.indexOf("chunked");
      if (chunkedAt >= 0 && chunkedAt !== codings.length - 1) return "bad transfer-encoding";
      // A final coding other than chunked: the body runs to the close.
      this.mode = chunkedAt >= 0 ? "chunked" : "close";
      return undefined;
    }
    const length = f.contentLengths[0];
    if (length === undefined) this.mode = "close";
    else {
      // At most 15 digits: exact as a number, and far past what a probe reads.
      if (!/^[0-9]{1,15}$/.test(length)) return "bad content-length";
      this.remaining = Number(length);
      this.mode = this.remaining === 0 ? "none" : "length";
    }
    return undefined;
  }

  private take(bytes: Buffer): boolean {
    const room = MAX_BODY_BYTES - this.bodyBytes;
    if (bytes.length >= room) {
      if (this.keepBody) this.body.push(Buffer.from(bytes.subarray(0, room)));
      this.bodyBytes = MAX_BODY_BYTES;
      return true; // the limit: stop reading
    }
    // A copy: the socket may reuse its read buffer. A body nobody judges is only counted.
    if (this.keepBody) this.body.push(Buffer.from(bytes));
    this.bodyBytes += bytes.length;
    return false;
  }

  private pushBody(chunk: Buffer, elapsed: () => number): ParseState {
    if (this.finished) return "done";
    if (this.mode === "close") return this.take(chunk) ? this.complete(elapsed) : "more";
    if (this.mode === "length") {
      const part = chunk.length > this.remaining ? chunk.subarray(0, this.remaining) : chunk;
      this.remaining -= part.length;
      if (this.take(part) || this.remaining === 0) return this.complete(elapsed);
      return "more";
    }
    if (this.mode === "none") return this.complete(elapsed);
    let i = 0;
    while (i < chunk.length) {
      if (this.chunkState === "size") {
        const nl = chunk.indexOf(10, i);
        const end = nl < 0 ? chunk.length : nl;
        this.chunkLine += chunk.toString("latin1", i, end);
        if (this.chunkLine.length > MAX_CHUNK_LINE) return this.invalid("bad chunk size");
        if (nl < 0) return "more";
        i = nl + 1;
        const size = chunkLineSize(this.chunkLine);
        this.chunkLine = "";
        if (typeof size === "string") return this.invalid(size);
        this.remaining = size;
        this.chunkState = size === 0 ? "trailers" : "data";
      } else if (this.chunkState === "data") {
        const n = Math.min(this.remaining, chunk.length - i);
        if (this.take(chunk.subarray(i, i + n))) return this.complete(elapsed);
        this.remaining -= n;
        i += n;
        if (this.remaining === 0) this.chunkState = "cr";
      } else if (this.chunkState === "trailers") {
        return this.pushTrailers(chunk.subarray(i), elapsed);
      } else {
        // Exactly CRLF after chunk data.
        const expected = this.chunkState === "cr" ? 13 : 10;
        if (chunk[i] !== expected) return this.invalid("bad chunk framing");
        i++;
        this.chunkState = expected === 13 ? "lf" : "size";
      }
    }
    return "more";
  }

  /** The trailer section after the last chunk: checked like headers, then the response is complete. */
  private pushTrailers(bytes: Buffer, elapsed: () => number): ParseState {
    if (bytes.length === 0) return "more";
    // A copy: the socket may reuse its read buffer.
    const buf = (this.trailers = this.trailers ? Buffer.concat([this.trailers, bytes]) : Buffer.from(bytes));
    const end = sectionEnd(buf, 0, false);
    if (end === -2) return this.invalid("bad line ending");
    // Head and trailers share one limit, as in node:http.
    if ((end < 0 ? buf.length : end) + this.headBytes > MAX_HEAD_BYTES) return this.invalid("trailers too large");
    if (end < 0) return "more";
    if (!readFieldLines(buf, 0, end, undefined)) return this.invalid("bad trailer line");
    this.trailers = undefined;
    return this.complete(elapsed);
  }
}
