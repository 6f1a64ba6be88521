// A real control plane for the RBAC audit (rbac-audit.test.ts): kube-apiserver audits every request
// of the chart's ServiceAccount at Metadata level; helm installs the chart (no operator replicas:
// nothing here runs its image) with the webhook on and the RBAC mode's values; the operator runs on
// this host as that ServiceAccount, with a TokenRequest token, so kube-apiserver enforces exactly
// the chart's rules, and with the flags of the chart's Deployment.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubernetesObjectApi, KubeConfig } from "@kubernetes/client-node";
import { readAuditLog } from "../../hack/control-plane/audit.js";
import { startControlPlane, type ControlPlane } from "../../hack/control-plane/control-plane.js";
import type { RequestLogEntry } from "../../hack/apiserver/index.js";
import { chartDeploymentArgs, installChartWithoutReplicas, kubectl } from "../chart/helm.js";
import { requestsInAudit } from "../chart/rbac-audit.js";
import { objectClient } from "../support/kube-objects.js";
import { startOperatorProcess, type OperatorProcess } from "../support/operator-process.js";

export const RELEASE = "healthprobe";
export const OPERATOR_NAMESPACE = "healthprobe-system";
const SERVICE_ACCOUNT = `${RELEASE}-healthprobe-operator`;
export const OPERATOR_USER = `system:serviceaccount:${OPERATOR_NAMESPACE}:${SERVICE_ACCOUNT}`;

/** Every request of the operator's user, at Metadata level (no bodies); nothing else. */
const AUDIT_POLICY = {
  apiVersion: "audit.k8s.io/v1",
  kind: "Policy",
  omitStages: ["RequestReceived"],
  rules: [{ level: "Metadata", users: [OPERATOR_USER] }, { level: "None" }],
};

export interface AuditedCluster {
  cp: ControlPlane;
  /** The admin's kubeconfig file. */
  admin: string;
  /** Objects as the admin, in `namespace` unless told otherwise. */
  objects: ReturnType<typeof objectClient>;
  /** The chart's values the release was installed with (webhook.enabled among them). */
  values: string[];
  /** The webhook certificate Secret's name, from the chart's flags. */
  certificateSecret: string;
  /** The operator's requests so far, from the audit log. */
  requests(): RequestLogEntry[];
  /** Starts the operator as the chart's ServiceAccount; resolves once its caches synced. */
  startOperator(): Promise<{ metricsPort: number }>;
  /** SIGTERM to the operator: it flushes its Event series and releases its Lease. */
  stopOperator(): Promise<void>;
  /** A bearer token of a ServiceAccount (TokenRequest). */
  token(serviceAccount: string, namespace: string): Promise<string>;
  /** The operator's last output lines, for error messages. */
  output(): string;
  stop(): Promise<void>;
}

/** The chart Deployment's flags for a release with these values, bind addresses and log level aside. */
function chartFlags(values: string[]): string[] {
  return [
    ...chartDeploymentArgs({ values, namespace: OPERATOR_NAMESPACE, releaseName: RELEASE }).filter(
      (a) => !/^--(metrics-bind-address|health-probe-bind-address|webhook-bind-address|log-level)=/.test(a),
    ),
    // Nothing calls the webhook here (no namespace opts in); it only keeps its certificate and caBundle.
    "--webhook-bind-address=127.0.0.1:0",
    "--log-level=debug",
  ];
}

/** A control plane with the chart installed with `values` (plus webhook.enabled), and `namespace` made before. */
export async function startAuditedCluster(opts: { values: string[]; namespace: string }): Promise<AuditedCluster> {
  const kubeletErrors: string[] = [];
  const cp = await startControlPlane({ auditPolicy: AUDIT_POLICY, onError: (err) => kubeletErrors.push(err.message) });
  const dir = mkdtempSync(join(tmpdir(), "healthprobe-rbac-audit-"));
  let operator: OperatorProcess | undefined;
  const stop = async (): Promise<void> => {
    await operator?.stop();
    await cp.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const admin = join(dir, "admin.kubeconfig");
    cp.writeKubeconfig(admin);
    const kc = new KubeConfig();
    kc.loadFromString(cp.kubeconfig("admin"));
    const objects = objectClient(KubernetesObjectApi.makeApiClient(kc), opts.namespace);
    // With rbac.namespaces the namespace must exist for helm to put its Role there.
    await objects.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: opts.namespace } });
    const values = ["webhook.enabled=true", ...opts.values];
    await installChartWithoutReplicas({
      kubeconfig: admin,
      namespace: OPERATOR_NAMESPACE,
      releaseName: RELEASE,
      values,
      timeoutMs: 180_000,
    });
    const flags = chartFlags(values);
    const token = async (serviceAccount: string, namespace: string): Promise<string> => {
      const r = await kubectl(["create", "token", serviceAccount, "-n", namespace, "--duration=1h"], admin);
      if (r.code !== 0) throw new Error(`kubectl create token ${serviceAccount} failed: ${r.stderr}`);
      return r.stdout.trim();
    };
    const operatorToken = await token(SERVICE_ACCOUNT, OPERATOR_NAMESPACE);
    return {
      cp,
      admin,
      objects,
      values,
      certificateSecret: flags.find((a) => a.startsWith("--webhook-secret-name="))!.split("=")[1]!,
      requests: () => requestsInAudit(readAuditLog(cp.auditLog!), { user: OPERATOR_USER }),
      async startOperator() {
        operator = startOperatorProcess({
          server: {
            writeKubeconfig: (path: string) =>
              writeFileSync(path, cp.tokenKubeconfig(OPERATOR_USER, operatorToken), { mode: 0o600 }),
          },
          dir,
          user: "operator",
          flags,
        });
        await operator.started(120_000);
        return { metricsPort: operator.logs.find((l) => l.msg === "operator started")!.metricsPort as number };
      },
      stopOperator: async () => operator?.stop(),
      token,
      output: () =>
        [
          operator?.output.join("").split("\n").slice(-60).join("\n") ?? "",
          kubeletErrors.length ? `--- kubelet stand-in errors ---\n${kubeletErrors.slice(-10).join("\n")}` : "",
        ].join("\n"),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
