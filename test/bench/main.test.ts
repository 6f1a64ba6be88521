// The benchmark dispatcher as a user runs it: --help and a bad flag answer with the usage, never a stack trace.
import { describe, expect, it } from "@jest/globals";
import { sh } from "../support/shell.js";

describe("npm run bench", () => {
  it.each(["--help", "-h"])("prints a benchmark's usage for %s and exits 0", async (flag) => {
    const r = await sh(`npm run -s bench -- probe ${flag}`);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(r.stdout).toMatch(/^usage: npm run bench -- probe \[--url /m);
  });

  it("names a bad flag, prints the usage and exits 2", async () => {
    const r = await sh("npm run -s bench -- probe --rate fast");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--rate: "fast": must be a positive number');
    expect(r.stderr).toMatch(/^usage: npm run bench -- probe /m);
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });
});
