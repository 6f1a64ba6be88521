import { describe, it, expect } from "@jest/globals";
import type { LedgerEntry } from "./budget.js";
import {
  OPERATOR_LEDGER_KEY,
  chargeLedger,
  decodeOperatorLedger,
  decodePolicyLedger,
  encodeOperatorLedger,
  encodePolicyLedger,
  isCharged,
  refundLedger,
  withoutPod,
  planStatusLedger,
} from "./ledger.js";

const T0 = Date.parse("2026-11-30T10:00:00Z");
const MIN = 60 * 1000;
const DAY = 24 * 60 * MIN;

function anEntry(over: Partial<LedgerEntry> = {}): LedgerEntry {
  return { pod: "web-1", uid: "uid-1", time: T0, method: "Evict", ...over };
}
function anItem(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { pod: "web-1", uid: "uid-1", time: "2026-11-30T10:00:00Z", method: "Evict", ...over };
}

describe("policy ledger (status.replacements)", () => {
  it("round-trips entries exactly, milliseconds included, oldest first", () => {
    const entries = [
      anEntry({ uid: "b", time: T0 + 1234 }),
      anEntry({ uid: "a", pod: "web-0", time: T0, method: "Delete" }),
    ];
    const encoded = encodePolicyLedger(entries);
    expect(encoded).toEqual([
      { pod: "web-0", uid: "a", time: "2026-11-30T10:00:00Z", method: "Delete" },
      { pod: "web-1", uid: "b", time: "2026-11-30T10:00:01.234Z", method: "Evict" },
    ]);
    const decoded = decodePolicyLedger(JSON.parse(JSON.stringify(encoded)));
    expect(decoded).toEqual({ ok: true, entries: [entries[1], entries[0]] });
  });

  it("reads a time with a zone offset as the same instant", () => {
    const decoded = decodePolicyLedger([anItem({ time: "2026-11-30T11:00:00+01:00" })]);
    expect(decoded).toEqual({ ok: true, entries: [anEntry()] });
  });

  it("reads an absent ledger as empty: a policy that never replaced anything", () => {
    expect(decodePolicyLedger(undefined)).toEqual({ ok: true, entries: [] });
    expect(decodePolicyLedger(null)).toEqual({ ok: true, entries: [] });
  });

  const corrupt: Array<{ name: string; raw: unknown; error: RegExp }> = [
    { name: "a ledger that is not a list", raw: { pod: "x" }, error: /status.replacements is not a list/ },
    { name: "an entry that is not an object", raw: ["web-1"], error: /entry 0 is not an object/ },
    {
      name: "an entry without a uid",
      raw: [anItem({ uid: undefined })],
      error: /entry 0: uid must be a non-empty string/,
    },
    { name: "an entry with an empty pod name", raw: [anItem(), anItem({ pod: "" })], error: /entry 1: pod must be/ },
    {
      name: "an entry with a date but no time",
      raw: [anItem({ time: "2026-11-30" })],
      error: /entry 0: time must be an RFC 3339/,
    },
    {
      name: "an entry with an impossible date",
      raw: [anItem({ time: "2026-13-45T10:00:00Z" })],
      error: /entry 0: time .* is not a valid/,
    },
    { name: "an entry with a numeric time", raw: [anItem({ time: T0 })], error: /entry 0: time must be/ },
    {
      name: "an entry with an unknown method",
      raw: [anItem({ method: "Kill" })],
      error: /entry 0: method must be Evict or Delete/,
    },
  ];
  for (const c of corrupt) {
    it(`rejects ${c.name} instead of reading it as empty`, () => {
      const decoded = decodePolicyLedger(c.raw);
      expect(decoded.ok).toBe(false);
      if (!decoded.ok) expect(decoded.error).toMatch(c.error);
    });
  }
});

