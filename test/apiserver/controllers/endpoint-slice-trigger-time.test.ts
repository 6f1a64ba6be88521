// The EndpointSlice controller's last-change-trigger-time, as the real TriggerTimeTracker computes it.
import { describe, it, expect } from "@jest/globals";
import type { V1Pod, V1Service } from "@kubernetes/client-node";
import { TRIGGER_TIME_ANNOTATION, TriggerTimeTracker, withTriggerTime } from "./endpoint-slice-trigger-time.js";

const T = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const svc: V1Service = { metadata: { name: "web", namespace: "shop", creationTimestamp: T(0) } };
const pod = (name: string, readySince?: Date): V1Pod => ({
  metadata: { name },
  status: { conditions: readySince ? [{ type: "Ready", status: "True", lastTransitionTime: readySince }] : [] },
});

describe("last-change-trigger-time", () => {
  it("is the Service's creation time on the first sync, then the earliest changed Ready transition, then none", () => {
    const tracker = new TriggerTimeTracker();
    expect(tracker.compute("shop/web", svc, [pod("a", T(5))])).toBe(T(0).getTime());
    expect(tracker.compute("shop/web", svc, [pod("a", T(5)), pod("b", T(9)), pod("c", T(7))])).toBe(T(7).getTime());
    expect(tracker.compute("shop/web", svc, [pod("a", T(5)), pod("b", T(9)), pod("c", T(7))])).toBe(0);
    expect(tracker.compute("shop/web", svc, [pod("a", T(12)), pod("b", T(9)), pod("c", T(7)), pod("d")])).toBe(
      T(12).getTime(),
    );
    tracker.forget("shop/web");
    expect(tracker.compute("shop/web", svc, [pod("a", T(12))])).toBe(T(0).getTime());
  });

  it("writes the time in seconds, and removes the annotation when there is none", () => {
    const slice = { addressType: "IPv4", endpoints: [], metadata: { name: "web-x", annotations: { keep: "1" } } };
    expect(withTriggerTime(slice, T(3).getTime()).metadata!.annotations).toEqual({
      keep: "1",
      [TRIGGER_TIME_ANNOTATION]: "2026-01-01T00:00:03Z",
    });
    const stamped = withTriggerTime({ ...slice, metadata: { name: "web-x" } }, T(3).getTime());
    expect(withTriggerTime(stamped, 0).metadata).toEqual({ name: "web-x" });
  });
});
