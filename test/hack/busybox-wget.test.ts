// The helm test image's wget (hack/images: busybox): the chart's test Pod runs `wget -qO- -T 5 URL`,
// which Debian's busybox, built without -T, answers with SIGSEGV. Runs the image's wget script
// with the machine's busybox against local servers; skipped where there is no /bin/busybox.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createServer as createTcpServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { IMAGES, WGET_TIMEOUT_SHIM, wgetHasTimeout } from "../../hack/images/images.js";

const run = promisify(execFile);
const suite = existsSync("/bin/busybox") ? describe : describe.skip;

/** The image's /bin/wget as the container runs it: `sh` with argv[0] wget. */
const wget = (args: string[]) =>
  run("/bin/busybox", ["sh", "-c", WGET_TIMEOUT_SHIM, "wget", ...args], { encoding: "utf8", timeout: 20_000 }).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (err: { code?: number; stdout?: string }) => ({ code: err.code ?? -1, stdout: err.stdout ?? "" }),
  );

suite("the helm test image's wget", () => {
  let http: Server;
  let silent: ReturnType<typeof createTcpServer>;
  const held: Socket[] = [];
  let base: string;
  let silentUrl: string;

  beforeAll(async () => {
    http = createServer((req, res) => {
      res.writeHead(req.url === "/readyz" ? 200 : 404);
      res.end(req.url === "/readyz" ? "ok" : "no");
    });
    // Accepts and never answers: what -T is for.
    silent = createTcpServer((s) => held.push(s));
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/readyz`;
  });

  afterAll(async () => {
    for (const s of held) s.destroy();
    await new Promise((r) => http.close(r));
    await new Promise((r) => silent.close(r));
  });

  it("is the -T script, at the applet's own path, exactly where the machine's busybox lacks -T", () => {
    // Every wget on the image's PATH: Debian installs the applet as usr/bin/wget, not bin/wget.
    const entries = IMAGES.busybox!.spec().layers[0]!.filter((e) => e.path.endsWith("bin/wget"));
    expect(entries.length).toBeGreaterThan(0);
    for (const entry of entries)
      if (wgetHasTimeout()) expect(entry).toMatchObject({ type: "symlink", linkname: "/bin/busybox" });
      else expect(entry).toMatchObject({ type: "file", mode: 0o755, content: Buffer.from(WGET_TIMEOUT_SHIM) });
  });

  it("fetches with the chart's arguments, -T 5 included", async () => {
    expect(await wget(["-qO-", "-T", "5", `${base}/readyz`])).toEqual({ code: 0, stdout: "ok" });
    expect(await wget(["-qO-", "-T5", `${base}/readyz`])).toEqual({ code: 0, stdout: "ok" });
  });

  it("fails on an error status, with or without -T", async () => {
    expect((await wget(["-qO-", "-T", "5", `${base}/nope`])).code).toBe(1);
    expect((await wget(["-qO-", `${base}/nope`])).code).toBe(1);
  });

  it("gives up on a server that never answers after -T seconds", async () => {
    const start = Date.now();
    const { code } = await wget(["-qO-", "-T", "1", silentUrl]);
    expect(code).not.toBe(0);
    expect(Date.now() - start).toBeLessThan(5_000);
  });
});
