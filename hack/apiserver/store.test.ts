// The store's own pieces: the copy it makes of stored data, the kept event history, and the
// JSON equality the server tells a no-op write by.
import { describe, expect, it } from "@jest/globals";
import { jsonEqual } from "./json-equal.js";
import { jsonText, markUnchanging } from "./json-text.js";
import { clone, Store } from "./store.js";

const aPod = (name: string, extra: Record<string, unknown> = {}) => ({
  metadata: { name, namespace: "ns" },
  spec: { containers: [{ name: "app" }] },
  ...extra,
});

describe("clone", () => {
  it("copies nested objects and arrays so that changing the copy leaves the original alone", () => {
    const original = { a: { b: [1, { c: "d" }] }, e: null, f: undefined };
    const copy = clone(original);
    expect(copy).toEqual(original);
    expect("f" in copy).toBe(true);
    (copy.a.b[1] as { c: string }).c = "changed";
    (copy.a.b as unknown[]).push(2);
    expect(original).toEqual({ a: { b: [1, { c: "d" }] }, e: null, f: undefined });
  });

  it("keeps a __proto__ key from JSON as data, not as the copy's prototype", () => {
    const copy = clone(JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>);
    expect(Object.keys(copy)).toEqual(["__proto__"]);
    expect((copy as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it("copies what is not plain data (a Date) as structuredClone does", () => {
    const at = new Date(0);
    const copy = clone({ at });
    // structuredClone's Date comes from Node's own realm, not the test's: check its kind, not its constructor.
    expect(Object.prototype.toString.call(copy.at)).toBe("[object Date]");
    expect(copy.at).not.toBe(at);
    expect(copy.at.getTime()).toBe(0);
  });
});

describe("jsonEqual", () => {
  it.each([
    ["objects whose keys come in another order", { a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 }, true],
    ["an undefined value and a missing key", { a: 1, b: undefined }, { a: 1 }, true],
    ["undefined and null in an array", [undefined], [null], true],
    ["NaN and null", NaN, null, true],
    ["a Date and its JSON string", new Date(0), "1970-01-01T00:00:00.000Z", true],
    ["different values under one key", { a: 1 }, { a: 2 }, false],
    ["an extra key", { a: 1 }, { a: 1, b: 2 }, false],
    ["arrays in another order", [1, 2], [2, 1], false],
    ["an empty object and null", {}, null, false],
    ["an object and an array", {}, [], false],
    ["a number and its string", 1, "1", false],
  ])("%s: %p", (_what, a, b, same) => {
    expect(jsonEqual(a, b)).toBe(same);
    expect(jsonEqual(b, a)).toBe(same);
  });
});

describe("Store history", () => {
  it("keeps the newest events only, and answers a resourceVersion before them with undefined", () => {
    const store = new Store(3);
    const first = store.currentRv();
    for (let i = 0; i < 10; i++) store.put("/pods", aPod(`p${i}`));
    expect(store.eventsSince(first)).toBeUndefined();
    const kept = store.eventsSince(store.currentRv() - 3)!;
    expect(kept.map((e) => e.object.metadata.name)).toEqual(["p7", "p8", "p9"]);
    expect(store.compactedRv).toBe(store.currentRv() - 3);
    expect(store.eventsSince(store.compactedRv - 1)).toBeUndefined();
  });

  it("hands listeners the stored object, and its readers copies they may change", () => {
    const store = new Store(10);
    const seen: unknown[] = [];
    store.subscribe((e) => seen.push(e.object));
    const returned = store.put("/pods", aPod("p"));
    const read = store.get("/pods", "ns", "p")!;
    read.metadata.name = "changed";
    returned.metadata.labels = { changed: "yes" };
    expect(store.get("/pods", "ns", "p")).toEqual({
      ...aPod("p"),
      metadata: { name: "p", namespace: "ns", resourceVersion: store.currentRvText() },
    });
    expect(seen[0]).toEqual(store.get("/pods", "ns", "p"));
  });
});

describe("Store writes without copies", () => {
  it("stores the written object itself with its new resourceVersion, and hands that to listeners", () => {
    const store = new Store(10);
    const seen: unknown[] = [];
    store.subscribe((e) => seen.push(e.object));
    const pod = aPod("p");
    const stored = store.write("/pods", pod);
    expect(stored).toBe(pod);
    expect(seen[0]).toBe(pod);
    expect(store.getShared("/pods", "ns", "p")).toBe(pod);
    expect(pod.metadata).toEqual({ name: "p", namespace: "ns", resourceVersion: store.currentRvText() });
    expect(store.has("/pods", "ns", "p")).toBe(true);
    expect(store.has("/pods", "ns", "q")).toBe(false);
  });

  it("freezes what it stores when asked, so that changing a stored object throws", () => {
    const store = new Store(10, undefined, true);
    const stored = store.write("/pods", aPod("p"));
    expect(() => {
      (stored.spec.containers[0] as { name: string }).name = "changed";
    }).toThrow(TypeError);
    expect(store.get("/pods", "ns", "p")!.spec.containers[0].name).toBe("app");
    // Its readers still get copies of their own.
    const read = store.get("/pods", "ns", "p")!;
    read.spec.containers[0].name = "mine";
    expect(read.spec.containers[0].name).toBe("mine");
  });
});

describe("jsonText", () => {
  it("writes an unchanging object once and reuses the text; anything else is written each time", () => {
    const view = { a: 1 };
    markUnchanging(view);
    expect(jsonText(view)).toBe('{"a":1}');
    // Never done to an unchanging object: here it shows that the first text is reused.
    (view as { a: number }).a = 2;
    expect(jsonText(view)).toBe('{"a":1}');
    const plain = { a: 1 };
    expect(jsonText(plain)).toBe('{"a":1}');
    plain.a = 2;
    expect(jsonText(plain)).toBe('{"a":2}');
    expect(jsonText("x")).toBe('"x"');
  });
});
