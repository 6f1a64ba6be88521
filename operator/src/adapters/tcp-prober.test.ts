import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { startProbeTypeTargets, type ProbeTypeTargets } from "../../../test/support/probe-type-targets.js";
import { waitFor } from "../../../test/support/wait-for.js";
import { computeProbeOutcome } from "../domain/probe-judgement.js";
import type { ProbeJudgement, ProbeRequest } from "../domain/probe-request.js";
import { createProber } from "./prober.js";

// Real listeners on loopback: one that accepts, a port that refuses, one that never answers.
let servers: ProbeTypeTargets;

beforeAll(async () => {
  servers = await startProbeTypeTargets();
});

afterAll(() => servers.close());

const probe = createProber();
const aRequest = (port: number): ProbeRequest => ({
  type: "TCP",
  scheme: "HTTP",
  address: "127.0.0.1",
  port,
  path: "",
  method: "GET",
  headers: [],
});
const judgement = (o: Partial<ProbeJudgement> = {}): ProbeJudgement => ({ timeoutMs: 400, statusCodes: [], ...o });

describe("a TCP probe", () => {
  it("passes when the connection is accepted, then closes it without sending a byte", async () => {
    const before = servers.accepting.accepted;
    const outcome = computeProbeOutcome(await probe(aRequest(servers.accepting.port), 400, false), judgement());
    expect(outcome).toMatchObject({ success: true, failureClass: "TCP connected" });
    expect(outcome.result).toMatch(/^TCP connected in \d+ ms$/);
    // The server side sees the connection once its accept has run, which may be after the probe ended.
    await waitFor(() => servers.accepting.accepted === before + 1 && servers.accepting.open === 0, {
      timeoutMs: 5_000,
      what: "the connection accepted and closed",
    });
    expect(servers.accepting.bytesReceived).toBe(0);
  });

  it("fails as connect ECONNREFUSED on a port nothing listens on", async () => {
    const outcome = computeProbeOutcome(await probe(aRequest(servers.refused), 400, false), judgement());
    expect(outcome).toMatchObject({ success: false, failureKind: "connect", failureClass: "connect ECONNREFUSED" });
  });

  it("times out on a listener that never completes the connection", async () => {
    const started = Date.now();
    const outcome = computeProbeOutcome(await probe(aRequest(servers.silent.port), 400, false), judgement());
    expect(outcome).toMatchObject({ success: false, failureKind: "timeout", failureClass: "timeout after 400ms" });
    // Not before the timeout: the attempt really hung.
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
  });
});
