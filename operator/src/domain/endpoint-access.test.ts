import { describe, it, expect } from "@jest/globals";
import { ExpiringCache, accessKey, accessOf, authorised, bearerTokenOf, verbOf } from "./endpoint-access.js";

describe("accessOf", () => {
  const cases: Array<[string, string, ReturnType<typeof accessOf>]> = [
    ["kubelet's liveness probe path is open", "/healthz", "open"],
    ["kubelet's readiness probe path is open", "/readyz", "open"],
    ["the metrics are locked", "/metrics", "locked"],
    ["the live targets are locked", "/debug/targets", "locked"],
    ["a path the operator does not serve needs nothing", "/debug/pprof", undefined],
  ];
  for (const [name, path, access] of cases) it(name, () => expect(accessOf(path)).toBe(access));
});

describe("bearerTokenOf", () => {
  const cases: Array<[string, string | undefined, string | undefined]> = [
    ["reads a bearer token", "Bearer abc.def", "abc.def"],
    ["reads the scheme in any case", "bearer abc", "abc"],
    ["has none without a header", undefined, undefined],
    ["has none for an empty token", "Bearer ", undefined],
    ["has none for basic authentication", "Basic dXNlcjpwYXNz", undefined],
    ["has none for two words", "Bearer a b", undefined],
  ];
  for (const [name, header, token] of cases) it(name, () => expect(bearerTokenOf(header)).toBe(token));
});

describe("verbOf and authorised", () => {
  it("asks for get for GET and HEAD", () => {
    expect([verbOf("GET"), verbOf("HEAD"), verbOf(undefined), verbOf("POST")]).toEqual(["get", "get", "get", "post"]);
  });

  it("names the user, never the token, in a denial", () => {
    expect(authorised({ username: "alice" }, { allowed: false })).toEqual({
      status: 403,
      message: "Authorization denied for user alice",
    });
    expect(authorised({ username: "alice" }, { allowed: true }).status).toBe(200);
  });

  it("keys an authorisation by user, groups in any order, verb and path", () => {
    const a = accessKey({ username: "u", groups: ["b", "a"] }, "get", "/metrics");
    expect(accessKey({ username: "u", groups: ["a", "b"] }, "get", "/metrics")).toBe(a);
    expect(accessKey({ username: "u", groups: ["a"] }, "get", "/metrics")).not.toBe(a);
    expect(accessKey({ username: "u", groups: ["a", "b"] }, "get", "/debug/targets")).not.toBe(a);
  });
});

describe("ExpiringCache", () => {
  it("forgets an entry at its expiry", () => {
    const cache = new ExpiringCache<string>(4);
    cache.set("k", "v", 1000);
    expect(cache.get("k", 999)).toBe("v");
    expect(cache.get("k", 1000)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it("holds at most its maximum, dropping the oldest written", () => {
    const cache = new ExpiringCache<number>(3);
    for (let i = 0; i < 10; i++) cache.set(`k${i}`, i, 10_000);
    expect(cache.size).toBe(3);
    expect([cache.get("k6", 0), cache.get("k7", 0), cache.get("k9", 0)]).toEqual([undefined, 7, 9]);
  });

  it("counts a rewritten key as new", () => {
    const cache = new ExpiringCache<number>(2);
    cache.set("a", 1, 10_000);
    cache.set("b", 2, 10_000);
    cache.set("a", 3, 10_000);
    cache.set("c", 4, 10_000);
    expect([cache.get("a", 0), cache.get("b", 0), cache.get("c", 0)]).toEqual([3, undefined, 4]);
  });
});
