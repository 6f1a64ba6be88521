// A client-node informer on HealthProbePolicies while policies change through client-node or the real kubectl,
// and its watch is dropped, refused or expired (410): it must end with exactly the server's objects and
// must have delivered every change, by its watch or by the re-list.
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { CustomObjectsApi, makeInformer, type KubernetesListObject } from "@kubernetes/client-node";
import { startApiServer, type TestApiServer } from "../../hack/apiserver/index.js";
import { kubeConfigFor } from "../../hack/apiserver/test-kit.js";
import { waitFor } from "../support/wait-for.js";
import { clusterKind } from "./clusters.js";
import { drivers, types, type Driver, type Obj } from "./drivers.js";
import { aNamespace, aPolicy, crdName, crdsDir, uniqueName } from "./fixtures.js";

const policyGvr = { group: "healthprobe.io", version: "v1alpha1", resource: "healthprobepolicies" };

interface Delivered {
  verb: "add" | "update" | "delete";
  name: string;
  rv: string;
}

// It drops, refuses and expires watches through the API test server's fault injection and counts
// requests in its log: neither exists on the real control plane, so there it does not run.
const describeOnTestServer = clusterKind === "test-server" ? describe : describe.skip;

describeOnTestServer.each(drivers)("an informer while policies change through %s", (_name, makeDriver) => {
  let server: TestApiServer;
  let driver: Driver;
  let ns: string;

  beforeAll(async () => {
    server = await startApiServer({ controllers: false, bookmarkIntervalMs: 60_000 });
    driver = makeDriver(server);
    expect(await driver.applyFile(crdsDir)).toEqual({ ok: true });
    await driver.waitEstablished(crdName);
    ns = uniqueName("ns");
    expect(await driver.apply([aNamespace(ns)])).toEqual({ ok: true });
  });
  afterAll(async () => {
    driver?.close();
    await server?.stop();
  });

  it("survives a dropped watch, a refused re-watch and a forced 410, ending with exactly the server's policies and every change delivered", async () => {
    for (let i = 0; i < 5; i++) expect(await driver.apply([aPolicy({ name: `p-${i}` })], ns)).toEqual({ ok: true });

    const kc = kubeConfigFor(server, "informer");
    const custom = kc.makeApiClient(CustomObjectsApi);
    const informer = makeInformer<Obj>(
      kc,
      `/apis/healthprobe.io/v1alpha1/namespaces/${ns}/healthprobepolicies`,
      () =>
        custom.listNamespacedCustomObject({
          group: policyGvr.group,
          version: policyGvr.version,
          namespace: ns,
          plural: policyGvr.resource,
        }) as Promise<KubernetesListObject<Obj>>,
    );
    const delivered: Delivered[] = [];
    const record = (verb: Delivered["verb"]) => (o: Obj) =>
      delivered.push({ verb, name: o.metadata!.name!, rv: o.metadata!.resourceVersion! });
    informer.on("add", record("add"));
    informer.on("update", record("update"));
    informer.on("delete", record("delete"));

    // client-node does not restart after an error: the owner does, except for the AbortError of stop().
    // Restarts wait on a gate so the test can keep the informer down while it changes things.
    const errors: unknown[] = [];
    let stopped = false;
    let gate: Promise<void> = Promise.resolve();
    let open = (): void => undefined;
    const holdRestarts = () => (gate = new Promise<void>((resolve) => (open = resolve)));
    informer.on("error", (err: any) => {
      if (stopped || err?.name === "AbortError") return;
      errors.push(err);
      void gate.then(() => informer.start());
    });

    const serverState = () =>
      server.store
        .list(policyGvr, ns)
        .map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`)
        .sort();
    const cacheState = () =>
      informer
        .list(ns)
        .map((o) => `${o.metadata!.name}@${o.metadata!.resourceVersion}`)
        .sort();
    const converged = (what: string) =>
      waitFor(() => JSON.stringify(cacheState()) === JSON.stringify(serverState()), {
        what: `cache converged ${what}`,
      });
    const rvOf = (name: string) => server.store.get(policyGvr, ns, name)!.metadata.resourceVersion as string;
    const lists = () =>
      server.requestLog.filter(
        (e) => e.user === "informer" && e.verb === "list" && e.resource === "healthprobepolicies",
      ).length;
    const watchesOpen = () =>
      server.requestLog.filter((e) => e.user === "informer" && e.verb === "watch" && e.code === 200).length;

    /** Creates one policy, changes one and deletes one through the driver; returns what the informer must deliver. */
    const changeThings = async (create: string, modify: string, remove: string): Promise<Delivered[]> => {
      expect(await driver.apply([aPolicy({ name: create })], ns)).toEqual({ ok: true });
      expect(await driver.patch(types.policy, ns, modify, { spec: { probe: { path: `/changed-${create}` } } })).toEqual(
        { ok: true },
      );
      const removedRv = rvOf(remove);
      expect(await driver.delete(types.policy, ns, remove)).toEqual({ ok: true });
      // A delete found by a re-list carries the object as last seen; one from the watch carries the final state.
      return [
        { verb: "add", name: create, rv: rvOf(create) },
        { verb: "update", name: modify, rv: rvOf(modify) },
        { verb: "delete", name: remove, rv: removedRv },
      ];
    };
    const expectDelivered = (expected: Delivered[]) => {
      for (const e of expected) {
        const seen = delivered.filter((d) => d.verb === e.verb && d.name === e.name);
        if (e.verb === "delete") expect(seen.length).toBe(1);
        else expect(seen.map((d) => d.rv)).toContain(e.rv);
      }
    };

    await informer.start();
    await converged("after the first list");
    expect(delivered.map((d) => `${d.verb} ${d.name}`).sort()).toEqual([
      "add p-0",
      "add p-1",
      "add p-2",
      "add p-3",
      "add p-4",
    ]);

    // 1. The stream ends: the informer re-watches from its resourceVersion by itself.
    const watchesBefore = watchesOpen();
    server.faults.dropWatches();
    const afterDrop = await changeThings("n-1", "p-1", "p-0");
    await converged("after a dropped watch");
    expectDelivered(afterDrop);
    expect(watchesOpen()).toBeGreaterThan(watchesBefore);
    expect(errors).toEqual([]);

    // 2. The re-watch is refused (500): the informer reports an error and stays down until restarted; the
    //    restart resumes from its resourceVersion, so the watch replays what happened meanwhile, no re-list.
    holdRestarts();
    const listsBefore = lists();
    server.faults.failNext({ verb: "watch", resource: "healthprobepolicies", count: 1, code: 500 });
    server.faults.dropWatches();
    await waitFor(() => errors.length === 1, { what: "the refused watch reported" });
    const whileDown = await changeThings("n-2", "p-2", "n-1");
    expect(cacheState()).not.toEqual(serverState());
    open();
    await converged("after a restart from the last resourceVersion");
    expectDelivered(whileDown);
    expect(lists()).toBe(listsBefore);

    // 3. Down again, and its resourceVersion is too old when it comes back (410 Expired): it must re-list,
    //    and the re-list must report the deletion it never saw as a delete.
    holdRestarts();
    server.faults.failNext({ verb: "watch", resource: "healthprobepolicies", count: 1, code: 500 });
    server.faults.dropWatches();
    await waitFor(() => errors.length === 2, { what: "the second refused watch reported" });
    const beforeExpiry = await changeThings("n-3", "p-3", "p-2");
    server.faults.expireNextWatch();
    open();
    await converged("after a forced 410");
    expectDelivered(beforeExpiry);
    expect(lists()).toBe(listsBefore + 1);

    expect(
      informer
        .list(ns)
        .map((o) => o.metadata!.name)
        .sort(),
    ).toEqual(["n-2", "n-3", "p-1", "p-3", "p-4"]);
    expect(errors).toHaveLength(2);
    stopped = true;
    await informer.stop();
  });
});
