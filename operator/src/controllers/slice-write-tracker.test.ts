import { describe, expect, it } from "@jest/globals";
import { FakeClock } from "../runtime/testing/fake-clock.js";
import { SliceWriteTracker, TRACKER_TTL_MS } from "./slice-write-tracker.js";

const slice = (name: string, generation: number) => ({ metadata: { name, generation } });
const SVC = "shop/web";

describe("the slice write tracker", () => {
  it.each<{
    name: string;
    write: (t: SliceWriteTracker) => void;
    cached: Array<{ metadata: { name: string; generation: number } }>;
    stale: boolean;
  }>([
    { name: "nothing written: never stale", write: () => {}, cached: [slice("a", 1)], stale: false },
    {
      name: "the cache shows the generation we wrote: not stale",
      write: (t) => t.wrote(SVC, slice("a", 2)),
      cached: [slice("a", 2)],
      stale: false,
    },
    {
      name: "the cache shows an older generation than we wrote: stale",
      write: (t) => t.wrote(SVC, slice("a", 3)),
      cached: [slice("a", 2)],
      stale: true,
    },
    {
      name: "the cache shows a newer generation (someone else wrote after us): not stale",
      write: (t) => t.wrote(SVC, slice("a", 3)),
      cached: [slice("a", 4)],
      stale: false,
    },
    {
      name: "a slice we created is not in the cache yet: stale",
      write: (t) => t.wrote(SVC, slice("b", 1)),
      cached: [slice("a", 1)],
      stale: true,
    },
    {
      name: "a slice we deleted is still in the cache: stale",
      write: (t) => t.deleted(SVC, "a"),
      cached: [slice("a", 1)],
      stale: true,
    },
    {
      name: "a slice we deleted is gone from the cache: not stale",
      write: (t) => t.deleted(SVC, "a"),
      cached: [],
      stale: false,
    },
    {
      name: "a reply without a generation is not tracked",
      write: (t) => t.wrote(SVC, { metadata: { name: "a" } }),
      cached: [],
      stale: false,
    },
  ])("$name", ({ write, cached, stale }) => {
    const tracker = new SliceWriteTracker(new FakeClock());
    write(tracker);
    expect(tracker.isStale(SVC, cached)).toBe(stale);
  });

  it("forgets a write once the cache has caught up, so a later older copy is someone else's business", () => {
    const tracker = new SliceWriteTracker(new FakeClock());
    tracker.wrote(SVC, slice("a", 2));
    expect(tracker.isStale(SVC, [slice("a", 2)])).toBe(false);
    expect(tracker.isStale(SVC, [slice("a", 1)])).toBe(false);
  });

  it("trusts a cache that lags longer than the TTL", () => {
    const clock = new FakeClock();
    const tracker = new SliceWriteTracker(clock);
    tracker.wrote(SVC, slice("a", 2));
    clock.advance(TRACKER_TTL_MS + 1);
    expect(tracker.isStale(SVC, [slice("a", 1)])).toBe(false);
  });

  it("keeps Services apart", () => {
    const tracker = new SliceWriteTracker(new FakeClock());
    tracker.wrote("shop/api", slice("a", 2));
    expect(tracker.isStale(SVC, [slice("a", 1)])).toBe(false);
  });
});
