import { describe, expect, it } from "@jest/globals";
import { statusDiff } from "./status-diff.js";

const pod = (name: string, state: string) => ({ name, uid: `uid-${name}`, state });
const cond = (type: string, status: string, message = "m") => ({ type, status, message });

describe("statusDiff", () => {
  it.each<[string, Record<string, unknown> | undefined, Record<string, unknown>, string[]]>([
    [
      "the same status changes nothing",
      { healthy: 2, pods: [pod("a", "Healthy")] },
      { healthy: 2, pods: [pod("a", "Healthy")] },
      [],
    ],
    ["a count is named", { healthy: 2 }, { healthy: 1 }, ["healthy"]],
    [
      "a pod's field is named by the pod",
      { pods: [pod("a", "Healthy")] },
      { pods: [pod("a", "Unhealthy")] },
      ["pods[a].state"],
    ],
    [
      "pods added and removed are named",
      { pods: [pod("a", "Healthy")] },
      { pods: [pod("b", "Healthy")] },
      ["pods[a] removed", "pods[b] added"],
    ],
    [
      "a condition is named by its type",
      { conditions: [cond("Degraded", "False")] },
      { conditions: [cond("Degraded", "True")] },
      ["conditions[Degraded].status"],
    ],
    ["a first status names every field", undefined, { healthy: 1 }, ["healthy"]],
  ])("%s", (_name, before, after, expected) => {
    expect(statusDiff(before, after)).toEqual(expected);
  });
});
