import { describe, it, expect } from "@jest/globals";
import {
  findRolloutSuspects,
  newSuspects,
  newestReplicaSet,
  parseRevision,
  rolloutBlockReason,
  rolloutConditionMessage,
  rolloutEventNote,
  type RolloutPod,
  type RolloutReplicaSet,
} from "./rollout.js";

const T = Date.parse("2026-11-30T10:00:00Z");
const DEPLOY = { name: "web", uid: "uid-deploy-web" };

function anRs(name: string, revision: number | undefined, over: Partial<RolloutReplicaSet> = {}): RolloutReplicaSet {
  const rs: RolloutReplicaSet = {
    name,
    uid: `uid-${name}`,
    deployment: DEPLOY,
    createdAt: T + (revision ?? 0) * 60_000,
    ...over,
  };
  if (revision !== undefined) rs.revision = revision;
  return rs;
}

/** Pods of a ReplicaSet in the given states, named `<rs>-<i>`, with the hash its name ends in. */
function podsOf(rs: string, states: Array<RolloutPod["state"]>): RolloutPod[] {
  const hash = rs.split("-").at(-1)!;
  return states.map((state, i) => ({
    uid: `uid-${rs}-${i}`,
    name: `${rs}-${i}`,
    state,
    replicaSet: { name: rs, uid: `uid-${rs}` },
    templateHash: hash,
  }));
}

const OLD = anRs("web-old1", 1);
const NEW = anRs("web-new2", 2);

