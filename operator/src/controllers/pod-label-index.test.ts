import { describe, expect, it } from "@jest/globals";
import type { LabelSelector } from "../domain/label-selector.js";
import { nameOf, type PodObject } from "./kube-objects.js";
import { PodLabelIndex } from "./pod-label-index.js";
import { MemoryCache } from "./testing/memory-cache.js";
import { aPodObject, NS } from "./testing/objects.js";

/** An index fed by a cache's changes, as ProbeTargets wires it. */
function anIndex(pods: PodObject[] = []): { cache: MemoryCache<PodObject>; index: PodLabelIndex } {
  const cache = new MemoryCache<PodObject>();
  const index = new PodLabelIndex(cache);
  cache.onChange((pod, type) => index.changed(pod, type));
  cache.onForget((ns) => index.forgetNamespace(ns));
  for (const p of pods) cache.put(p);
  return { cache, index };
}

const names = (pods: PodObject[]) => pods.map(nameOf).sort();

describe("PodLabelIndex.matching", () => {
  const pods = [
    aPodObject("web-1", { labels: { app: "web", tier: "front" } }),
    aPodObject("web-2", { labels: { app: "web", tier: "back" } }),
    aPodObject("api-1", { labels: { app: "api", tier: "front" } }),
    aPodObject("bare", { labels: {} }),
  ];
  const cases: Array<{ name: string; selector: LabelSelector; want: string[] }> = [
    { name: "finds the pods carrying one label", selector: { matchLabels: { app: "web" } }, want: ["web-1", "web-2"] },
    {
      name: "finds the pods carrying every label of matchLabels",
      selector: { matchLabels: { app: "web", tier: "front" } },
      want: ["web-1"],
    },
    {
      name: "applies matchExpressions to the candidates",
      selector: {
        matchLabels: { tier: "front" },
        matchExpressions: [{ key: "app", operator: "NotIn", values: ["api"] }],
      },
      want: ["web-1"],
    },
    {
      name: "reads the whole namespace for a selector without matchLabels",
      selector: { matchExpressions: [{ key: "app", operator: "DoesNotExist" }] },
      want: ["bare"],
    },
    {
      name: "finds nothing for a label no pod carries",
      selector: { matchLabels: { app: "web", tier: "none" } },
      want: [],
    },
  ];
  it.each(cases)("$name", ({ selector, want }) => {
    expect(names(anIndex(pods).index.matching(NS, selector))).toEqual(want);
  });

  it("looks in the given namespace only", () => {
    const other = aPodObject("web-9", { labels: { app: "web" } });
    other.metadata!.namespace = "other";
    const { index } = anIndex([...pods, other]);
    expect(names(index.matching("other", { matchLabels: { app: "web" } }))).toEqual(["web-9"]);
  });
});

describe("PodLabelIndex follows pod changes", () => {
  it("moves a relabelled pod from its old label to its new one", () => {
    const { cache, index } = anIndex([aPodObject("a", { labels: { app: "web" } })]);
    cache.put(aPodObject("a", { labels: { app: "api" } }));
    expect(names(index.matching(NS, { matchLabels: { app: "web" } }))).toEqual([]);
    expect(names(index.matching(NS, { matchLabels: { app: "api" } }))).toEqual(["a"]);
  });

  it("forgets a deleted pod, and a pod created again under the name is found again", () => {
    const { cache, index } = anIndex([aPodObject("a"), aPodObject("b")]);
    cache.remove(NS, "a");
    expect(names(index.matching(NS, { matchLabels: { app: "web" } }))).toEqual(["b"]);
    cache.put(aPodObject("a"));
    expect(names(index.matching(NS, { matchLabels: { app: "web" } }))).toEqual(["a", "b"]);
  });

  it("forgets a namespace its cache forgot, pod by pod, and keeps the other namespaces", () => {
    const c = aPodObject("c");
    c.metadata!.namespace = "other";
    const { cache, index } = anIndex([aPodObject("a"), aPodObject("b"), c]);
    cache.forget(NS);
    expect(index.labelsOf(NS, "a")).toBeUndefined();
    expect(index.labelsOf(NS, "b")).toBeUndefined();
    expect(index.labelsOf("other", "c")).toEqual({ app: "web" });
    // Listed again when the namespace comes back: indexed afresh, under its labels now.
    cache.put(aPodObject("a", { labels: { app: "api" } }));
    expect(index.labelsOf(NS, "a")).toEqual({ app: "api" });
    expect(names(index.matching(NS, { matchLabels: { app: "api" } }))).toEqual(["a"]);
  });

  it("keeps a pod whose labels did not change where it was", () => {
    const { cache, index } = anIndex([aPodObject("a", { labels: { app: "web", tier: "front" } })]);
    cache.put(aPodObject("a", { labels: { app: "web", tier: "front" }, ready: false }));
    expect(names(index.matching(NS, { matchLabels: { app: "web", tier: "front" } }))).toEqual(["a"]);
  });
});
