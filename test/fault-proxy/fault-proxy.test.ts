// The fault proxy in front of the API test server and, with HEALTHPROBE_TEST_CLUSTER=real, the real
// kube-apiserver: client-node's list, watch and patch through it see each fault exactly as
// injected, and without faults an informer through it ends with the same objects as one without.
import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import { ApiException, CoreV1Api, KubeConfig, Watch, makeInformer, type V1ConfigMap } from "@kubernetes/client-node";
import { startControlPlane } from "../../hack/control-plane/control-plane.js";
import { startFaultProxy, type FaultProxy } from "../../hack/fault-proxy/fault-proxy.js";
import { throughProxy } from "../../hack/fault-proxy/kubeconfig.js";
import { RuleSet, requestInfo } from "../../hack/fault-proxy/rules.js";
import { startApiServer } from "../../hack/apiserver/index.js";
import { asMergePatch, uniqueName } from "../../hack/apiserver/test-kit.js";
import { waitFor } from "../support/wait-for.js";

interface Upstream {
  url: string;
  kubeconfig(user?: string): string;
  stop(): Promise<void>;
}

const onReal = process.env.HEALTHPROBE_TEST_CLUSTER === "real";
const clusters: Array<[string, () => Promise<Upstream>, boolean]> = [
  ["the API test server", () => startApiServer({ controllers: false }), true],
  ["the real control plane", () => startControlPlane(), onReal],
];

function kc(yaml: string): KubeConfig {
  const k = new KubeConfig();
  k.loadFromString(yaml);
  return k;
}

async function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (err: unknown) => err,
  );
}

/** A watch's events and how it ended, through client-node's Watch. */
function watchConfigMaps(k: KubeConfig, ns: string, resourceVersion?: string) {
  const events: Array<{ phase: string; name: string; code?: number }> = [];
  const state: { ended?: boolean; err?: unknown; abort?: AbortController } = {};
  const started = new Watch(k)
    .watch(
      `/api/v1/namespaces/${ns}/configmaps`,
      resourceVersion ? { resourceVersion } : {},
      (phase, obj) => events.push({ phase, name: obj?.metadata?.name ?? "", code: obj?.code }),
      (err) => {
        state.ended = true;
        state.err = err;
      },
    )
    .then((a) => (state.abort = a));
  return { events, state, started, stop: () => state.abort?.abort() };
}

describe("fault rules", () => {
  const info = (method: string, url: string) => requestInfo(method, url, {});

  it.each([
    ["GET", "/api/v1/namespaces/a/pods", "list", "pods", "a"],
    ["GET", "/api/v1/namespaces/a/pods?watch=true&resourceVersion=5", "watch", "pods", "a"],
    ["GET", "/api/v1/namespaces/a/pods/p", "get", "pods", "a"],
    [
      "PATCH",
      "/apis/healthprobe.io/v1alpha1/namespaces/a/healthprobepolicies/p/status",
      "patch",
      "healthprobepolicies",
      "a",
    ],
    ["POST", "/api/v1/namespaces/a/pods/p/eviction", "create", "pods", "a"],
    ["PUT", "/apis/coordination.k8s.io/v1/namespaces/s/leases/l", "update", "leases", "s"],
    ["DELETE", "/api/v1/namespaces/a/pods", "deletecollection", "pods", "a"],
    ["GET", "/api/v1/namespaces/a", "get", "namespaces", ""],
  ])("reads %s %s as verb %s on %s in namespace %j", (method, url, verb, resource, namespace) => {
    expect(info(method, url)).toMatchObject({ verb, resource, namespace });
  });

  it("draws the same requests for the same seed", () => {
    const draw = (seed: number) => {
      const rules = new RuleSet(seed);
      rules.add({ probability: 0.3, fault: { kind: "status", code: 503 } });
      return Array.from({ length: 50 }, () => rules.pick(info("GET", "/api/v1/pods")).length);
    };
    expect(draw(7)).toEqual(draw(7));
    expect(draw(7)).not.toEqual(draw(8));
  });

  it("gives a 409 to writes only, and stops after its count", () => {
    const rules = new RuleSet(1);
    rules.add({ count: 1, fault: { kind: "status", code: 409 } });
    expect(rules.pick(info("GET", "/api/v1/namespaces/a/pods/p"))).toEqual([]);
    expect(rules.pick(info("PATCH", "/api/v1/namespaces/a/pods/p"))).toEqual([{ kind: "status", code: 409 }]);
    expect(rules.pick(info("PATCH", "/api/v1/namespaces/a/pods/p"))).toEqual([]);
  });

  it.each([
    [{ fault: { kind: "nope" } }, /fault.kind/],
    [{ fault: { kind: "status", code: 200 } }, /fault.code/],
    [{ probability: 2, fault: { kind: "reset" } }, /probability/],
    [{ count: 0, fault: { kind: "reset" } }, /count/],
  ])("refuses the rule %j naming the field", (rule, message) => {
    expect(() => new RuleSet(1).add(rule as never)).toThrow(message);
  });
});

