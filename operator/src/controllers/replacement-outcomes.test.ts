import { describe, expect, it } from "@jest/globals";
import { ReplacementOutcomes, type ReplacementOutcome } from "./replacement-outcomes.js";

const NONE: ReplacementOutcome = {
  condition: { blocked: false, reason: "NoneWaiting", message: "no due replacement is waiting" },
};
const BUDGET: ReplacementOutcome = {
  condition: { blocked: true, reason: "Budget", message: "1 due replacement is waiting: web-a: hourly budget used" },
};
const CHARGED: ReplacementOutcome = {
  ...NONE,
  ledger: [{ pod: "web-a", uid: "uid-web-a", time: Date.UTC(2026, 0, 1, 12), method: "Evict" }],
};

describe("the replacement outcomes handed to the status pass", () => {
  it.each([
    { name: "a first outcome wakes the policy", outcomes: [NONE], wakes: 1 },
    { name: "the same outcome again wakes nothing", outcomes: [NONE, NONE], wakes: 1 },
    { name: "another condition wakes the policy", outcomes: [NONE, BUDGET], wakes: 2 },
    { name: "a charge in the ledger wakes the policy", outcomes: [NONE, CHARGED], wakes: 2 },
  ])("$name", ({ outcomes, wakes }) => {
    const woken: string[] = [];
    const store = new ReplacementOutcomes((key) => woken.push(key));
    for (const o of outcomes) store.record("shop/web", o);
    expect(woken).toEqual(Array.from({ length: wakes }, () => "shop/web"));
    expect(store.outcomeOf("shop/web")).toEqual(outcomes.at(-1));
  });

  it("forgets a policy: nothing is reported for it until the replacement controller runs again", () => {
    const store = new ReplacementOutcomes();
    store.record("shop/web", BUDGET);
    store.forget("shop/web");
    expect(store.outcomeOf("shop/web")).toBeUndefined();
  });
});
