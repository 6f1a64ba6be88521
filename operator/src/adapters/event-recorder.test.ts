import { describe, it, expect } from "@jest/globals";
import { FakeClock, flushMicrotasks } from "../runtime/testing/fake-clock.js";
import { EventRecorder, type EventInput, type EventSink, type EventsV1Event } from "./event-recorder.js";

/** Stores Events like the API server would and can be told to fail. */
function aSink() {
  const events = new Map<string, any>();
  const calls: string[] = [];
  const sink: EventSink & { events: typeof events; calls: string[]; failNext: number; failWith?: unknown } = {
    events,
    calls,
    failNext: 0,
    async create(namespace, event: EventsV1Event) {
      calls.push("create");
      if (sink.failNext > 0) {
        sink.failNext--;
        throw sink.failWith ?? Object.assign(new Error("unavailable"), { statusCode: 503 });
      }
      events.set(`${namespace}/${event.metadata!.name}`, JSON.parse(JSON.stringify(event)));
    },
    async patchSeries(namespace, name, series) {
      calls.push("patch");
      const e = events.get(`${namespace}/${name}`);
      if (!e) throw Object.assign(new Error("not found"), { statusCode: 404 });
      e.series = series;
    },
  };
  return sink;
}

const aPod = (name = "web-1") => ({ apiVersion: "v1", kind: "Pod", namespace: "shop", name, uid: `uid-${name}` });

function anEvent(over: Partial<EventInput> = {}): EventInput {
  return {
    regarding: aPod(),
    type: "Warning",
    reason: "Drained",
    action: "Drain",
    note: "probe failed 3 times",
    ...over,
  };
}

function aRecorder(extra: Partial<ConstructorParameters<typeof EventRecorder>[0]> = {}) {
  const clock = new FakeClock();
  const sink = aSink();
  let writes = 0;
  const recorder = new EventRecorder({
    sink,
    clock,
    identity: "replica-a",
    writable: true,
    metrics: { eventWrites: { inc: () => writes++ } },
    ...extra,
  });
  return { clock, sink, recorder, writes: () => writes };
}