describe.each(clusters)("client-node through the fault proxy in front of %s", (_name, start, enabled) => {
  (enabled ? describe : describe.skip)("", () => {
    let upstream: Upstream;
    let proxy: FaultProxy;
    let direct: CoreV1Api;
    let viaProxy: KubeConfig;
    let core: CoreV1Api;
    const ns = "default";

    beforeAll(async () => {
      upstream = await start();
      proxy = await startFaultProxy({ upstream: upstream.url, name: "client", seed: 3 });
      direct = kc(upstream.kubeconfig("admin")).makeApiClient(CoreV1Api);
      viaProxy = kc(throughProxy(upstream.kubeconfig("admin"), proxy.url));
      core = viaProxy.makeApiClient(CoreV1Api);
    }, 180_000);
    afterAll(async () => {
      await proxy?.stop();
      await upstream?.stop();
    });
    afterEach(() => proxy.clear());

    const aConfigMap = (name = uniqueName("cm")): V1ConfigMap => ({
      metadata: { name, namespace: ns, labels: { suite: "fault-proxy" } },
      data: { k: "v" },
    });

    it("is transparent without faults: an informer through it ends with the same objects as one without", async () => {
      const names = Array.from({ length: 5 }, () => uniqueName("cm"));
      for (const n of names.slice(0, 3)) await direct.createNamespacedConfigMap({ namespace: ns, body: aConfigMap(n) });
      const inform = (k: KubeConfig) => {
        const api = k.makeApiClient(CoreV1Api);
        const inf = makeInformer<V1ConfigMap>(
          k,
          `/api/v1/namespaces/${ns}/configmaps`,
          () => api.listNamespacedConfigMap({ namespace: ns, labelSelector: "suite=fault-proxy" }),
          "suite=fault-proxy",
        );
        return inf;
      };
      const a = inform(viaProxy);
      const b = inform(kc(upstream.kubeconfig("admin")));
      a.on("error", () => undefined);
      b.on("error", () => undefined);
      await Promise.all([a.start(), b.start()]);
      for (const n of names.slice(3)) await core.createNamespacedConfigMap({ namespace: ns, body: aConfigMap(n) });
      await core.deleteNamespacedConfigMap({ namespace: ns, name: names[0]! });
      await core.patchNamespacedConfigMap(
        { namespace: ns, name: names[1]!, body: { data: { k: "changed" } } },
        asMergePatch,
      );
      const view = (inf: typeof a) =>
        inf
          .list()
          .map((c) => `${c.metadata!.name}=${c.data?.k}@${c.metadata!.resourceVersion}`)
          .sort()
          .join(",");
      const want = (await direct.listNamespacedConfigMap({ namespace: ns, labelSelector: "suite=fault-proxy" })).items
        .map((c) => `${c.metadata!.name}=${c.data?.k}@${c.metadata!.resourceVersion}`)
        .sort()
        .join(",");
      await waitFor(() => view(a) === want && view(b) === want, {
        what: "both informers to hold the server's config maps",
      });
      expect(view(a)).toBe(view(b));
      await Promise.all([a.stop(), b.stop()]);
      expect(proxy.log.filter((e) => e.faults.length > 0)).toEqual([]);
    });

    it.each([
      [503, undefined],
      [500, undefined],
      [429, "1"],
    ])("answers the next list with %i (Retry-After %j), then forwards again", async (code, retryAfter) => {
      const from = proxy.log.length;
      proxy.failNext({ count: 1, code, verb: "list", resource: "configmaps" });
      const err = await failure(core.listNamespacedConfigMap({ namespace: ns }));
      expect(err).toBeInstanceOf(ApiException);
      expect((err as ApiException<unknown>).code).toBe(code);
      expect((err as ApiException<unknown>).headers["retry-after"]).toBe(retryAfter);
      await expect(core.listNamespacedConfigMap({ namespace: ns })).resolves.toHaveProperty("items");
      expect(
        proxy.log
          .slice(from)
          .filter((e) => e.faults.length > 0)
          .map((e) => [e.verb, e.code, e.faults]),
      ).toEqual([["list", code, [`status ${code}`]]]);
    });

    it("answers a patch with 409 and leaves the object unchanged, and never a read", async () => {
      const name = uniqueName("cm");
      await direct.createNamespacedConfigMap({ namespace: ns, body: aConfigMap(name) });
      proxy.failNext({ count: 1, code: 409 });
      await expect(core.readNamespacedConfigMap({ namespace: ns, name })).resolves.toHaveProperty("data.k", "v");
      const err = await failure(
        core.patchNamespacedConfigMap({ namespace: ns, name, body: { data: { k: "x" } } }, asMergePatch),
      );
      expect((err as ApiException<unknown>).code).toBe(409);
      expect((await direct.readNamespacedConfigMap({ namespace: ns, name })).data).toEqual({ k: "v" });
      await core.patchNamespacedConfigMap({ namespace: ns, name, body: { data: { k: "x" } } }, asMergePatch);
      expect((await direct.readNamespacedConfigMap({ namespace: ns, name })).data).toEqual({ k: "x" });
    });

    it("delays a request by the latency it was given and logs it", async () => {
      proxy.addLatency(150, { verb: "get", resource: "namespaces" });
      await core.readNamespace({ name: ns });
      const e = proxy.log.at(-1)!;
      expect(e.faults).toEqual(["latency 150"]);
      expect(e.code).toBe(200);
    });

    it("resets the connection of a request, and the write does not reach the server", async () => {
      const name = uniqueName("cm");
      proxy.addRule({ count: 1, verb: "create", fault: { kind: "reset" } });
      await failure(core.createNamespacedConfigMap({ namespace: ns, body: aConfigMap(name) }));
      expect(await failure(direct.readNamespacedConfigMap({ namespace: ns, name }))).toHaveProperty("code", 404);
      expect(proxy.log.at(-1)).toMatchObject({ verb: "create", code: 0, faults: ["reset"], forwarded: false });
    });

    it("cuts a response mid-body, and client-node fails to read it", async () => {
      proxy.addRule({ count: 1, verb: "list", resource: "configmaps", fault: { kind: "truncate" } });
      await failure(core.listNamespacedConfigMap({ namespace: ns }));
      expect(proxy.log.at(-1)).toMatchObject({ verb: "list", code: 200, faults: ["truncate"], forwarded: true });
    });

    it("answers a list from a resourceVersion with 410 Expired", async () => {
      const rv = (await direct.listNamespacedConfigMap({ namespace: ns })).metadata!.resourceVersion!;
      proxy.addRule({ count: 1, fault: { kind: "expire" } });
      const err = await failure(
        core.listNamespacedConfigMap({ namespace: ns, resourceVersion: rv, resourceVersionMatch: "NotOlderThan" }),
      );
      expect((err as ApiException<unknown>).code).toBe(410);
    });

    it("expires the next watch from a resourceVersion with a 410 ERROR event", async () => {
      const rv = (await direct.listNamespacedConfigMap({ namespace: ns })).metadata!.resourceVersion!;
      proxy.expireNextWatch();
      const w = watchConfigMaps(viaProxy, ns, rv);
      await waitFor(() => w.state.ended, { what: "the expired watch to end" });
      expect(w.events).toEqual([{ phase: "ERROR", name: "", code: 410 }]);
    });

    it("drops a watch after the events it was given: the client sees the stream end", async () => {
      const rv = (await direct.listNamespacedConfigMap({ namespace: ns })).metadata!.resourceVersion!;
      proxy.addRule({ count: 1, fault: { kind: "drop-watch", afterEvents: 2 } });
      const w = watchConfigMaps(viaProxy, ns, rv);
      await w.started;
      const names = [uniqueName("cm"), uniqueName("cm"), uniqueName("cm")];
      for (const n of names) await direct.createNamespacedConfigMap({ namespace: ns, body: aConfigMap(n) });
      await waitFor(() => w.state.ended, { what: "the dropped watch to end" });
      expect(w.events.map((e) => e.name)).toEqual(names.slice(0, 2));
      expect(proxy.openWatches()).toBe(0);
    });

    it("stalls a watch: no event passes, the connection stays open, then dropWatches ends it", async () => {
      const rv = (await direct.listNamespacedConfigMap({ namespace: ns })).metadata!.resourceVersion!;
      proxy.addRule({ count: 1, fault: { kind: "stall-watch", afterEvents: 1 } });
      const stalled = watchConfigMaps(viaProxy, ns, rv);
      const witness = watchConfigMaps(kc(upstream.kubeconfig("admin")), ns, rv);
      await Promise.all([stalled.started, witness.started]);
      const names = [uniqueName("cm"), uniqueName("cm")];
      for (const n of names) await direct.createNamespacedConfigMap({ namespace: ns, body: aConfigMap(n) });
      await waitFor(() => names.every((n) => witness.events.some((e) => e.name === n)), {
        what: "the direct watch to see both config maps",
      });
      expect(stalled.events.map((e) => e.name)).toEqual(names.slice(0, 1));
      expect(stalled.state.ended).toBeUndefined();
      expect(proxy.openWatches()).toBe(1);
      proxy.dropWatches();
      await waitFor(() => stalled.state.ended, { what: "the stalled watch to end" });
      witness.stop();
    });

    it("refuses everything while partitioned, and forwards again once the rule is removed (control API)", async () => {
      const post = (path: string, body?: object) =>
        fetch(`${proxy.url}/fault-proxy/${path}`, {
          method: "POST",
          body: body ? JSON.stringify(body) : undefined,
        }).then((r) => r.json() as Promise<{ id: number }>);
      const { id } = await post("partition");
      await failure(core.readNamespace({ name: ns }));
      expect(await post("rules", { fault: { kind: "status", code: 200 } })).toHaveProperty(
        "error",
        expect.stringMatching(/fault.code/),
      );
      await fetch(`${proxy.url}/fault-proxy/rules/${id}`, { method: "DELETE" });
      await expect(core.readNamespace({ name: ns })).resolves.toHaveProperty("metadata.name", ns);
    });
  });
});
