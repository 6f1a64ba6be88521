// The probe's HTTP response parser (operator/src/adapters/http-response-parser.ts) against Node's
// own llhttp (node:http, strict as it is by default) over generated responses: framing conflicts,
// chunk syntax, control bytes, bare LF/CR, obs-fold, 1xx, oversized heads, early close, bodies past
// 64 KiB, each split at random into reads. The parser is fed as the prober feeds it (every read in
// one reused buffer, then the end of stream when the server closes); llhttp gets the same bytes
// over a real socket. Each case must agree (the same verdict, the same status, the same first
// 64 KiB of body) or the parser must be the stricter one. Accepting what llhttp refuses, or
// reading another status or body, would call a broken server healthy: the test fails.
//
// The differences allowed, all of them the parser refusing what llhttp accepts (its problem text):
//
// | parser says                             | llhttp accepts                                         | why the parser refuses            |
// |-----------------------------------------|--------------------------------------------------------|-----------------------------------|
// | invalid HTTP response                   | any 3-digit status (000-999), HTTP/0.9, HTTP/2.0 ...   | a status outside 100-599 or a     |
// |                                         |                                                        | version not 1.0/1.1 is not HTTP/1 |
// | ...: bad transfer-encoding              | "chunked" twice (two headers), "chunked;q=1",          | RFC 9112 7: chunked once, last,   |
// |                                         | "chunked" not last (then reads to the close)           | no parameters; ambiguous framing  |
// | ...: bad chunk size                     | chunk lines over 1 KiB (long extensions), sizes        | bounded memory per chunk line     |
// |                                         | with leading zeros past 16 digits                      |                                   |
// | ...: bad content-length                 | Content-Length of 16 to 20 digits                      | not exact as a JS number; no      |
// |                                         |                                                        | probe reads past 64 KiB anyway    |
// | ...: headers too large, trailers too    | a head (or head + trailers) up to a few bytes over     | the limit counts the final CRLF   |
// | large                                   | 16 KiB                                                 |                                   |
//
// Everything else agrees: both refuse bare LF (HPE_CR_EXPECTED), a CR without LF, header lines
// without a colon or with a space before it, control bytes in names, values and reason phrases,
// obs-fold, two Content-Lengths (even equal ones), Content-Length beside Transfer-Encoding, chunk
// sizes with spaces, malformed chunk extensions, CR CR LF after chunk data, a last chunk without
// the end of its trailer section; and both read a body to the close without framing headers.
// `npm run fuzz` runs many more cases and prints the tally of each kind.
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { ResponseParser } from "../../operator/src/adapters/http-response-parser.js";
import { fuzzOptions, fuzzRuns, Tally, timeoutFor } from "./fuzz-runs.js";
import { httpCase, type HttpCase } from "./http-response-arbitraries.js";
import { BODY_LIMIT, startLlhttpReference, type LlhttpReference, type ReferenceOutcome } from "./llhttp-reference.js";

type ProjectOutcome =
  | { kind: "response"; status: number; body: string | undefined }
  | { kind: "refused"; problem: string }
  | { kind: "incomplete" };

/** The parser driven as the prober drives it: each read lands in one reused buffer, then the end of stream. */
function runProject(c: HttpCase): ProjectOutcome {
  const parser = new ResponseParser(c.keepBody, c.method !== "HEAD");
  const readBuffer = Buffer.alloc(Math.max(1, ...c.pieces.map((p) => p.length)));
  const elapsed = () => 1;
  let state: "more" | "done" | "invalid" = "more";
  for (const piece of c.pieces) {
    piece.copy(readBuffer);
    state = parser.push(readBuffer.subarray(0, piece.length), elapsed);
    readBuffer.fill(0x5a);
    if (state !== "more") break;
  }
  if (state === "more" && c.close) state = parser.end(elapsed);
  if (state === "invalid") return { kind: "refused", problem: parser.problem };
  if (state === "more") return { kind: "incomplete" };
  const r = parser.result(0, 0);
  if (r.kind !== "response") throw new Error(`unexpected result kind ${r.kind}`);
  return { kind: "response", status: r.statusCode, body: r.body };
}

/** Every kind of case where the parser refuses what llhttp accepts, by the parser's problem (see the table above). */
const documentedStricter = new Set([
  "invalid HTTP response",
  "invalid HTTP response: bad transfer-encoding",
  "invalid HTTP response: bad chunk size",
  "invalid HTTP response: bad content-length",
  "invalid HTTP response: headers too large",
  "invalid HTTP response: trailers too large",
]);

/** The kind of an allowed difference, or throws on one that would call a broken response healthy. */
function compare(c: HttpCase, project: ProjectOutcome, ref: ReferenceOutcome): string {
  if (project.kind === "response") {
    if (ref.kind !== "response")
      throw new Error(`the parser accepted HTTP ${project.status} where llhttp gave ${JSON.stringify(ref)}`);
    if (project.status !== ref.status)
      throw new Error(`the parser read HTTP ${project.status} where llhttp read ${ref.status}`);
    if (c.keepBody) {
      const expected = ref.body.subarray(0, BODY_LIMIT).toString("utf8");
      if (project.body !== expected)
        throw new Error(
          `the parser read a body of ${project.body?.length} characters where llhttp read ${expected.length}: ${JSON.stringify(project.body?.slice(0, 80))} vs ${JSON.stringify(expected.slice(0, 80))}`,
        );
    }
    return "agree: response";
  }
  if (ref.kind !== "response")
    return `agree: ${project.kind === "refused" ? "refused" : "incomplete"} (llhttp ${ref.kind})`;
  return project.kind === "refused" ? `stricter: ${project.problem}` : "stricter: still waiting";
}

describe("the probe response parser against llhttp (node:http) over generated responses", () => {
  let llhttp: LlhttpReference;
  beforeAll(async () => (llhttp = await startLlhttpReference()));
  afterAll(() => llhttp?.stop());

  const runs = fuzzRuns(1000, 50_000);
  it(
    `agrees with llhttp or is stricter, over ${runs} responses split at random`,
    async () => {
      const tally = new Tally();
      await fc.assert(
        fc.asyncProperty(httpCase, async (c) => {
          const ref = await llhttp.run({ pieces: c.pieces, method: c.method, close: c.close });
          tally.add(
            compare(c, runProject(c), ref),
            () => `${fc.stringify(c)} → llhttp ${ref.kind === "refused" ? ref.error : ref.kind}`,
          );
        }),
        { ...fuzzOptions(runs), timeout: 5000 },
      );
      tally.print("HTTP response parser vs llhttp:");
      const undocumented = tally
        .kinds()
        .filter((k) => k.startsWith("stricter: ") && !documentedStricter.has(k.slice("stricter: ".length)));
      expect(undocumented).toEqual([]);
      // The generator must reach both sides: cases that parse, and cases both refuse.
      expect(tally.kinds()).toEqual(expect.arrayContaining(["agree: response", "agree: refused (llhttp refused)"]));
    },
    timeoutFor(runs, 20),
  );
});
