import { describe, expect, it } from "@jest/globals";
import { readFileSync } from "node:fs";
import { operatorVersion } from "./version.js";
import { defaultUserAgent } from "./adapters/http-prober.js";

describe("operatorVersion", () => {
  it("is package.json's version, found from the module's own location", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    expect(operatorVersion()).toBe(pkg.version);
    expect(defaultUserAgent()).toBe(`healthprobe-operator/${pkg.version}`);
  });
});
