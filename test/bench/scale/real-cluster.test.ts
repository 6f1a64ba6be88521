// The scale benchmark on the real control plane counts the operator's writes from kube-apiserver's
// audit log: only the operator user's completed write requests count, named as the test server's
// request log names them.
import { describe, expect, it } from "@jest/globals";
import { writesInAuditLog } from "./real-cluster.js";

const event = (over: Record<string, unknown>) =>
  JSON.stringify({
    stage: "ResponseComplete",
    verb: "update",
    requestReceivedTimestamp: "2026-12-01T20:00:00.000000Z",
    user: { username: "operator" },
    objectRef: { resource: "healthprobepolicies", subresource: "status", name: "svc-0" },
    responseStatus: { code: 200 },
    ...over,
  });

describe("writes in the audit log", () => {
  it.each([
    [
      "a status update counts as resource/subresource",
      event({}),
      [
        {
          time: "2026-12-01T20:00:00.000000Z",
          verb: "update",
          resource: "healthprobepolicies/status",
          name: "svc-0",
          code: 200,
        },
      ],
    ],
    [
      "a create of a generated name counts without a name",
      event({ verb: "create", objectRef: { resource: "endpointslices" }, responseStatus: { code: 201 } }),
      [{ time: "2026-12-01T20:00:00.000000Z", verb: "create", resource: "endpointslices", name: "", code: 201 }],
    ],
    [
      "a refused write still counts, with its code",
      event({ verb: "patch", responseStatus: { code: 409 } }),
      [expect.objectContaining({ verb: "patch", code: 409 })],
    ],
    ["another user's write does not count", event({ user: { username: "admin" } }), []],
    ["a read does not count", event({ verb: "list" }), []],
    ["a stage before completion does not count", event({ stage: "ResponseStarted" }), []],
    ["an empty log has no writes", "", []],
  ])("%s", (_name, text, writes) => {
    expect(writesInAuditLog(`${text}\n`)).toEqual(writes);
  });
});
