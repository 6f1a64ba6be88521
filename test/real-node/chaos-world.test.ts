// The audit log reader the real-node chaos suite takes its evictions from: which lines count as
// the operator's removals. Needs no node.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "@jest/globals";
import { removalsIn } from "./chaos-world.js";

const dir = mkdtempSync(join(tmpdir(), "chaos-world-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const event = (over: Record<string, unknown>): string =>
  JSON.stringify({
    stage: "ResponseComplete",
    verb: "create",
    requestReceivedTimestamp: "2026-01-02T03:04:05.123456Z",
    user: { username: "operator" },
    objectRef: { resource: "pods", subresource: "eviction", namespace: "chaos", name: "web-1" },
    responseStatus: { code: 201 },
    ...over,
  });

describe("removalsIn", () => {
  it.each([
    [
      "counts an eviction the operator sent, with its answer",
      event({}),
      [{ at: Date.parse("2026-01-02T03:04:05.123Z"), pod: "web-1", namespace: "chaos", verb: "evict", code: 201 }],
    ],
    [
      "counts a pod delete the operator sent",
      event({
        verb: "delete",
        objectRef: { resource: "pods", namespace: "chaos", name: "web-2" },
        responseStatus: { code: 200 },
      }),
      [{ at: Date.parse("2026-01-02T03:04:05.123Z"), pod: "web-2", namespace: "chaos", verb: "delete", code: 200 }],
    ],
    [
      "keeps a refused eviction's code",
      event({ responseStatus: { code: 429 } }),
      [expect.objectContaining({ verb: "evict", code: 429 })],
    ],
    ["ignores another user's eviction", event({ user: { username: "admin" } }), []],
    ["ignores a stage other than ResponseComplete", event({ stage: "ResponseStarted" }), []],
    [
      "ignores a pod create (not an eviction)",
      event({ objectRef: { resource: "pods", namespace: "chaos", name: "web-1" } }),
      [],
    ],
    [
      "ignores a delete of a pod's subresource",
      event({
        verb: "delete",
        objectRef: { resource: "pods", subresource: "status", namespace: "chaos", name: "web-1" },
      }),
      [],
    ],
    [
      "ignores a delete of another resource",
      event({ verb: "delete", objectRef: { resource: "configmaps", namespace: "chaos", name: "web-1" } }),
      [],
    ],
  ])("%s", (_name, line, want) => {
    const file = join(dir, `${Math.random().toString(36).slice(2)}.log`);
    writeFileSync(file, `${line}\n`);
    expect(removalsIn(file)).toEqual(want);
  });

  it("reads nothing from a log that does not exist yet", () => {
    expect(removalsIn(join(dir, "missing.log"))).toEqual([]);
  });
});
