import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { lstatSync, mkdtempSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { spawnSync } from "node:child_process";
import { parse } from "yaml";
import { ALL_OPTIONAL_ON, chartDir, helm, renderChart, setArgs, type KubeManifest } from "./helm.js";
import { repoRoot } from "../support/paths.js";
import { parseConfig } from "../../operator/src/runtime/config.js";

const byKind = (docs: KubeManifest[], kind: string): KubeManifest[] => docs.filter((d) => d.kind === kind);
const one = (docs: KubeManifest[], kind: string): any => {
  const found = byKind(docs, kind);
  if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}`);
  return found[0];
};

describe("helm lint --strict", () => {
  it.each([
    { name: "default values", values: [] as string[] },
    { name: "every optional part on", values: ALL_OPTIONAL_ON },
    { name: "a single watched namespace", values: ["watchNamespace=apps"] },
    { name: "a list of watched namespaces", values: ["rbac.namespaces={shop,payments}"] },
    { name: "no aggregated roles", values: ["rbac.aggregateRoles=false"] },
    { name: "the webhook on", values: ["webhook.enabled=true"] },
    { name: "the webhook on with cert-manager", values: ["webhook.enabled=true", "webhook.certManager.enabled=true"] },
    {
      name: "every default part off",
      values: [
        "rbac.create=false",
        "serviceAccount.create=false",
        "serviceAccount.name=existing",
        "podDisruptionBudget.enabled=false",
        "shards.enabled=false",
        "leaderElection.enabled=false",
        "replicaCount=1",
      ],
    },
  ])("passes with $name", ({ values }) => {
    const r = helm(["lint", "--strict", chartDir, ...setArgs(values)]);
    expect(`${r.stdout}${r.stderr}`).toContain("0 chart(s) failed");
    expect(r.code).toBe(0);
  });
});

describe("values.schema.json", () => {
  it.each([
    {
      name: "a replica count that is not a number",
      set: ["replicaCount=two"],
      field: "/replicaCount",
      says: /got string, want integer/,
    },
    {
      name: "a negative replica count",
      set: ["replicaCount=-1"],
      field: "/replicaCount",
      says: /minimum: got -1, want 0/,
    },
    {
      name: "an unknown log level",
      set: ["logLevel=verbose"],
      field: "/logLevel",
      says: /value must be one of .trace./,
    },
    { name: "a misspelt top-level value", set: ["replicas=3"], field: "replicas", says: /additional properties/ },
    {
      name: "an endpoint limit above 1000",
      set: ["maxEndpointsPerSlice=5000"],
      field: "/maxEndpointsPerSlice",
      says: /maximum/,
    },
    {
      name: "rbac.secrets that is not a boolean",
      set: ["rbac.secrets=maybe"],
      field: "/rbac/secrets",
      says: /want boolean/,
    },
    {
      name: "a webhook timeout above kube-apiserver's 30 s",
      set: ["webhook.timeoutSeconds=60"],
      field: "/webhook/timeoutSeconds",
      says: /maximum/,
    },
  ])("rejects $name, naming the field", ({ set, field, says }) => {
    const r = helm(["template", "x", chartDir, ...setArgs(set)]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("values don't meet the specifications of the schema");
    expect(r.stderr).toContain(field);
    expect(r.stderr).toMatch(says);
  });

  it("is draft-07 and types every value in values.yaml", () => {
    const schema = JSON.parse(readFileSync(join(chartDir, "values.schema.json"), "utf8"));
    expect(schema.$schema).toBe("http://json-schema.org/draft-07/schema#");
    const values = parse(readFileSync(join(chartDir, "values.yaml"), "utf8"));
    const untyped: string[] = [];
    const walk = (v: unknown, s: any, path: string): void => {
      if (!s || (!s.type && !s.anyOf)) {
        untyped.push(path);
        return;
      }
      if (v && typeof v === "object" && !Array.isArray(v) && s.properties) {
        for (const [k, child] of Object.entries(v)) walk(child, s.properties[k], `${path}.${k}`);
      }
    };
    walk(values, schema, "");
    expect(untyped).toEqual([]);
  });
});

describe("Chart.yaml", () => {
  it("has appVersion equal to package.json's version", () => {
    const chart = parse(readFileSync(join(chartDir, "Chart.yaml"), "utf8"));
    const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8"));
    expect(chart.appVersion).toBe(pkg.version);
    expect(chart.apiVersion).toBe("v2");
    expect(chart.type).toBe("application");
  });
});

describe("the CRD has one source", () => {
  it("charts/healthprobe-operator/crds is a relative symlink to crds/", () => {
    const link = join(chartDir, "crds");
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe("../../crds");
    expect(resolve(chartDir, readlinkSync(link))).toBe(join(repoRoot, "crds"));
  });

  it("renders the generated CRD byte for byte", () => {
    const generated = parse(readFileSync(join(repoRoot, "crds", "healthprobe.io_healthprobepolicies.yaml"), "utf8"));
    const rendered = renderChart().filter((d) => d.kind === "CustomResourceDefinition");
    expect(rendered).toEqual([generated]);
  });

  describe("in the packaged chart", () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), "healthprobe-package-"));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("is a regular file with the generated content", () => {
      const r = helm(["package", chartDir, "--destination", dir]);
      expect(r.code).toBe(0);
      const tgz = join(dir, "healthprobe-operator-0.1.0.tgz");
      const out = spawnSync(
        "tar",
        ["-xzOf", tgz, "healthprobe-operator/crds/healthprobe.io_healthprobepolicies.yaml"],
        { encoding: "utf8" },
      );
      expect(out.status).toBe(0);
      expect(out.stdout).toBe(readFileSync(join(repoRoot, "crds", "healthprobe.io_healthprobepolicies.yaml"), "utf8"));
    });
  });
});

describe("rendered manifests", () => {
  let defaults: KubeManifest[];
  let everything: KubeManifest[];
  beforeAll(() => {
    defaults = renderChart();
    everything = renderChart({ values: ALL_OPTIONAL_ON });
  });

  it("contain no * in any RBAC rule, with every optional part on", () => {
    const rbac = everything.filter((d) => d.kind === "ClusterRole" || d.kind === "Role");
    expect(rbac.length).toBeGreaterThan(0);
    const wildcards = rbac.flatMap((d) =>
      ((d.rules as Array<Record<string, string[]>>) ?? []).flatMap((r) =>
        ["apiGroups", "resources", "verbs", "resourceNames", "nonResourceURLs"].flatMap((f) =>
          (r[f] ?? []).filter((v) => v.includes("*")).map((v) => `${d.kind}/${d.metadata.name} ${f}: ${v}`),
        ),
      ),
    );
    expect(wildcards).toEqual([]);
  });

  it("render the expected kinds by default, and the optional ones only when switched on", () => {
    const kinds = (docs: KubeManifest[]) => docs.map((d) => d.kind).sort();
    expect(kinds(defaults)).toEqual([
      // The operator's, its access reviews' and the metrics reader's ClusterRoles; the metrics reader is bound only to metricsReader.subjects.
      // And the edit and view ClusterRoles aggregated to the built-in roles, bound by nothing of the chart's.
      "ClusterRole",
      "ClusterRole",
      "ClusterRole",
      "ClusterRole",
      "ClusterRole",
      "ClusterRoleBinding",
      "ClusterRoleBinding",
      "CustomResourceDefinition",
      "Deployment",
      "Pod",
      "PodDisruptionBudget",
      "Role",
      "RoleBinding",
      "Service",
      "ServiceAccount",
    ]);
    expect(kinds(everything).filter((k) => !kinds(defaults).includes(k))).toEqual([
      "ConfigMap",
      "PrometheusRule",
      "ServiceMonitor",
    ]);
  });

  it("run two replicas with shards on, the pod's namespace and a locked-down container", () => {
    const d = one(defaults, "Deployment");
    const pod = d.spec.template.spec;
    const c = pod.containers[0];
    expect(d.spec.replicas).toBe(2);
    expect(c.args).not.toContain("--leader-elect");
    expect(c.args).toEqual(
      expect.arrayContaining([
        "--shards=on",
        "--leader-election-id=healthprobe-operator",
        "--shard-lease-duration=15s",
        "--shard-skew-margin=2s",
        "--metrics-bind-address=:8080",
        "--health-probe-bind-address=:8081",
        "--max-replacements-per-12h=10",
        "--max-endpoints-per-slice=100",
        "--log-level=info",
      ]),
    );
    expect(c.env).toContainEqual({
      name: "POD_NAMESPACE",
      valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } },
    });
    expect(c.image).toBe("ghcr.io/healthprobe/healthprobe-operator:0.1.0");
    // The chart passes the operator's own defaults, so running it by hand or by the chart behaves alike.
    const own = parseConfig([], {});
    if (!own.ok) throw new Error(own.message);
    expect(c.args).toEqual(
      expect.arrayContaining([
        `--max-concurrent-probes=${own.config.maxConcurrentProbes}`,
        `--max-replacements-per-12h=${own.config.maxReplacementsPer12h}`,
      ]),
    );
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65532,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(c.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65532,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(c.resources.requests).toBeDefined();
    expect(c.resources.limits).toBeDefined();
    expect(c.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "health" });
    expect(c.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "health" });
    expect(c.ports).toContainEqual({ name: "health", containerPort: 8081, protocol: "TCP" });
    expect(pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution).toHaveLength(1);
    expect(pod.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution).toBeUndefined();
    expect(pod.topologySpreadConstraints[0].whenUnsatisfiable).toBe("ScheduleAnyway");
  });

  it("leave out what is switched off", () => {
    const docs = renderChart({
      values: [
        "rbac.create=false",
        "serviceAccount.create=false",
        "serviceAccount.name=existing",
        "podDisruptionBudget.enabled=false",
      ],
    });
    expect(
      docs
        .map((d) => d.kind)
        .filter((k) =>
          [
            "ServiceAccount",
            "PodDisruptionBudget",
            "ClusterRole",
            "ClusterRoleBinding",
            "Role",
            "RoleBinding",
          ].includes(k),
        ),
    ).toEqual([]);
    expect(one(docs, "Deployment").spec.template.spec.serviceAccountName).toBe("existing");
  });

  it("run the operator with leader election instead when shards are off", () => {
    const c = one(renderChart({ values: ["shards.enabled=false"] }), "Deployment").spec.template.spec.containers[0];
    expect(c.args).toEqual(expect.arrayContaining(["--leader-elect", "--leader-election-id=healthprobe-operator"]));
    expect(c.args.filter((a: string) => a.startsWith("--shard"))).toEqual([]);
  });

  it("grant no Lease access without shards or leader election", () => {
    const role = one(renderChart({ values: ["shards.enabled=false", "leaderElection.enabled=false"] }), "Role");
    expect(role.rules.flatMap((r: { resources: string[] }) => r.resources)).not.toContain("leases");
  });

  it("pass values through to the operator's flags", () => {
    const d = one(
      renderChart({
        values: [
          "watchNamespace=apps",
          "shards.enabled=false",
          "leaderElection.enabled=false",
          "maxReplacementsPer12h=3",
          "logLevel=debug",
          "image.tag=dev",
        ],
      }),
      "Deployment",
    );
    const c = d.spec.template.spec.containers[0];
    expect(c.args).toEqual(
      expect.arrayContaining(["--namespace=apps", "--max-replacements-per-12h=3", "--log-level=debug"]),
    );
    expect(c.args).not.toContain("--leader-elect");
    expect(c.image).toBe("ghcr.io/healthprobe/healthprobe-operator:dev");
  });

  it("expose metrics and health on the Service, which the helm test Pod calls for /readyz", () => {
    const svc = one(defaults, "Service");
    expect(svc.spec.ports.map((p: { name: string; port: number }) => `${p.name}:${p.port}`)).toEqual([
      "metrics:8080",
      "health:8081",
    ]);
    const test = one(defaults, "Pod");
    expect(test.metadata.annotations["helm.sh/hook"]).toBe("test");
    // The Service's environment variable, not its DNS name: clusters without cluster DNS run it too.
    const hostVar = `${svc.metadata.name.toUpperCase().replaceAll("-", "_")}_SERVICE_HOST`;
    expect(test.spec.containers[0].command.join(" ")).toContain(`http://$(${hostVar}):8081/readyz`);
    expect(test.spec.enableServiceLinks).not.toBe(false);
  });

  it("keep one operator replica available through voluntary disruptions", () => {
    const pdb = one(defaults, "PodDisruptionBudget");
    expect(pdb.spec.maxUnavailable).toBe(1);
    expect(pdb.spec.selector.matchLabels).toEqual(one(defaults, "Deployment").spec.selector.matchLabels);
  });

  it("alert on drained targets, fail open, exhausted budgets and a missing leader", () => {
    const rule = one(everything, "PrometheusRule");
    const rules = rule.spec.groups.flatMap((g: { rules: Array<{ alert: string; expr: string }> }) => g.rules);
    const expr = (alert: string) => rules.find((r: { alert: string }) => r.alert === alert)?.expr ?? "";
    expect(expr("HealthProbeManyTargetsDrained")).toContain("healthprobe_drained_targets");
    expect(expr("HealthProbeFailOpen")).toContain("healthprobe_targets");
    expect(expr("HealthProbeReplacementBudgetExhausted")).toMatch(/healthprobe_replacement_budget_remaining\)? == 0/);
    expect(expr("HealthProbeNoLeader")).toContain("max(healthprobe_leader) == 0");
  });

  it("ship a Grafana dashboard with a panel over every operator metric", () => {
    const cm = byKind(everything, "ConfigMap").find((d) => d.metadata.labels?.grafana_dashboard === "1") as any;
    expect(cm).toBeDefined();
    const dashboard = JSON.parse(cm.data["healthprobe-operator.json"]);
    const exprs = dashboard.panels
      .flatMap((p: { targets: Array<{ expr: string }> }) => p.targets.map((t) => t.expr))
      .join("\n");
    for (const metric of [
      "healthprobe_probes_total",
      "healthprobe_probe_duration_seconds",
      "healthprobe_targets",
      "healthprobe_drained_targets",
      "healthprobe_replacements_total",
      "healthprobe_workqueue_depth",
      "healthprobe_reconcile_duration_seconds",
    ]) {
      expect(exprs).toContain(metric);
    }
  });

  it("scrape the metrics port from a ServiceMonitor", () => {
    const sm = one(everything, "ServiceMonitor");
    expect(sm.spec.endpoints).toEqual([expect.objectContaining({ port: "metrics", path: "/metrics" })]);
    expect(sm.spec.selector.matchLabels).toEqual(one(everything, "Service").spec.selector);
  });
});

