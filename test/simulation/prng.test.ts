import { describe, expect, it } from "@jest/globals";
import { Rng } from "./prng.js";

describe("the simulation's seeded generator", () => {
  it("gives the same draws for the same seed", () => {
    const a = new Rng(7);
    const b = new Rng(7);
    expect(Array.from({ length: 20 }, () => a.next())).toEqual(Array.from({ length: 20 }, () => b.next()));
  });

  it("starts neighbouring seeds on unrelated streams", () => {
    const firsts = Array.from({ length: 200 }, (_, i) => new Rng(i + 1).next());
    const below = firsts.filter((x) => x < 0.5).length;
    expect(below).toBeGreaterThan(70);
    expect(below).toBeLessThan(130);
  });

  it("picks weighted keys only among those with weight", () => {
    const r = new Rng(3);
    const seen = new Set(Array.from({ length: 100 }, () => r.weighted({ a: 1, b: 0, c: 2 })));
    expect([...seen].sort()).toEqual(["a", "c"]);
  });
});
