// The probe's HTTP/1.1 response reader: status line, the two framing headers, and the body to
// its end or its first MAX_BODY_BYTES. Byte-level, so the common case (a status and no body)
// allocates no strings.
import { MAX_BODY_BYTES, type ProbeErrorKind, type RawProbeResult } from "../domain/probe-request.js";

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

/** Offset just past the blank line ending a response head (CRLF or bare LF), or -1. */
function headEnd(buf: Buffer): number {
  for (let i = buf.indexOf(10); i >= 0; i = buf.indexOf(10, i + 1)) {
    if (buf[i + 1] === 10) return i + 2;
    if (buf[i + 1] === 13 && buf[i + 2] === 10) return i + 3;
  }
  return -1;
}

/** The code of "HTTP/1.x NNN[ reason]", or -1. */
function statusOf(buf: Buffer): number {
  if (buf[5] !== 0x31 || buf[6] !== 0x2e || (buf[7] !== 0x30 && buf[7] !== 0x31) || buf[8] !== 0x20) return -1;
  const a = (buf[9] as number) - 0x30;
  const b = (buf[10] as number) - 0x30;
  const c = (buf[11] as number) - 0x30;
  if (a < 1 || a > 5 || b < 0 || b > 9 || c < 0 || c > 9) return -1;
  const after = buf[12];
  if (after !== 0x20 && after !== 13 && after !== 10) return -1;
  return a * 100 + b * 10 + c;
}
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
  private chunkState: "size" | "data" | "crlf" = "size";
  private chunkLine = "";
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
    // Byte-level: the common case (status only, no body) allocates no strings.
    for (;;) {
      if (!startsLikeHttp(buf)) return "invalid";
      const end = headEnd(buf);
      if (end < 0) {
        if (buf.length > MAX_HEAD_BYTES) {
          this.problem = "invalid HTTP response: headers too large";
          return "invalid";
        }
        // The read buffer may be reused by the socket: keep a copy.
        this.head = this.head === buf ? buf : Buffer.from(buf);
        return "more";
      }
      if (end > MAX_HEAD_BYTES) {
        this.problem = "invalid HTTP response: headers too large";
        return "invalid";
      }
      const code = statusOf(buf);
      if (code < 0) return "invalid";
      const rest = buf.subarray(end);
      if (code >= 100 && code < 200 && code !== 101) {
        // Interim response (100 Continue, 103 Early Hints): the final one follows.
        buf = rest;
        this.head = undefined;
        if (buf.length === 0) return "more";
        continue;
      }
      this.statusCode = code;
      this.head = undefined;
      this.headersAtMs = elapsed();
      if (!this.expectBody || code === 204 || code === 304 || code === 101) {
        this.mode = "none";
        return "done";
      }
      const framing = this.framing(buf.toString("latin1", 0, end).split(/\r?\n/));
      if (framing === "invalid") {
        this.statusCode = 0;
        return "invalid";
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

  private framing(lines: string[]): "ok" | "invalid" {
    let length: number | undefined;
    let chunked = false;
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i] as string;
      const colon = line.indexOf(":");
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === "transfer-encoding") {
        const codings = value.toLowerCase().split(",").map((s) => s.trim());
        chunked = codings[codings.length - 1] === "chunked";
      } else if (name === "content-length") {
        if (!/^[0-9]+$/.test(value) || (length !== undefined && length !== Number(value))) {
          this.problem = "invalid HTTP response: bad content-length";
          return "invalid";
        }
        length = Number(value);
      }
    }
    // Transfer-Encoding overrides Content-Length (RFC 9112 6.3).
    if (chunked) this.mode = "chunked";
    else if (length !== undefined) {
      this.mode = length === 0 ? "none" : "length";
      this.remaining = length;
    } else this.mode = "close";
    return "ok";
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
        if (this.chunkLine.length > MAX_CHUNK_LINE) {
          this.problem = "invalid HTTP response: bad chunk size";
          return "invalid";
        }
        if (nl < 0) return "more";
        i = nl + 1;
        const sizeText = this.chunkLine.replace(/\r$/, "").split(";")[0]?.trim() ?? "";
        this.chunkLine = "";
        if (!/^[0-9a-fA-F]{1,8}$/.test(sizeText)) {
          this.problem = "invalid HTTP response: bad chunk size";
          return "invalid";
        }
        this.remaining = parseInt(sizeText, 16);
        // The last chunk: trailers, if any, carry nothing a probe needs.
        if (this.remaining === 0) return this.complete(elapsed);
        this.chunkState = "data";
      } else if (this.chunkState === "data") {
        const n = Math.min(this.remaining, chunk.length - i);
        if (this.take(chunk.subarray(i, i + n))) return this.complete(elapsed);
        this.remaining -= n;
        i += n;
        if (this.remaining === 0) this.chunkState = "crlf";
      } else {
        // The CRLF after chunk data; tolerate a bare LF.
        const c = chunk[i] as number;
        i++;
        if (c === 10) this.chunkState = "size";
        else if (c !== 13) {
          this.problem = "invalid HTTP response: bad chunk framing";
          return "invalid";
        }
      }
    }
    return "more";
  }
}
