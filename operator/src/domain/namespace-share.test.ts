// The per-namespace share of the operator-wide cap (--max-replacements-per-12h-per-namespace).
import { describe, it, expect } from "@jest/globals";
import { HOUR_MS, computeNamespaceBudget, namespaceOfKey, type LedgerEntry } from "./budget.js";
import { OPERATOR_LEDGER_KEY, decodeOperatorLedger, encodeOperatorLedger } from "./ledger.js";
import { shouldReplace } from "./replacement.js";
import { aPolicy, anEntry, anInput, NOW } from "./testing/replacement-builders.js";

/** `n` operator-wide entries of one namespace (undefined: entries written before shares), an hour apart from `since`. */
function charges(namespace: string | undefined, n: number, since = NOW - 10 * HOUR_MS): LedgerEntry[] {
  return Array.from({ length: n }, (_, i) =>
    anEntry({
      uid: `${namespace ?? "old"}-${i}`,
      time: since + i * HOUR_MS,
      policy: `${namespace ?? "old"}/web`,
      ...(namespace !== undefined ? { namespace } : {}),
    }),
  );
}

describe("computeNamespaceBudget", () => {
  const share = (namespace: string, max12h: number) => ({ namespace, max12h, operatorMax12h: 10 });
  const cases: Array<{
    name: string;
    entries: LedgerEntry[];
    namespace: string;
    max12h: number;
    fits: boolean;
    used: number;
    reason: RegExp;
    nextSlotAt?: number;
  }> = [
    {
      name: "an empty ledger fits",
      entries: [],
      namespace: "t1",
      max12h: 5,
      fits: true,
      used: 0,
      reason: /^share of namespace t1 fits: 0\/5 in 12h$/,
    },
    {
      name: "other namespaces' entries do not count",
      entries: charges("t2", 5),
      namespace: "t1",
      max12h: 5,
      fits: true,
      used: 0,
      reason: /fits: 0\/5/,
    },
    {
      name: "entries without a namespace (written before shares) do not count",
      entries: charges(undefined, 5),
      namespace: "t1",
      max12h: 5,
      fits: true,
      used: 0,
      reason: /fits: 0\/5/,
    },
    {
      name: "a namespace that spent its share waits for its oldest entry to leave the 12 h window",
      entries: charges("t1", 5),
      namespace: "t1",
      max12h: 5,
      fits: false,
      used: 5,
      reason:
        /^namespace t1 used its 5 of the operator-wide 10 replacements per 12h \(--max-replacements-per-12h-per-namespace=5\), next slot 2026-11-30T12:00:00Z$/,
      nextSlotAt: NOW - 10 * HOUR_MS + 12 * HOUR_MS,
    },
    {
      name: "entries older than 12 hours have left the window",
      entries: charges("t1", 5, NOW - 20 * HOUR_MS),
      namespace: "t1",
      max12h: 5,
      fits: true,
      used: 0,
      reason: /fits: 0\/5/,
    },
    {
      name: "a share of 0 never fits",
      entries: [],
      namespace: "t1",
      max12h: 0,
      fits: false,
      used: 0,
      reason: /^namespace t1 has no share of the operator-wide replacements per 12h/,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const result = computeNamespaceBudget(c.entries, NOW, share(c.namespace, c.max12h));
      expect(result).toMatchObject({ fits: c.fits, used: c.used });
      expect(result.reason).toMatch(c.reason);
      expect(result.nextSlotAt).toBe(c.nextSlotAt);
    });
  }
});

describe("namespaceOfKey", () => {
  const cases: Array<[string, string, string | undefined]> = [
    ["a policy key names its namespace", "t1/web", "t1"],
    ["a key without a slash has none", "web", undefined],
    ["a key with an empty namespace has none", "/web", undefined],
  ];
  for (const [name, key, namespace] of cases) it(name, () => expect(namespaceOfKey(key)).toBe(namespace));
});

