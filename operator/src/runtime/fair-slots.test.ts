import { describe, expect, it } from "@jest/globals";
import { FairSlots } from "./fair-slots.js";

/** Pushes "ns:i" items for each namespace in order, then takes every grant next() allows. */
function aPool(limit: number, perNamespaceLimit: number, pushes: string[]) {
  const slots = new FairSlots<string>({ limit, perNamespaceLimit });
  const count = new Map<string, number>();
  for (const ns of pushes) {
    const i = count.get(ns) ?? 0;
    count.set(ns, i + 1);
    slots.push(ns, `${ns}:${i}`);
  }
  return slots;
}

function grantAll(slots: FairSlots<string>): string[] {
  const out: string[] = [];
  for (let item = slots.next(); item !== undefined; item = slots.next()) out.push(item);
  return out;
}

describe("FairSlots", () => {
  it.each<[string, number, number, string[], string[]]>([
    ["grants in push order within one namespace", 3, 3, ["a", "a", "a", "a"], ["a:0", "a:1", "a:2"]],
    [
      "alternates between namespaces that both have work waiting",
      4,
      4,
      ["a", "a", "a", "b", "b"],
      ["a:0", "b:0", "a:1", "b:1"],
    ],
    [
      "stops one namespace at its limit and gives the rest to the others",
      6,
      2,
      ["a", "a", "a", "a", "b", "c"],
      ["a:0", "b:0", "c:0", "a:1"],
    ],
    ["never grants beyond the global limit", 2, 2, ["a", "b", "c"], ["a:0", "b:0"]],
    ["grants nothing when nothing waits", 4, 2, [], []],
  ])("%s", (_name, limit, perNamespace, pushes, granted) => {
    expect(grantAll(aPool(limit, perNamespace, pushes))).toEqual(granted);
  });

  it("hands a released slot to the namespace next in turn, not back to the one that filled the pool", () => {
    const slots = aPool(2, 2, ["a", "a", "a", "a", "b"]);
    expect(grantAll(slots)).toEqual(["a:0", "b:0"]);
    slots.push("c", "c:0");
    slots.release("a");
    expect(grantAll(slots)).toEqual(["a:1"]);
    slots.release("b");
    expect(grantAll(slots)).toEqual(["c:0"]);
    slots.release("a");
    expect(grantAll(slots)).toEqual(["a:2"]);
  });

  it("lets a namespace at its limit go on once one of its slots is released", () => {
    const slots = aPool(10, 1, ["a", "a"]);
    expect(grantAll(slots)).toEqual(["a:0"]);
    expect(slots).toMatchObject({ inFlight: 1, waiting: 1 });
    slots.release("a");
    expect(grantAll(slots)).toEqual(["a:1"]);
  });

  it("counts in flight and waiting per namespace, and forgets a namespace with neither", () => {
    const slots = aPool(10, 1, ["a", "a", "b"]);
    grantAll(slots);
    expect([slots.inFlightOf("a"), slots.waitingOf("a"), slots.inFlightOf("b"), slots.waitingOf("b")]).toEqual([
      1, 1, 1, 0,
    ]);
    expect(slots.heads()).toEqual(["a:1"]);
    slots.release("b");
    expect([slots.inFlightOf("b"), slots.waitingOf("b")]).toEqual([0, 0]);
  });

  it("drops waiting work on clearWaiting but keeps slots in flight counted until released", () => {
    const slots = aPool(1, 1, ["a", "a", "b"]);
    grantAll(slots);
    slots.clearWaiting();
    expect(slots).toMatchObject({ inFlight: 1, waiting: 0 });
    slots.release("a");
    expect(grantAll(slots)).toEqual([]);
    expect(slots.inFlight).toBe(0);
  });

  it("refuses a release for a namespace that holds no slot, naming it", () => {
    expect(() => aPool(1, 1, []).release("shop")).toThrow('FairSlots.release: namespace "shop" holds no slot');
  });
});
