import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startApiServer, type Gvr, type TestApiServer } from "../../hack/apiserver/index.js";
import { chartDir, helmAsync } from "./helm.js";

const NAMESPACE = "healthprobe-system";
const RELEASE = "hp";
const FULLNAME = "hp-healthprobe-operator";

const gvr = (group: string, version: string, resource: string): Gvr => ({ group, version, resource });
const INSTALLED: Array<{ gvr: Gvr; namespace?: string; name: string }> = [
  { gvr: gvr("apps", "v1", "deployments"), namespace: NAMESPACE, name: FULLNAME },
  { gvr: gvr("", "v1", "serviceaccounts"), namespace: NAMESPACE, name: FULLNAME },
  { gvr: gvr("", "v1", "services"), namespace: NAMESPACE, name: FULLNAME },
  { gvr: gvr("policy", "v1", "poddisruptionbudgets"), namespace: NAMESPACE, name: FULLNAME },
  { gvr: gvr("rbac.authorization.k8s.io", "v1", "clusterroles"), name: FULLNAME },
  { gvr: gvr("rbac.authorization.k8s.io", "v1", "clusterrolebindings"), name: FULLNAME },
  { gvr: gvr("rbac.authorization.k8s.io", "v1", "roles"), namespace: NAMESPACE, name: FULLNAME },
  { gvr: gvr("rbac.authorization.k8s.io", "v1", "rolebindings"), namespace: NAMESPACE, name: FULLNAME },
];
const CRD = {
  gvr: gvr("apiextensions.k8s.io", "v1", "customresourcedefinitions"),
  name: "healthprobepolicies.healthprobe.io",
};

/** An API test server with an admin kubeconfig, and helm against it in the release namespace. */
function installBed() {
  const bed = {
    server: undefined as unknown as TestApiServer,
    dir: "",
    run: (args: string[]) =>
      helmAsync([...args, "--kubeconfig", join(bed.dir, "kubeconfig"), "--namespace", NAMESPACE]),
    present: (o: { gvr: Gvr; namespace?: string; name: string }) =>
      bed.server.store.get(o.gvr, o.namespace, o.name) !== undefined,
  };
  beforeAll(async () => {
    bed.server = await startApiServer();
    bed.dir = mkdtempSync(join(tmpdir(), "healthprobe-install-"));
    bed.server.writeKubeconfig(join(bed.dir, "kubeconfig"));
  });
  afterAll(async () => {
    await bed.server.stop();
    rmSync(bed.dir, { recursive: true, force: true });
  });
  return bed;
}

describe("helm install, status and uninstall with the real helm against the API test server", () => {
  const bed = installBed();
  const { run, present } = bed;

  it("installs the chart with its CRD", async () => {
    const r = await run(["install", RELEASE, chartDir, "--create-namespace"]);
    expect(r.stderr.replace(/^level=INFO msg="found symbolic link.*\n/gm, "")).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("STATUS: deployed");
    // NOTES.txt tells the user what to apply next.
    expect(r.stdout).toContain("kubectl get hpp");
    expect(INSTALLED.filter((o) => !present(o)).map((o) => `${o.gvr.resource}/${o.name}`)).toEqual([]);
    expect(present(CRD)).toBe(true);
  });

  it("reports the release as deployed", async () => {
    const r = await run(["status", RELEASE, "-o", "json"]);
    expect(r.code).toBe(0);
    const status = JSON.parse(r.stdout);
    expect(status.info.status).toBe("deployed");
    expect(status.version).toBe(1);
  });

  it("stores the release where helm keeps it, a Secret owned by helm", () => {
    const secrets = bed.server.store
      .list(gvr("", "v1", "secrets"), NAMESPACE)
      .filter((s) => s.metadata.labels?.owner === "helm");
    expect(secrets.map((s) => [s.metadata.labels?.name, s.metadata.labels?.status])).toEqual([[RELEASE, "deployed"]]);
  });

  it("uninstalls everything it installed and keeps the CRD, as helm does", async () => {
    const r = await run(["uninstall", RELEASE]);
    expect(r.code).toBe(0);
    expect(INSTALLED.filter((o) => present(o)).map((o) => `${o.gvr.resource}/${o.name}`)).toEqual([]);
    expect(present(CRD)).toBe(true);
    expect(
      bed.server.store.list(gvr("", "v1", "secrets"), NAMESPACE).filter((s) => s.metadata.labels?.owner === "helm"),
    ).toEqual([]);
    const status = await run(["status", RELEASE]);
    expect(status.code).not.toBe(0);
    expect(status.stderr).toContain("release: not found");
  });
});

describe("helm install with the admission webhook against the API test server", () => {
  const WEBHOOK_INSTALLED = [
    { gvr: gvr("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations"), name: FULLNAME },
    { gvr: gvr("", "v1", "services"), namespace: NAMESPACE, name: `${FULLNAME}-webhook` },
    { gvr: gvr("rbac.authorization.k8s.io", "v1", "clusterroles"), name: `${FULLNAME}-webhook` },
    { gvr: gvr("rbac.authorization.k8s.io", "v1", "clusterrolebindings"), name: `${FULLNAME}-webhook` },
  ];
  const bed = installBed();
  const { run, present } = bed;

  it("installs the webhook configuration, its Service and RBAC, and uninstalls them", async () => {
    const r = await run(["install", RELEASE, chartDir, "--create-namespace", "--set", "webhook.enabled=true"]);
    expect(r.stderr.replace(/^level=INFO msg="found symbolic link.*\n/gm, "")).toBe("");
    expect(r.code).toBe(0);
    expect(WEBHOOK_INSTALLED.filter((o) => !present(o)).map((o) => `${o.gvr.resource}/${o.name}`)).toEqual([]);
    const config = bed.server.store.get(WEBHOOK_INSTALLED[0]!.gvr, undefined, FULLNAME) as unknown as {
      webhooks: Array<{ failurePolicy: string }>;
    };
    expect(config.webhooks.map((w) => w.failurePolicy)).toEqual(["Ignore"]);
    expect((await run(["uninstall", RELEASE])).code).toBe(0);
    expect(WEBHOOK_INSTALLED.filter((o) => present(o)).map((o) => `${o.gvr.resource}/${o.name}`)).toEqual([]);
  });
});