describe("shouldReplace: the namespace's share", () => {
  const policy = aPolicy({ policy: "t1/web", maxPerHour: 10, maxPerDay: 10 });
  const cases: Array<{ name: string; ledger: LedgerEntry[]; share?: number; eligible: boolean; reason?: RegExp }> = [
    {
      name: "blocks a namespace that spent its share although the operator-wide cap has room",
      ledger: charges("t1", 5),
      share: 5,
      eligible: false,
      reason: /namespace t1 used its 5 of the operator-wide 10/,
    },
    {
      name: "lets another namespace replace while one has spent its share",
      ledger: [...charges("t2", 5)],
      share: 5,
      eligible: true,
    },
    {
      name: "counts entries without a namespace against the operator-wide cap only",
      ledger: charges(undefined, 9),
      share: 5,
      eligible: true,
    },
    { name: "applies no share when none is given", ledger: charges("t1", 9), eligible: true },
    {
      name: "names both when the operator-wide cap and the share are spent",
      ledger: [...charges("t1", 5), ...charges("t2", 5, NOW - 9 * HOUR_MS)],
      share: 5,
      eligible: false,
      reason: /operator-wide budget used 10\/10 in 12h.*; namespace t1 used its 5/,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const decision = shouldReplace(
        anInput({
          policy,
          operatorLedger: c.ledger,
          max12h: 10,
          ...(c.share !== undefined ? { maxPerNamespace12h: c.share } : {}),
        }),
      );
      expect(decision.eligible).toBe(c.eligible);
      if (!decision.eligible && c.reason) {
        expect(decision).toMatchObject({ step: "Budget", blockedReason: "Budget" });
        expect(decision.reason).toMatch(c.reason);
      }
    });
  }

  it("records the namespace on the charge, so the share can count it", () => {
    const decision = shouldReplace(anInput({ policy, maxPerNamespace12h: 5 }));
    expect(decision.eligible && decision.charge.entry.namespace).toBe("t1");
  });

  it("leaves the pod's own earlier charge out of its namespace's count (a re-attempt)", () => {
    const ledger = [
      ...charges("t1", 4),
      anEntry({ uid: "uid-a", pod: "web-a", time: NOW - HOUR_MS, policy: "t1/web", namespace: "t1" }),
    ];
    expect(shouldReplace(anInput({ policy, operatorLedger: ledger, maxPerNamespace12h: 5 })).eligible).toBe(true);
  });
});

describe("operator-wide ledger: the namespace field", () => {
  it("round-trips an entry's namespace", () => {
    const entries = charges("t1", 1);
    const data = encodeOperatorLedger(entries);
    expect(JSON.parse(data[OPERATOR_LEDGER_KEY]!)[0]).toMatchObject({ policy: "t1/web", namespace: "t1" });
    expect(decodeOperatorLedger(data)).toEqual({ ok: true, entries });
  });

  it("reads an entry written before shares (no namespace) as one without a namespace", () => {
    const text = JSON.stringify([
      { policy: "t1/web", pod: "web-1", uid: "u1", time: "2026-11-30T09:00:00Z", method: "Evict" },
    ]);
    const decoded = decodeOperatorLedger({ [OPERATOR_LEDGER_KEY]: text });
    expect(decoded.ok && decoded.entries[0]).toEqual({
      policy: "t1/web",
      pod: "web-1",
      uid: "u1",
      time: Date.parse("2026-11-30T09:00:00Z"),
      method: "Evict",
    });
  });

  it("rejects an empty or non-string namespace instead of reading it as none", () => {
    for (const namespace of ["", 7]) {
      const text = JSON.stringify([
        { policy: "t1/web", namespace, pod: "web-1", uid: "u1", time: "2026-11-30T09:00:00Z", method: "Evict" },
      ]);
      const decoded = decodeOperatorLedger({ [OPERATOR_LEDGER_KEY]: text });
      expect(decoded.ok).toBe(false);
      if (!decoded.ok) expect(decoded.error).toMatch(/entry 0: namespace must be a non-empty string/);
    }
  });
});