describe("operator-wide ledger (ConfigMap data)", () => {
  it("round-trips entries with their policy under the ledger key", () => {
    const entries = [
      anEntry({ policy: "shop/web", time: T0 + 5 * MIN }),
      anEntry({ uid: "uid-0", policy: "shop/api" }),
    ];
    const data = encodeOperatorLedger(entries);
    expect(Object.keys(data)).toEqual([OPERATOR_LEDGER_KEY]);
    expect(JSON.parse(data[OPERATOR_LEDGER_KEY]!)).toEqual([
      { policy: "shop/api", pod: "web-1", uid: "uid-0", time: "2026-11-30T10:00:00Z", method: "Evict" },
      { policy: "shop/web", pod: "web-1", uid: "uid-1", time: "2026-11-30T10:05:00Z", method: "Evict" },
    ]);
    expect(decodeOperatorLedger(data)).toEqual({ ok: true, entries: [entries[1], entries[0]] });
  });

  it("reads a ConfigMap without data or without the key as empty", () => {
    expect(decodeOperatorLedger(undefined)).toEqual({ ok: true, entries: [] });
    expect(decodeOperatorLedger({ other: "x" })).toEqual({ ok: true, entries: [] });
  });

  const corrupt: Array<{ name: string; text: string; error: RegExp }> = [
    { name: "text that is not JSON", text: "[{", error: /not JSON/ },
    { name: "JSON that is not a list", text: "{}", error: /operator-wide ledger is not a list/ },
    {
      name: "an entry without its policy",
      text: JSON.stringify([anItem()]),
      error: /entry 0: policy must be a string/,
    },
    {
      name: "an entry with a bad time",
      text: JSON.stringify([anItem({ policy: "p", time: "yesterday" })]),
      error: /entry 0: time/,
    },
  ];
  for (const c of corrupt) {
    it(`rejects ${c.name}`, () => {
      const decoded = decodeOperatorLedger({ [OPERATOR_LEDGER_KEY]: c.text });
      expect(decoded.ok).toBe(false);
      if (!decoded.ok) expect(decoded.error).toMatch(c.error);
    });
  }
});

describe("charging", () => {
  it("adds a charge for a new pod uid", () => {
    const other = anEntry({ uid: "uid-0", time: T0 - MIN });
    expect(chargeLedger([other], anEntry())).toEqual([other, anEntry()]);
  });

  it("never holds two charges for one pod uid: a re-attempt moves the charge forward", () => {
    const first = anEntry({ time: T0 });
    const again = anEntry({ time: T0 + 10 * MIN });
    expect(chargeLedger([first], again)).toEqual([again]);
  });

  it("does not change the ledger it was given", () => {
    const ledger = [anEntry()];
    chargeLedger(ledger, anEntry({ uid: "uid-2" }));
    expect(ledger).toEqual([anEntry()]);
  });

  const chargedCases: Array<{ name: string; since: number; uid: string; expected: boolean }> = [
    { name: "a charge at the since instant counts", since: T0, uid: "uid-1", expected: true },
    { name: "a charge before the since instant does not", since: T0 + 1, uid: "uid-1", expected: false },
    { name: "another pod's charge does not", since: T0 - DAY, uid: "uid-9", expected: false },
  ];
  for (const c of chargedCases) {
    it(`isCharged: ${c.name}`, () => {
      expect(isCharged([anEntry()], c.uid, c.since)).toBe(c.expected);
    });
  }

  it("refunds exactly the charge of the refused attempt", () => {
    const refused = anEntry({ time: T0 });
    const other = anEntry({ uid: "uid-2" });
    expect(refundLedger([refused, other], "uid-1", T0)).toEqual([other]);
  });

  it("leaves a later charge for the same pod alone when refunding an older attempt", () => {
    const later = anEntry({ time: T0 + MIN });
    expect(refundLedger([later], "uid-1", T0)).toEqual([later]);
  });

  it("leaves a pod's own entries out for its re-attempt", () => {
    expect(withoutPod([anEntry(), anEntry({ uid: "uid-2" })], "uid-1")).toEqual([anEntry({ uid: "uid-2" })]);
  });
});

describe("planStatusLedger", () => {
  const now = Date.parse("2026-11-30T12:00:00Z");
  const recent = { pod: "web-a", uid: "u-a", time: "2026-11-30T11:00:00Z", method: "Evict" };
  const old = { pod: "web-b", uid: "u-b", time: "2026-11-29T11:00:00Z", method: "Evict" };

  it("writes the current ledger pruned to the last 24 hours", () => {
    const current = [
      { pod: "web-a", uid: "u-a", time: Date.parse(recent.time), method: "Evict" as const },
      { pod: "web-b", uid: "u-b", time: Date.parse(old.time), method: "Evict" as const },
    ];
    expect(planStatusLedger(undefined, now, current)).toEqual({ replacements: [recent] });
  });

  it("keeps a readable persisted ledger, pruned, when the reconcile had none", () => {
    expect(planStatusLedger([recent, old], now)).toEqual({ replacements: [recent] });
  });

  it("keeps an unreadable ledger exactly as it is and says why, never an empty list that would reset the budgets", () => {
    const corrupt = [recent, { pod: "ghost", uid: "", time: recent.time, method: "Evict" }];
    const planned = planStatusLedger(corrupt, now);
    expect(planned.replacements).toEqual(corrupt);
    expect(planned.unreadable).toMatch(/entry 1: uid must be a non-empty string/);
  });

  it("reads an absent ledger as empty", () => {
    expect(planStatusLedger(undefined, now)).toEqual({ replacements: [] });
  });
});
