// With --shards=on each replica caches only the namespaces it owns, so no replica sees the pods of
// a namespace it does not own. A gated pod left in a namespace whose ReadinessGate policy was
// deleted must still get healthprobe.io/ready True, also after the namespace's owner went away:
// the namespace's handover marker keeps it shared out, and its new owner's caches see the pod.
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gauge, markerHolders, startShardReplica, type ShardReplica } from "../support/shard-replicas.js";
import { waitFor } from "../support/wait-for.js";
import { aPod, aPolicy, type Obj } from "./support/cluster.js";
import { livePods } from "./support/queries.js";
import { useBed } from "./support/test-bed.js";

const HPP = "healthprobe.io/v1alpha1";
const GATE = "healthprobe.io/ready";
const NS = "leftover";

let dir: string;
const procs: ShardReplica[] = [];

afterEach(async () => {
  for (const p of procs.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
    await p.exited;
    if (process.env.DUMP_LOGS) console.log(p.user, JSON.stringify(p.logs.slice(-40), null, 1));
  }
  rmSync(dir, { recursive: true, force: true });
});

const bed = useBed();

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hp-leftovers-"));
});

const startReplica = (user: string) => startShardReplica({ server: bed.cluster.server, dir, user, into: procs });

function aGatedPod(name: string): Obj {
  const pod = aPod(name, NS);
  pod.spec.readinessGates = [{ conditionType: GATE }];
  return pod;
}

const gateOf = async (name: string) =>
  (
    (await bed.cluster.get("v1", "Pod", name, NS))?.status?.conditions as Array<Record<string, string>> | undefined
  )?.find((c) => c.type === GATE);

describe("leftovers of a deleted policy with shards on", () => {
  it("a gated pod left behind by a deleted policy and a dead owner is released by the namespace's next owner, whose marker then goes with the pods", async () => {
    await bed.cluster.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
    const replicas = [await startReplica("operator-a"), await startReplica("operator-b")];
    await waitFor(
      async () =>
        (await Promise.all(replicas.map((r) => gauge(r, "healthprobe_shard_replicas_live")))).every((n) => n === 2),
      { timeoutMs: 20_000, what: "each replica to see two live shard Leases" },
    );
    await bed.cluster.create(aPolicy("web", NS, { method: "ReadinessGate", serviceName: undefined }));
    // Two served pods, one of them failing: the policy holds that one out (False).
    for (const name of ["web-a", "web-b"]) await bed.cluster.create(aGatedPod(name));
    const pods = await livePods(bed, 2, { namespace: NS });
    bed.farm.failing(pods[0]!.status.podIP);
    await waitFor(async () => (await gateOf("web-a"))?.status === "False", {
      timeoutMs: 20_000,
      what: "the failing pod held out by the policy",
    });
    const holder = (await markerHolders(bed.cluster)).get(NS);
    const owner = replicas.find((r) => r.identity === holder)!;
    const other = replicas.find((r) => r !== owner)!;

    // The owner dies, then the policy goes: only the marker says the namespace has anything left.
    owner.child.kill("SIGKILL");
    await owner.exited;
    await bed.cluster.remove(HPP, "HealthProbePolicy", "web", NS);
    const gate = await waitFor(
      async () => {
        const c = await gateOf("web-a");
        return c?.status === "True" ? c : undefined;
      },
      { timeoutMs: 30_000, what: "the left pod released" },
    );
    expect(gate).toMatchObject({ status: "True", reason: "NoPolicy" });
    expect((await markerHolders(bed.cluster)).get(NS)).toBe(other.identity);

    // Nothing left to act on once the pods are gone: the marker is retired, so the namespace is cached by no one.
    for (const name of ["web-a", "web-b"]) await bed.cluster.remove("v1", "Pod", name, NS);
    await waitFor(async () => !(await markerHolders(bed.cluster)).has(NS), {
      timeoutMs: 20_000,
      what: `the marker of ${NS} retired`,
    });
  }, 90_000);
});