describe("the locked /metrics and /debug/targets", () => {
  const args = (docs: KubeManifest[]): string[] => one(docs, "Deployment").spec.template.spec.containers[0].args;

  it("scrapes with Prometheus's ServiceAccount token by default, or with the authorization it is given", () => {
    const endpoint = (values: string[]) =>
      one(renderChart({ values: ["serviceMonitor.enabled=true", ...values] }), "ServiceMonitor").spec.endpoints[0];
    expect(endpoint([])).toMatchObject({ bearerTokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token" });
    const withSecret = endpoint([
      "serviceMonitor.authorization.type=Bearer",
      "serviceMonitor.authorization.credentials.name=metrics-token",
      "serviceMonitor.authorization.credentials.key=token",
    ]);
    expect(withSecret.authorization).toEqual({ type: "Bearer", credentials: { name: "metrics-token", key: "token" } });
    expect(withSecret.bearerTokenFile).toBeUndefined();
  });

  it("ships a reader ClusterRole for the two paths, bound only to the subjects it is given", () => {
    const reader = (docs: KubeManifest[]) => docs.filter((d) => String(d.metadata?.name).endsWith("-metrics-reader"));
    const defaults = reader(renderChart());
    expect(defaults.map((d) => d.kind)).toEqual(["ClusterRole"]);
    expect((defaults[0] as any).rules).toEqual([{ nonResourceURLs: ["/metrics", "/debug/targets"], verbs: ["get"] }]);
    const bound = reader(
      renderChart({
        values: [
          "metricsReader.subjects[0].kind=ServiceAccount",
          "metricsReader.subjects[0].name=prometheus",
          "metricsReader.subjects[0].namespace=monitoring",
        ],
      }),
    );
    expect((bound.find((d) => d.kind === "ClusterRoleBinding") as any).subjects).toEqual([
      { kind: "ServiceAccount", name: "prometheus", namespace: "monitoring" },
    ]);
  });

  it("leaves the per-namespace share to the operator's default unless a value is set", () => {
    expect(args(renderChart()).some((a) => a.startsWith("--max-replacements-per-12h-per-namespace"))).toBe(false);
    expect(args(renderChart({ values: ["maxReplacementsPer12hPerNamespace=3"] }))).toContain(
      "--max-replacements-per-12h-per-namespace=3",
    );
  });

  it("never turns the access check off", () => {
    expect(args(renderChart({ values: ALL_OPTIONAL_ON }))).not.toContain("--insecure-diagnostics");
  });
});

describe("the admission webhook", () => {
  it("is off by default: no webhook configuration, Service, flag or port", () => {
    const docs = renderChart();
    expect(byKind(docs, "MutatingWebhookConfiguration")).toEqual([]);
    const c = one(docs, "Deployment").spec.template.spec.containers[0];
    expect(c.args.filter((a: string) => a.startsWith("--webhook"))).toEqual([]);
    expect(c.ports.map((p: { name: string }) => p.name)).not.toContain("webhook");
  });

  it("registers for pod creates in opted-in namespaces only, never refusing a pod", () => {
    const docs = renderChart({ values: ["webhook.enabled=true"] });
    const config = one(docs, "MutatingWebhookConfiguration");
    expect(config.webhooks).toHaveLength(1);
    const w = config.webhooks[0];
    expect(w).toMatchObject({
      admissionReviewVersions: ["v1"],
      failurePolicy: "Ignore",
      sideEffects: "None",
      reinvocationPolicy: "Never",
      timeoutSeconds: 5,
      namespaceSelector: { matchLabels: { "healthprobe.io/readiness-gate-inject": "enabled" } },
      rules: [
        { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"], scope: "Namespaced" },
      ],
      clientConfig: {
        service: {
          name: "healthprobe-healthprobe-operator-webhook",
          namespace: "healthprobe-system",
          path: "/mutate-pods",
          port: 443,
        },
      },
    });
    expect(w.objectSelector).toBeUndefined();
    // The operator writes caBundle; the chart never does, so an upgrade does not take it away.
    expect(w.clientConfig.caBundle).toBeUndefined();
    expect(config.metadata.annotations?.["cert-manager.io/inject-ca-from"]).toBeUndefined();
  });

  it("serves it on every replica through a Service, with the operator's flags naming its Service, Secret and configuration", () => {
    const docs = renderChart({ values: ["webhook.enabled=true"] });
    const svc = byKind(docs, "Service").find(
      (s) => s.metadata.name === "healthprobe-healthprobe-operator-webhook",
    ) as any;
    expect(svc.spec.ports).toEqual([{ name: "webhook", port: 443, targetPort: "webhook", protocol: "TCP" }]);
    expect(svc.spec.selector).toEqual(one(docs, "Deployment").spec.selector.matchLabels);
    const c = one(docs, "Deployment").spec.template.spec.containers[0];
    expect(c.ports).toContainEqual({ name: "webhook", containerPort: 9443, protocol: "TCP" });
    const args = c.args.filter((a: string) => a.startsWith("--webhook"));
    expect(args).toEqual([
      "--webhook-bind-address=:9443",
      "--webhook-service-name=healthprobe-healthprobe-operator-webhook",
      "--webhook-secret-name=healthprobe-healthprobe-operator-webhook-cert",
      `--webhook-configuration-name=${one(docs, "MutatingWebhookConfiguration").metadata.name}`,
      "--webhook-manage-certificate=true",
    ]);
    const parsed = parseConfig(args, {});
    expect(parsed.ok).toBe(true);
  });

  it("with cert-manager: a self-signed Issuer, a Certificate for the Service into the Secret, the CA injected, and the operator only reading", () => {
    const docs = renderChart({ values: ["webhook.enabled=true", "webhook.certManager.enabled=true"] });
    const cert = one(docs, "Certificate");
    expect(cert.spec).toEqual({
      secretName: "healthprobe-healthprobe-operator-webhook-cert",
      dnsNames: ["healthprobe-healthprobe-operator-webhook.healthprobe-system.svc"],
      issuerRef: { kind: "Issuer", name: one(docs, "Issuer").metadata.name },
    });
    expect(one(docs, "Issuer").spec).toEqual({ selfSigned: {} });
    expect(one(docs, "MutatingWebhookConfiguration").metadata.annotations["cert-manager.io/inject-ca-from"]).toBe(
      `healthprobe-system/${cert.metadata.name}`,
    );
    expect(one(docs, "Deployment").spec.template.spec.containers[0].args).toContain(
      "--webhook-manage-certificate=false",
    );
  });

  it("with cert-manager and an issuer of the user's, makes no Issuer", () => {
    const docs = renderChart({
      values: [
        "webhook.enabled=true",
        "webhook.certManager.enabled=true",
        "webhook.certManager.issuerRef.kind=ClusterIssuer",
        "webhook.certManager.issuerRef.name=internal-ca",
      ],
    });
    expect(byKind(docs, "Issuer")).toEqual([]);
    expect(one(docs, "Certificate").spec.issuerRef).toEqual({ kind: "ClusterIssuer", name: "internal-ca" });
  });
});
