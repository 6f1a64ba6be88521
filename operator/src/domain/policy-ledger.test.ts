import { describe, expect, it } from "@jest/globals";
import { mergeLedgers, policyLedgerName } from "./policy-ledger.js";

const T0 = Date.parse("2026-11-30T10:00:00Z");

describe("a policy's ledger ConfigMap", () => {
  it.each([
    { name: "a short policy name is the name with a suffix", policy: "web", expected: "web-healthprobe-ledger" },
    {
      name: "a name that just fits is kept whole",
      policy: "a".repeat(234),
      expected: `${"a".repeat(234)}-healthprobe-ledger`,
    },
  ])("is named after its policy: $name", ({ policy, expected }) => {
    expect(policyLedgerName(policy)).toBe(expected);
  });

  it("shortens a name too long for 253 characters with a hash of the whole, so two long names stay apart", () => {
    const a = policyLedgerName(`${"a".repeat(240)}-one`);
    const b = policyLedgerName(`${"a".repeat(240)}-two`);
    expect(a.length).toBeLessThanOrEqual(253);
    expect(a).toMatch(/^a+-[0-9a-f]{8}-healthprobe-ledger$/);
    expect(a).not.toBe(b);
  });

  it("merges two ledgers keeping one entry per pod uid, the later charge", () => {
    const e = (uid: string, time: number) => ({ pod: uid, uid, time, method: "Evict" as const });
    expect(mergeLedgers([e("a", T0), e("b", T0 + 5)], [e("b", T0 + 1), e("c", T0 + 2)])).toEqual([
      e("a", T0),
      e("c", T0 + 2),
      e("b", T0 + 5),
    ]);
  });
});
