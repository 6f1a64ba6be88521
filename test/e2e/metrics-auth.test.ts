// The locked /metrics and /debug/targets on the real control plane (HEALTHPROBE_TEST_CLUSTER=real):
// helm installs the chart (no operator replicas: nothing here runs its image) with the metrics
// reader bound to a scraper ServiceAccount; the operator runs on this host as the chart's
// ServiceAccount, so its TokenReviews and SubjectAccessReviews are allowed by the chart's RBAC and
// answered by kube-apiserver's real authenticators and RBAC authoriser.
// The API test server's reviews are tested in operator/src/runtime/endpoint-guard-apiserver.test.ts.
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { startControlPlane, type ControlPlane } from "../../hack/control-plane/control-plane.js";
import { chartDeploymentArgs, installChartWithoutReplicas } from "../chart/helm.js";
import { startOperatorProcess, type OperatorProcess } from "../support/operator-process.js";
import { kubectl } from "./environment.js";

const real = process.env.HEALTHPROBE_TEST_CLUSTER === "real";
const RELEASE = "healthprobe";
const OPERATOR_NAMESPACE = "healthprobe-system";
const SERVICE_ACCOUNT = `${RELEASE}-healthprobe-operator`;
const SCRAPERS = "monitoring";

(real ? describe : describe.skip)("the locked /metrics and /debug/targets on the real control plane", () => {
  let cp: ControlPlane;
  let dir: string;
  let operator: OperatorProcess | undefined;
  let ports: { health: number; metrics: number };
  let scraperToken: string;
  let aliceToken: string;

  beforeAll(async () => {
    cp = await startControlPlane({ users: { alice: ["developers"] } });
    dir = mkdtempSync(join(tmpdir(), "healthprobe-metrics-auth-e2e-"));
    const admin = join(dir, "admin.kubeconfig");
    cp.writeKubeconfig(admin);
    await kubectl(admin, ["create", "namespace", SCRAPERS]);
    await kubectl(admin, ["create", "serviceaccount", "prometheus", "-n", SCRAPERS]);
    const subjects = [
      "metricsReader.subjects[0].kind=ServiceAccount",
      "metricsReader.subjects[0].name=prometheus",
      `metricsReader.subjects[0].namespace=${SCRAPERS}`,
    ];
    await installChartWithoutReplicas({
      kubeconfig: admin,
      namespace: OPERATOR_NAMESPACE,
      releaseName: RELEASE,
      values: subjects,
    });

    // The chart's flags (the access check on: the chart never passes --insecure-diagnostics).
    const args = chartDeploymentArgs({ namespace: OPERATOR_NAMESPACE, releaseName: RELEASE });
    const flags = args.filter((a) =>
      /^--(leader-elect|leader-election-id|ledger-configmap-name|max-replacements)/.test(a),
    );
    expect(args).not.toContain("--insecure-diagnostics");
    const token = (
      await kubectl(admin, ["create", "token", SERVICE_ACCOUNT, "-n", OPERATOR_NAMESPACE, "--duration=24h"])
    ).trim();
    operator = startOperatorProcess({
      server: {
        writeKubeconfig: (path: string) =>
          writeFileSync(
            path,
            cp.tokenKubeconfig(`system:serviceaccount:${OPERATOR_NAMESPACE}:${SERVICE_ACCOUNT}`, token),
            { mode: 0o600 },
          ),
      },
      dir,
      user: "operator",
      flags,
    });
    const { healthPort } = await operator.started(90_000);
    const startedLine = operator.logs.find((l) => l.msg === "operator started")!;
    ports = { health: healthPort, metrics: startedLine.metricsPort as number };
    scraperToken = (await kubectl(admin, ["create", "token", "prometheus", "-n", SCRAPERS, "--duration=1h"])).trim();
    aliceToken = (parse(cp.kubeconfig("alice")) as { users: Array<{ user: { token: string } }> }).users[0]!.user.token;
  }, 300_000);

  afterAll(async () => {
    await operator?.stop();
    await cp?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const output = () => operator?.output.join("").split("\n").slice(-40).join("\n") ?? "";
  const get = async (port: number, path: string, token?: string) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    });
    return { status: res.status, body: await res.text() };
  };
  const locked = () => [
    { port: ports.metrics, path: "/metrics" },
    { port: ports.health, path: "/debug/targets" },
  ];

  it("answers 401 without a token and with a token kube-apiserver does not know", async () => {
    for (const { port, path } of locked()) {
      expect((await get(port, path)).status).toBe(401);
      expect((await get(port, path, "not-a-token")).status).toBe(401);
    }
  });

  it("answers 403 to a token user the reader role is not bound to", async () => {
    for (const { port, path } of locked())
      expect(await get(port, path, aliceToken)).toEqual({ status: 403, body: "Authorization denied for user alice\n" });
  });

  it("answers 200 to a ServiceAccount token the chart's metrics-reader ClusterRole allows", async () => {
    const metrics = await get(ports.metrics, "/metrics", scraperToken);
    expect({ status: metrics.status, output: metrics.status === 200 ? "" : output() }).toEqual({
      status: 200,
      output: "",
    });
    expect(metrics.body).toContain("healthprobe_leader");
    const targets = await get(ports.health, "/debug/targets", scraperToken);
    expect(targets.status).toBe(200);
    expect(JSON.parse(targets.body)).toMatchObject({ truncated: false, targets: [] });
  });

  it("keeps /healthz and /readyz open for kubelet", async () => {
    expect((await get(ports.health, "/healthz")).status).toBe(200);
    expect((await get(ports.health, "/readyz")).status).toBe(200);
  });
});
