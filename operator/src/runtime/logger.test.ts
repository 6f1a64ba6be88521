import { describe, it, expect } from "@jest/globals";
import { createLogger, reconcileLogger, type LogSink } from "./logger.js";

function collecting() {
  const lines: Record<string, any>[] = [];
  return { lines, destination: { write: (s: string) => void lines.push(JSON.parse(s)) } };
}

describe("logger", () => {
  it("writes JSON lines at or above the configured level", () => {
    const { lines, destination } = collecting();
    const log = createLogger({ level: "warn", destination });
    log.info("hidden");
    log.warn({ n: 1 }, "shown");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "warn", msg: "shown", n: 1 });
  });

  it("redacts probe header values, signature keys and authorization", () => {
    const { lines, destination } = collecting();
    const log = createLogger({ destination });
    log.info(
      {
        headers: [{ name: "X-Token", value: "s3cret" }],
        probe: { headers: [{ name: "Authorization", value: "Bearer abc" }], signatureKey: "k3y" },
        signatureKey: "top",
        authorization: "Bearer xyz",
        request: { headers: { authorization: "Bearer qqq" } },
      },
      "probe spec",
    );
    const text = JSON.stringify(lines[0]);
    for (const secret of ["s3cret", "Bearer abc", "k3y", "top", "Bearer xyz", "Bearer qqq"])
      expect(text).not.toContain(secret);
    expect(lines[0]!.headers[0].name).toBe("X-Token");
    expect(lines[0]!.probe.headers[0]).toEqual({ name: "Authorization", value: "[REDACTED]" });
  });

  it("gives each reconcile a child with the policy key and its own short id", () => {
    const { lines, destination } = collecting();
    const base = createLogger({ destination });
    reconcileLogger(base, "shop/web").info("one");
    reconcileLogger(base, "shop/web").info("two");
    expect(lines[0]).toMatchObject({ policy: "shop/web", msg: "one" });
    expect(lines[0]!.reconcileId).toMatch(/^[0-9a-f]{8}$/);
    expect(lines[1]!.reconcileId).not.toBe(lines[0]!.reconcileId);
  });

  it("logs an error's cause chain", () => {
    const { lines, destination } = collecting();
    createLogger({ destination }).error(
      { err: new Error("patching EndpointSlice shop/web-1", { cause: new Error("409 Conflict") }) },
      "apply failed",
    );
    expect(JSON.stringify(lines[0]!.err)).toContain("409 Conflict");
  });

  it("serves as the runtime's LogSink", () => {
    const { lines, destination } = collecting();
    const sink: LogSink = createLogger({ level: "debug", destination });
    sink.debug({ key: "shop/web" }, "queued");
    expect(lines[0]).toMatchObject({ level: "debug", key: "shop/web", msg: "queued" });
  });
});
