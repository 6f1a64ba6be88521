import { describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { matchesLabelSelector, type LabelSelector } from "../domain/label-selector.js";
import { SelectorIndex } from "./selector-index.js";

function anIndex(selectors: Record<string, unknown>, namespace = "shop"): SelectorIndex {
  const index = new SelectorIndex();
  for (const [key, selector] of Object.entries(selectors)) index.set(key, namespace, selector);
  return index;
}

describe("SelectorIndex.matching", () => {
  const selectors: Record<string, unknown> = {
    web: { matchLabels: { app: "web" } },
    "web-front": { matchLabels: { app: "web", tier: "front" } },
    "not-api": { matchExpressions: [{ key: "app", operator: "NotIn", values: ["api"] }] },
    "front-not-web": {
      matchLabels: { tier: "front" },
      matchExpressions: [{ key: "app", operator: "NotIn", values: ["web"] }],
    },
    "empty-labels": { matchLabels: {} },
  };
  const cases: Array<{ name: string; labels: Record<string, string> | undefined; want: string[] }> = [
    {
      name: "finds the selectors filed under one of the pod's labels",
      labels: { app: "web", tier: "back" },
      want: ["empty-labels", "not-api", "web"],
    },
    {
      name: "requires every matchLabels entry, not only the one filed under",
      labels: { app: "web", tier: "front" },
      want: ["empty-labels", "not-api", "web", "web-front"],
    },
    {
      name: "applies matchExpressions to the candidates",
      labels: { app: "api", tier: "front" },
      want: ["empty-labels", "front-not-web"],
    },
    {
      name: "matches selectors without matchLabels against a pod without labels",
      labels: undefined,
      want: ["empty-labels", "not-api"],
    },
  ];
  it.each(cases)("$name", ({ labels, want }) => {
    expect(anIndex(selectors).matching("shop", labels).sort()).toEqual(want);
  });

  it("looks in the given namespace only", () => {
    const index = anIndex({ web: { matchLabels: { app: "web" } } }, "other");
    expect(index.matching("shop", { app: "web" })).toEqual([]);
    expect(index.matching("other", { app: "web" })).toEqual(["web"]);
  });

  it("forgets a deleted key, and refiles a key whose selector changed", () => {
    const index = anIndex({ a: { matchLabels: { app: "web" } }, b: { matchLabels: { app: "web" } } });
    index.delete("a");
    index.set("b", "shop", { matchLabels: { app: "api" } });
    expect(index.matching("shop", { app: "web" })).toEqual([]);
    expect(index.matching("shop", { app: "api" })).toEqual(["b"]);
  });

  it("files nothing for a selector that is not an object, and matches a malformed one as the matcher does", () => {
    const index = anIndex({ missing: undefined, text: "app=web", odd: { matchLabels: { app: 7 } } });
    expect(index.matching("shop", { app: "web" })).toEqual([]);
    expect(index.matching("shop", { app: "7" })).toEqual([]);
  });
});

describe("SelectorIndex, against matching every selector", () => {
  const key = fc.constantFrom("app", "tier", "zone");
  const value = fc.constantFrom("a", "b", "c");
  const labels = fc.dictionary(key, value, { maxKeys: 3 });
  const requirement = fc.record({
    key,
    operator: fc.constantFrom("In", "NotIn", "Exists", "DoesNotExist", "Bogus"),
    values: fc.array(value, { maxLength: 2 }),
  });
  const selector: fc.Arbitrary<LabelSelector> = fc.record(
    { matchLabels: labels, matchExpressions: fc.array(requirement, { maxLength: 2 }) },
    { requiredKeys: [] },
  );
  const change = fc.oneof(
    fc.record({
      op: fc.constant("set" as const),
      key: fc.nat(5),
      namespace: fc.constantFrom("shop", "other"),
      selector,
    }),
    fc.record({ op: fc.constant("delete" as const), key: fc.nat(5) }),
  );

  it("finds exactly the selectors that match, whatever was set and deleted before", () => {
    fc.assert(
      fc.property(
        fc.array(change, { maxLength: 20 }),
        labels,
        fc.constantFrom("shop", "other"),
        (changes, pod, namespace) => {
          const index = new SelectorIndex();
          const all = new Map<string, { namespace: string; selector: LabelSelector }>();
          for (const c of changes) {
            if (c.op === "set") {
              index.set(`p${c.key}`, c.namespace, c.selector);
              all.set(`p${c.key}`, c);
            } else {
              index.delete(`p${c.key}`);
              all.delete(`p${c.key}`);
            }
          }
          const want = [...all]
            .filter(([, s]) => s.namespace === namespace && matchesLabelSelector(s.selector, pod))
            .map(([k]) => k);
          expect(index.matching(namespace, pod).sort()).toEqual(want.sort());
        },
      ),
    );
  });
});
