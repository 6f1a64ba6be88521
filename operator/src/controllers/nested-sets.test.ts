import { describe, expect, it } from "@jest/globals";
import { addTo, addTo2, removeFrom, removeFrom2 } from "./nested-sets.js";

describe("nested sets", () => {
  it("adds under a key and removes the set once it empties", () => {
    const sets = new Map<string, Set<string>>();
    addTo(sets, "uid-a", "shop/web");
    addTo(sets, "uid-a", "shop/api");
    removeFrom(sets, "uid-a", "shop/web");
    expect([...sets.get("uid-a")!]).toEqual(["shop/api"]);
    removeFrom(sets, "uid-a", "shop/api");
    removeFrom(sets, "uid-b", "shop/api");
    expect(sets.size).toBe(0);
  });

  it("adds under two keys and removes the inner set, then the inner map, once they empty", () => {
    const sets = new Map<string, Map<string, Set<string>>>();
    addTo2(sets, "shop", "app=web", "web-1");
    addTo2(sets, "shop", "tier=front", "web-1");
    removeFrom2(sets, "shop", "app=web", "web-1");
    expect([...sets.get("shop")!.keys()]).toEqual(["tier=front"]);
    removeFrom2(sets, "shop", "tier=front", "web-1");
    removeFrom2(sets, "other", "app=web", "web-1");
    expect(sets.size).toBe(0);
  });
});