describe("EventRecorder", () => {
  it("turns 100 identical events in a minute into one Event with a series, with bounded patches", async () => {
    const { clock, sink, recorder, writes } = aRecorder();
    const start = clock.now();
    for (let i = 0; i < 100; i++) {
      recorder.record(anEvent());
      await clock.advanceAsync(600);
    }
    await clock.advanceAsync(7 * 60_000, 1000);
    const creates = sink.calls.filter((c) => c === "create").length;
    const patches = sink.calls.filter((c) => c === "patch").length;
    expect(creates).toBe(1);
    expect(patches).toBeGreaterThanOrEqual(1);
    expect(patches).toBeLessThanOrEqual(3);
    expect(writes()).toBe(creates + patches);
    const [event] = [...sink.events.values()];
    expect(event.series.count).toBe(100);
    expect(event.series.lastObservedTime).toBe(new Date(start + 99 * 600).toISOString().replace("Z", "000Z"));
  });

  it("writes an events.k8s.io/v1 Event naming the controller, the replica, the action and the object", async () => {
    const { sink, recorder, clock } = aRecorder();
    recorder.record(
      anEvent({
        related: { apiVersion: "healthprobe.io/v1alpha1", kind: "HealthProbePolicy", namespace: "shop", name: "web" },
      }),
    );
    await flushMicrotasks();
    const [key, event] = [...sink.events.entries()][0]!;
    expect(key).toMatch(/^shop\/web-1\.[0-9a-f]+$/);
    expect(event).toMatchObject({
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      reportingController: "healthprobe.io/operator",
      reportingInstance: "replica-a",
      action: "Drain",
      reason: "Drained",
      type: "Warning",
      note: "probe failed 3 times",
      regarding: aPod(),
      related: { kind: "HealthProbePolicy", name: "web" },
      eventTime: new Date(clock.now()).toISOString().replace("Z", "000Z"),
    });
    expect(event.series).toBeUndefined();
  });

  it.each<[string, Partial<EventInput>]>([
    ["a different note", { note: "another note" }],
    ["a different reason", { reason: "Restored" }],
    ["a different type", { type: "Normal" }],
    ["a different action", { action: "Replace" }],
    ["a different object", { regarding: aPod("web-2") }],
  ])("keeps events with %s apart", async (_name, change) => {
    const { sink, recorder } = aRecorder();
    recorder.record(anEvent());
    recorder.record(anEvent(change));
    await flushMicrotasks();
    expect(sink.events.size).toBe(2);
  });

  it("puts events about cluster-scoped objects in the default namespace and truncates long notes", async () => {
    const { sink, recorder } = aRecorder();
    recorder.record(anEvent({ regarding: { apiVersion: "v1", kind: "Node", name: "node-1" }, note: "x".repeat(5000) }));
    await flushMicrotasks();
    const [key, event] = [...sink.events.entries()][0]!;
    expect(key.startsWith("default/node-1.")).toBe(true);
    expect(Buffer.byteLength(event.note)).toBeLessThanOrEqual(1024);
  });

  it("drops events while not the leader and writes once it is", async () => {
    const { sink, recorder } = aRecorder({ writable: false });
    recorder.record(anEvent());
    await flushMicrotasks();
    expect(sink.calls).toEqual([]);
    expect(recorder.stats().dropped).toBe(1);
    recorder.setWritable(true);
    recorder.record(anEvent());
    await flushMicrotasks();
    expect(sink.calls).toEqual(["create"]);
  });

  it("stops writing pending series counts when leadership is lost", async () => {
    const { clock, sink, recorder } = aRecorder();
    recorder.record(anEvent());
    recorder.record(anEvent());
    await flushMicrotasks();
    recorder.setWritable(false);
    await clock.advanceAsync(60_000, 1000);
    expect(sink.calls).toEqual(["create"]);
  });

  it("rate-limits writes per object: a burst of 25, then one per 5 minutes", async () => {
    const { clock, sink, recorder } = aRecorder();
    for (let i = 0; i < 40; i++) recorder.record(anEvent({ note: `distinct ${i}` }));
    recorder.record(anEvent({ regarding: aPod("other") }));
    await flushMicrotasks();
    expect(sink.events.size).toBe(26);
    expect(recorder.stats().dropped).toBe(15);
    await clock.advanceAsync(5 * 60_000, 30_000);
    recorder.record(anEvent({ note: "after refill" }));
    recorder.record(anEvent({ note: "no token yet" }));
    await flushMicrotasks();
    expect(sink.events.size).toBe(27);
  });

  it("keeps at most maxConcurrentWrites writes in flight; the rest wait their turn and are all written", async () => {
    const inner = aSink();
    const held: Array<() => void> = [];
    let running = 0;
    let most = 0;
    const sink: EventSink = {
      create: async (namespace, event) => {
        running++;
        most = Math.max(most, running);
        await new Promise<void>((release) => held.push(release));
        running--;
        await inner.create(namespace, event);
      },
      patchSeries: (namespace, name, series) => inner.patchSeries(namespace, name, series),
    };
    const { recorder } = aRecorder({ sink, maxConcurrentWrites: 3 });
    for (let i = 0; i < 20; i++) recorder.record(anEvent({ regarding: aPod(`web-${i}`) }));
    await flushMicrotasks();
    expect(held.length).toBe(3);
    while (held.length > 0) {
      held.shift()!();
      await flushMicrotasks();
    }
    await recorder.idle();
    expect(most).toBe(3);
    expect(inner.events.size).toBe(20);
  });

  it("opens a new Event when the same event recurs after the series window", async () => {
    const { clock, sink, recorder } = aRecorder();
    recorder.record(anEvent());
    await clock.advanceAsync(7 * 60_000, 30_000);
    recorder.record(anEvent());
    await flushMicrotasks();
    expect(sink.calls.filter((c) => c === "create")).toHaveLength(2);
    expect(sink.events.size).toBe(2);
  });

  it("re-creates an Event that disappeared, carrying the series count", async () => {
    const { clock, sink, recorder } = aRecorder();
    recorder.record(anEvent());
    await flushMicrotasks();
    sink.events.clear();
    recorder.record(anEvent());
    recorder.record(anEvent());
    await clock.advanceAsync(30_000, 1000);
    expect(sink.calls).toEqual(["create", "patch", "create"]);
    expect([...sink.events.values()][0].series.count).toBe(3);
  });

  it("retries a create that failed with a server error on the next heartbeat", async () => {
    const { clock, sink, recorder } = aRecorder();
    sink.failNext = 1;
    recorder.record(anEvent());
    await clock.advanceAsync(30_000, 1000);
    expect(sink.calls).toEqual(["create", "create"]);
    expect(sink.events.size).toBe(1);
  });

  it("gives up on an Event the server rejects as invalid", async () => {
    const { clock, sink, recorder } = aRecorder();
    sink.failNext = 1;
    sink.failWith = Object.assign(new Error("invalid"), { statusCode: 422 });
    recorder.record(anEvent());
    await clock.advanceAsync(120_000, 10_000);
    expect(sink.calls).toEqual(["create"]);
    expect(recorder.stats().failed).toBe(1);
  });

  it("writes pending counts on stop", async () => {
    const { sink, recorder } = aRecorder();
    recorder.record(anEvent());
    recorder.record(anEvent());
    await recorder.stop();
    expect([...sink.events.values()][0].series.count).toBe(2);
  });
});
