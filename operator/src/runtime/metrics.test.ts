import { describe, it, expect } from "@jest/globals";
import { register as globalRegistry } from "prom-client";
import { controllerMetrics, createMetrics, queueMetrics } from "./metrics.js";
import { FairSlots } from "./fair-slots.js";
import { FakeClock } from "./testing/fake-clock.js";
import { WorkQueue, runController } from "./work-queue.js";

describe("metrics", () => {
  it("exposes every operator metric on its own registry", async () => {
    const before = (await globalRegistry.getMetricsAsJSON()).length;
    const m = createMetrics();
    const text = await m.registry.metrics();
    for (const name of [
      "healthprobe_probes_total",
      "healthprobe_probe_duration_seconds",
      "healthprobe_targets",
      "healthprobe_drained_targets",
      "healthprobe_replacements_total",
      "healthprobe_replacement_budget_remaining",
      "healthprobe_operator_replacement_budget_remaining",
      "healthprobe_reconcile_duration_seconds",
      "healthprobe_reconcile_errors_total",
      "healthprobe_workqueue_depth",
      "healthprobe_workqueue_adds_total",
      "healthprobe_leader",
      "healthprobe_status_writes_total",
      "healthprobe_event_writes_total",
      "healthprobe_probes_in_flight",
      "process_cpu_user_seconds_total",
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
    expect((await globalRegistry.getMetricsAsJSON()).length).toBe(before);
  });

  it("lets two instances coexist without duplicate-registration errors", () => {
    expect(() => {
      createMetrics({ processMetrics: false });
      createMetrics({ processMetrics: false });
    }).not.toThrow();
  });

  it("counts probe outcomes by result and failure class", async () => {
    const m = createMetrics({ processMetrics: false });
    m.recordProbe("shop/web", { ok: true }, 0.01);
    m.recordProbe("shop/web", { ok: false, class: "timeout" }, 1);
    m.recordProbe("shop/web", { ok: false, class: "timeout" }, 1);
    const text = await m.registry.metrics();
    expect(text).toContain('healthprobe_probes_total{policy="shop/web",result="success",class=""} 1');
    expect(text).toContain('healthprobe_probes_total{policy="shop/web",result="failure",class="timeout"} 2');
    expect(text).toContain('healthprobe_probe_duration_seconds_count{policy="shop/web"} 3');
  });

  it("stops exporting a deleted policy's series and keeps the others", async () => {
    const m = createMetrics({ processMetrics: false });
    m.targets.set({ policy: "shop/web", state: "Healthy" }, 3);
    m.targets.set({ policy: "shop/api", state: "Healthy" }, 2);
    m.replacementBudgetRemaining.set({ policy: "shop/web", window: "hour" }, 1);
    m.recordProbe("shop/web", { ok: true }, 0.01);
    await m.forgetPolicy("shop/web");
    const text = await m.registry.metrics();
    expect(text).not.toContain('policy="shop/web"');
    expect(text).toContain('healthprobe_targets{policy="shop/api",state="Healthy"} 2');
  });

  it("plugs into the work queue and controller loop", async () => {
    const m = createMetrics({ processMetrics: false });
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock, metrics: queueMetrics(m, "policy") });
    queue.add("shop/a");
    queue.add("shop/b");
    queue.add("shop/a");
    expect((await m.workqueueDepth.get()).values.find((v) => v.labels.queue === "policy")?.value).toBe(2);
    let calls = 0;
    const ctl = runController({
      queue,
      workers: 1,
      clock,
      logger: { info: () => {}, error: () => {} },
      metrics: controllerMetrics(m, "policy"),
      reconcile: async () => {
        if (++calls === 1) throw new Error("transient");
      },
    });
    await clock.advanceAsync(1000, 10);
    await ctl.stop();
    const text = await m.registry.metrics();
    expect(text).toContain('healthprobe_workqueue_adds_total{queue="policy"} 3');
    expect(text).toContain('healthprobe_workqueue_depth{queue="policy"} 0');
    expect(text).toContain('healthprobe_reconcile_errors_total{controller="policy"} 1');
    expect(text).toContain('healthprobe_reconcile_duration_seconds_count{controller="policy"} 3');
  });

  describe("probes in flight by namespace, from the fair slots", () => {
    const inFlightLines = async (m: ReturnType<typeof createMetrics>) =>
      (await m.registry.metrics()).split("\n").filter((l) => l.startsWith("healthprobe_probes_in_flight{"));
    /** Slots of 4, at most 2 per namespace, with t1 asking for 5 probes and t2 for 1, all granted that may be. */
    const busySlots = () => {
      const slots = new FairSlots<string>({ limit: 4, perNamespaceLimit: 2 });
      for (let i = 0; i < 5; i++) slots.push("t1", `t1-${i}`);
      slots.push("t2", "t2-0");
      while (slots.next() !== undefined);
      return slots;
    };
    it.each([
      {
        name: "one series per namespace with policies, at its share's use",
        namespaces: ["t1", "t2", "t3"],
        lines: [
          'healthprobe_probes_in_flight{namespace="t1"} 2',
          'healthprobe_probes_in_flight{namespace="t2"} 1',
          'healthprobe_probes_in_flight{namespace="t3"} 0',
        ],
      },
      {
        name: "one series for a namespace of several policies",
        namespaces: ["t1", "t1"],
        lines: ['healthprobe_probes_in_flight{namespace="t1"} 2'],
      },
      {
        name: "no series for a namespace without policies, even with probes still in flight",
        namespaces: ["t2"],
        lines: ['healthprobe_probes_in_flight{namespace="t2"} 1'],
      },
    ])("$name", async ({ namespaces, lines }) => {
      const slots = busySlots();
      const m = createMetrics({ processMetrics: false });
      m.watchProbesInFlight({ namespaces: () => namespaces, inFlightOf: (ns) => slots.inFlightOf(ns) });
      expect(await inFlightLines(m)).toEqual(lines);
    });

    it("drops a namespace's series once its last policy is gone, and follows releases", async () => {
      const slots = busySlots();
      let namespaces = ["t1", "t2"];
      const m = createMetrics({ processMetrics: false });
      m.watchProbesInFlight({ namespaces: () => namespaces, inFlightOf: (ns) => slots.inFlightOf(ns) });
      expect(await inFlightLines(m)).toEqual([
        'healthprobe_probes_in_flight{namespace="t1"} 2',
        'healthprobe_probes_in_flight{namespace="t2"} 1',
      ]);
      slots.release("t2");
      namespaces = ["t2"];
      expect(await inFlightLines(m)).toEqual(['healthprobe_probes_in_flight{namespace="t2"} 0']);
    });
  });
});
