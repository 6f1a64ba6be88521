import { afterAll, describe, expect, it } from "@jest/globals";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkSizes } from "../../hack/check-sizes.js";

const dir = mkdtempSync(join(tmpdir(), "check-sizes-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A body of `lines` lines in all, braces included. */
const body = (lines: number) => `{\n${"  x++;\n".repeat(lines - 2)}}`;

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(dir, "tree-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(root, name, ".."), { recursive: true });
    writeFileSync(join(root, name), text);
  }
  return root;
}

describe("check-sizes", () => {
  it("passes a function of exactly 80 lines and a file of exactly 400", () => {
    const root = tree({ "ok.ts": `export function f() ${body(80)}\n`, "long.ts": "let x = 0;\n".repeat(400) });
    expect(checkSizes(root, root).violations).toEqual([]);
  });

  it("names every function, method and bound arrow over 80 lines, nested ones included, with its line", () => {
    const root = tree({
      "a/f.ts": `export function plain() ${body(81)}\n`,
      "a/m.ts": `let x = 0;\nexport class Thing {\n  method() ${body(81)}\n}\n`,
      "b/arrow.ts": `export const bound = () => ${body(81)};\n`,
      "b/nested.ts": `export function outer() {\n  return () => ${body(81)};\n}\n`,
    });
    const found = checkSizes(root, root).violations.map((v) => `${v.where} ${v.what}`);
    expect(found).toEqual([
      "a/f.ts:1 function plain is 81 lines (limit 80)",
      "a/m.ts:3 function Thing.method is 81 lines (limit 80)",
      "b/arrow.ts:1 function bound is 81 lines (limit 80)",
      "b/nested.ts:1 function outer is 83 lines (limit 80)",
      "b/nested.ts:2 function (returned function) is 81 lines (limit 80)",
    ]);
  });

  it("names a file over 400 lines and leaves tests alone", () => {
    const root = tree({ "big.ts": "let x = 0;\n".repeat(401), "big.test.ts": `it("x", () => ${body(500)});\n` });
    expect(checkSizes(root, root).violations).toEqual([{ where: "big.ts", what: "401 lines (limit 400)" }]);
  });
});
