import { describe, it, expect } from "@jest/globals";
import {
  DAY_MS,
  HOUR_MS,
  TWELVE_HOURS_MS,
  computeBudget,
  computeOperatorBudget,
  formatInstant,
  pruneLedger,
  type LedgerEntry,
} from "./budget.js";

const T0 = Date.parse("2026-11-30T10:00:00Z");
const MIN = 60 * 1000;

let serial = 0;
function anEntry(over: Partial<LedgerEntry> = {}): LedgerEntry {
  serial += 1;
  return { pod: `web-${serial}`, uid: `uid-${serial}`, time: T0, method: "Evict", ...over };
}
const at = (...offsetsMin: number[]) => offsetsMin.map((m) => anEntry({ time: T0 + m * MIN }));

describe("computeBudget", () => {
  const cases: Array<{
    name: string;
    entries: LedgerEntry[];
    now: number;
    limits: { maxPerHour: number; maxPerDay: number };
    fits: boolean;
    usedHour: number;
    usedDay: number;
    nextSlotAt?: number;
  }> = [
    {
      name: "an empty ledger fits",
      entries: [],
      now: T0,
      limits: { maxPerHour: 1, maxPerDay: 3 },
      fits: true,
      usedHour: 0,
      usedDay: 0,
    },
    {
      name: "an entry 59 minutes ago fills an hourly budget of 1 until 60 minutes after it",
      entries: at(-59),
      now: T0,
      limits: { maxPerHour: 1, maxPerDay: 3 },
      fits: false,
      usedHour: 1,
      usedDay: 1,
      nextSlotAt: T0 + 1 * MIN,
    },
    {
      name: "one millisecond before the hour has passed the slot is still taken",
      entries: at(0),
      now: T0 + HOUR_MS - 1,
      limits: { maxPerHour: 1, maxPerDay: 3 },
      fits: false,
      usedHour: 1,
      usedDay: 1,
      nextSlotAt: T0 + HOUR_MS,
    },
    {
      name: "exactly 60 minutes after an entry its hourly slot is free again",
      entries: at(0),
      now: T0 + HOUR_MS,
      limits: { maxPerHour: 1, maxPerDay: 3 },
      fits: true,
      usedHour: 0,
      usedDay: 1,
    },
    {
      name: "three entries spread over the day fill a daily budget of 3 until 24 hours after the oldest",
      entries: at(-600, -300, -120),
      now: T0,
      limits: { maxPerHour: 1, maxPerDay: 3 },
      fits: false,
      usedHour: 0,
      usedDay: 3,
      nextSlotAt: T0 - 600 * MIN + DAY_MS,
    },
    {
      name: "exactly 24 hours after the oldest entry the daily slot is free again",
      entries: at(-600, -300, -120),
      now: T0 - 600 * MIN + DAY_MS,
      limits: { maxPerHour: 1, maxPerDay: 3 },
      fits: true,
      usedHour: 0,
      usedDay: 2,
    },
    {
      name: "when hourly and daily both block, the later of their instants is the next slot",
      entries: at(-1000, -500, -10),
      now: T0,
      limits: { maxPerHour: 1, maxPerDay: 3 },
      fits: false,
      usedHour: 1,
      usedDay: 3,
      nextSlotAt: T0 - 1000 * MIN + DAY_MS,
    },
    {
      name: "with more entries than a lowered limit, the slot frees when enough of them have left",
      entries: at(-50, -40, -30),
      now: T0,
      limits: { maxPerHour: 2, maxPerDay: 10 },
      fits: false,
      usedHour: 3,
      usedDay: 3,
      nextSlotAt: T0 - 40 * MIN + HOUR_MS,
    },
    {
      name: "an entry in the future (a clock that stepped back) still counts",
      entries: at(30),
      now: T0,
      limits: { maxPerHour: 1, maxPerDay: 3 },
      fits: false,
      usedHour: 1,
      usedDay: 1,
      nextSlotAt: T0 + 90 * MIN,
    },
    {
      name: "maxPerHour 0 never fits and has no next slot",
      entries: [],
      now: T0,
      limits: { maxPerHour: 0, maxPerDay: 3 },
      fits: false,
      usedHour: 0,
      usedDay: 0,
    },
    {
      name: "maxPerDay 0 never fits even when the hour would",
      entries: at(-5),
      now: T0,
      limits: { maxPerHour: 5, maxPerDay: 0 },
      fits: false,
      usedHour: 1,
      usedDay: 1,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const result = computeBudget(c.entries, c.now, { ...c.limits, policy: "web" });
      expect(result.fits).toBe(c.fits);
      expect(result.usedHour).toBe(c.usedHour);
      expect(result.usedDay).toBe(c.usedDay);
      expect(result.nextSlotAt).toBe(c.nextSlotAt);
      if (result.nextSlotAt !== undefined) expect(result.nextSlotAt).toBeGreaterThan(c.now);
    });
  }

  it("explains an hourly block with the policy and the next slot in RFC 3339", () => {
    const result = computeBudget(at(-46), T0, { maxPerHour: 1, maxPerDay: 3, policy: "web" });
    expect(result.reason).toBe("hourly budget of policy web used 1/1, next slot 2026-11-30T10:14:00Z");
  });

  it("gives the next slot in whole seconds, never before it frees", () => {
    const result = computeBudget(
      [{ pod: "a", uid: "a", time: Date.parse("2026-11-30T10:00:00.749Z"), method: "Evict" }],
      Date.parse("2026-11-30T10:30:00Z"),
      { maxPerHour: 1, maxPerDay: 3, policy: "web" },
    );
    expect(result.reason).toBe("hourly budget of policy web used 1/1, next slot 2026-11-30T11:00:01Z");
  });

  it("explains a daily block with the policy and the next slot", () => {
    const result = computeBudget(at(-1380, -700, -300), T0, { maxPerHour: 1, maxPerDay: 3, policy: "web" });
    expect(result.reason).toBe("daily budget of policy web used 3/3, next slot 2026-11-30T11:00:00Z");
  });

  it("names both windows when both block", () => {
    const result = computeBudget(at(-1380, -700, -10), T0, { maxPerHour: 1, maxPerDay: 3, policy: "web" });
    expect(result.reason).toBe(
      "hourly budget of policy web used 1/1, next slot 2026-11-30T10:50:00Z; daily budget of policy web used 3/3, next slot 2026-11-30T11:00:00Z",
    );
  });

  it("says a zero limit never fits", () => {
    expect(computeBudget([], T0, { maxPerHour: 0, maxPerDay: 3, policy: "web" }).reason).toBe(
      "hourly budget of policy web is 0: replacement never fits",
    );
  });

  it("reports usage when the budget fits", () => {
    expect(computeBudget(at(-90), T0, { maxPerHour: 1, maxPerDay: 3, policy: "web" }).reason).toBe(
      "budget of policy web fits: hourly 0/1, daily 1/3",
    );
  });
});