describe("findRolloutSuspects", () => {
  it.each([
    {
      name: "the newest ReplicaSet all Unhealthy while the older one is Healthy is suspect",
      pods: [
        ...podsOf("web-old1", ["Healthy", "Healthy"]),
        ...podsOf("web-new2", ["Unhealthy", "Unhealthy", "Unhealthy"]),
      ],
      sets: [OLD, NEW],
      suspect: {
        replicaSet: "web-new2",
        pods: ["web-new2-0", "web-new2-1", "web-new2-2"],
        older: [{ replicaSet: "web-old1", healthy: 2 }],
      },
    },
    {
      name: "Unknown new pods count for neither side: one Unhealthy and two Unknown is still suspect",
      pods: [...podsOf("web-old1", ["Healthy"]), ...podsOf("web-new2", ["Unhealthy", "Unknown", "Unknown"])],
      sets: [OLD, NEW],
      suspect: { replicaSet: "web-new2", pods: ["web-new2-0"], older: [{ replicaSet: "web-old1", healthy: 1 }] },
    },
    {
      name: "one Healthy new pod shows the template works: not suspect",
      pods: [...podsOf("web-old1", ["Healthy"]), ...podsOf("web-new2", ["Unhealthy", "Healthy"])],
      sets: [OLD, NEW],
      suspect: undefined,
    },
    {
      name: "no Healthy old pod (the old ones Unhealthy or Unknown): a mass failure, not a rollout",
      pods: [...podsOf("web-old1", ["Unhealthy", "Unknown"]), ...podsOf("web-new2", ["Unhealthy"])],
      sets: [OLD, NEW],
      suspect: undefined,
    },
    {
      name: "the old ReplicaSet's Unhealthy pods are never suspect: they are not the newest",
      pods: [...podsOf("web-old1", ["Unhealthy", "Healthy"]), ...podsOf("web-new2", ["Healthy"])],
      sets: [OLD, NEW],
      suspect: undefined,
    },
    {
      name: "a superseded ReplicaSet is not the newest even when the newest has no targets yet",
      pods: [...podsOf("web-old1", ["Healthy"]), ...podsOf("web-new2", ["Unhealthy"])],
      sets: [OLD, NEW, anRs("web-next3", 3)],
      suspect: undefined,
    },
    {
      name: "the revision decides, not the creation time (a rollback re-uses an old ReplicaSet with a new revision)",
      pods: [...podsOf("web-old1", ["Unhealthy"]), ...podsOf("web-new2", ["Healthy"])],
      sets: [anRs("web-old1", 3, { createdAt: T }), anRs("web-new2", 2, { createdAt: T + 60_000 })],
      suspect: { replicaSet: "web-old1", pods: ["web-old1-0"], older: [{ replicaSet: "web-new2", healthy: 1 }] },
    },
    {
      name: "without a revision on every ReplicaSet, the creation time decides",
      pods: [...podsOf("web-old1", ["Healthy"]), ...podsOf("web-new2", ["Unhealthy"])],
      sets: [anRs("web-old1", undefined, { createdAt: T }), anRs("web-new2", 7, { createdAt: T + 1 })],
      suspect: { replicaSet: "web-new2", pods: ["web-new2-0"], older: [{ replicaSet: "web-old1", healthy: 1 }] },
    },
    {
      name: "ReplicaSets of another Deployment are no evidence",
      pods: [...podsOf("api-old1", ["Healthy"]), ...podsOf("web-new2", ["Unhealthy"])],
      sets: [anRs("api-old1", 1, { deployment: { name: "api", uid: "uid-deploy-api" } }), NEW],
      suspect: undefined,
    },
    {
      name: "a ReplicaSet without a Deployment is never suspect",
      pods: [...podsOf("web-old1", ["Healthy"]), ...podsOf("web-new2", ["Unhealthy"])],
      sets: [
        { ...OLD, deployment: undefined },
        { ...NEW, deployment: undefined },
      ] as RolloutReplicaSet[],
      suspect: undefined,
    },
    {
      name: "a Healthy old pod with the new pods' pod-template-hash is the same template: no evidence",
      pods: [{ ...podsOf("web-old1", ["Healthy"])[0]!, templateHash: "new2" }, ...podsOf("web-new2", ["Unhealthy"])],
      sets: [OLD, NEW],
      suspect: undefined,
    },
    {
      name: "a pod whose ReplicaSet is not known (not in the cache yet) is ignored",
      pods: [...podsOf("web-old1", ["Healthy"]), ...podsOf("web-new2", ["Unhealthy"])],
      sets: [OLD],
      suspect: undefined,
    },
  ])("$name", ({ pods, sets, suspect }) => {
    const found = findRolloutSuspects(pods, sets);
    if (suspect === undefined) {
      expect(found).toEqual([]);
      return;
    }
    expect(found.map((s) => ({ replicaSet: s.replicaSet, pods: s.pods.map((p) => p.name), older: s.older }))).toEqual([
      suspect,
    ]);
  });

  it("names the Deployment and the revision, and says it in every text", () => {
    const [s] = findRolloutSuspects(
      [...podsOf("web-old1", ["Healthy", "Healthy"]), ...podsOf("web-new2", ["Unhealthy", "Unhealthy"])],
      [OLD, NEW],
    );
    expect(s!.deployment).toEqual(DEPLOY);
    expect(rolloutBlockReason(s!)).toBe(
      "suspect rollout: ReplicaSet web-new2 (revision 2) of Deployment web is the newest and none of its pods is Healthy while 2 pods of older ReplicaSet web-old1 are Healthy: replacing would only recreate the failure",
    );
    expect(rolloutConditionMessage([s!])).toBe(
      "ReplicaSet web-new2 (revision 2) of Deployment web: 2 pods Unhealthy, none Healthy, while 2 pods of older ReplicaSet web-old1 are Healthy; its Unhealthy pods are not replaced",
    );
    expect(rolloutEventNote(s!, "shop/web")).toBe(
      "ReplicaSet web-new2 (revision 2) of Deployment web looks like a failing rollout: policy shop/web sees 2 of its pods Unhealthy and none Healthy while 2 pods of older ReplicaSet web-old1 are Healthy; its pods are not replaced",
    );
  });

  it("announces a suspect once: not again while the condition as last written names it", () => {
    const [s] = findRolloutSuspects(
      [...podsOf("web-old1", ["Healthy"]), ...podsOf("web-new2", ["Unhealthy"])],
      [OLD, NEW],
    );
    expect(newSuspects(undefined, [s!])).toEqual([s]);
    expect(newSuspects("no Deployment's newest ReplicaSet is failing", [s!])).toEqual([s]);
    expect(newSuspects(rolloutConditionMessage([s!]).replace("1 pod", "3 pods"), [s!])).toEqual([]);
  });
});

describe("newestReplicaSet and parseRevision", () => {
  it.each([
    { value: "3", revision: 3 },
    { value: "12", revision: 12 },
    { value: "", revision: undefined },
    { value: "2a", revision: undefined },
    { value: "-1", revision: undefined },
    { value: undefined, revision: undefined },
  ])("reads the revision annotation $value as $revision", ({ value, revision }) => {
    expect(parseRevision(value)).toBe(revision);
  });

  it("breaks a tie of revision-less creation times by name", () => {
    expect(
      newestReplicaSet([anRs("web-b", undefined, { createdAt: T }), anRs("web-a", undefined, { createdAt: T })])?.name,
    ).toBe("web-b");
  });
});