describe("computeOperatorBudget", () => {
  const ten = Array.from({ length: 10 }, (_, i) => anEntry({ time: T0 - (11 * 60 - i * 60) * MIN, policy: "ns/web" }));

  it("blocks at the cap until 12 hours after the oldest entry", () => {
    const result = computeOperatorBudget(ten, T0, 10);
    expect(result).toEqual({
      fits: false,
      used: 10,
      nextSlotAt: T0 + 1 * HOUR_MS,
      reason: "operator-wide budget used 10/10 in 12h, next slot 2026-11-30T11:00:00Z",
    });
  });

  it("fits again exactly 12 hours after the oldest entry", () => {
    const result = computeOperatorBudget(ten, T0 - 11 * HOUR_MS + TWELVE_HOURS_MS, 10);
    expect(result.fits).toBe(true);
    expect(result.used).toBe(9);
  });

  it("fits below the cap", () => {
    expect(computeOperatorBudget(ten.slice(0, 9), T0, 10).fits).toBe(true);
  });

  it("never fits with a cap of 0", () => {
    const result = computeOperatorBudget([], T0, 0);
    expect(result.fits).toBe(false);
    expect(result.nextSlotAt).toBeUndefined();
  });
});

describe("pruneLedger", () => {
  it("keeps entries younger than the kept span, oldest first, and drops one exactly at its edge", () => {
    const [edge, inside, newest] = [
      anEntry({ time: T0 - DAY_MS }),
      anEntry({ time: T0 - DAY_MS + 1 }),
      anEntry({ time: T0 }),
    ];
    expect(pruneLedger([newest!, edge!, inside!], T0, DAY_MS)).toEqual([inside, newest]);
  });

  it("keeps 12 hours for the operator-wide ledger", () => {
    const old = anEntry({ time: T0 - 13 * HOUR_MS });
    const recent = anEntry({ time: T0 - 11 * HOUR_MS });
    expect(pruneLedger([old, recent], T0, TWELVE_HOURS_MS)).toEqual([recent]);
  });
});

describe("formatInstant", () => {
  it("writes whole seconds without a fraction and keeps milliseconds when present", () => {
    expect(formatInstant(T0)).toBe("2026-11-30T10:00:00Z");
    expect(formatInstant(T0 + 5)).toBe("2026-11-30T10:00:00.005Z");
  });
});
