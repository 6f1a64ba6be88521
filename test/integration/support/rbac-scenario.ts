// The workloads of the RBAC scenario, the same on the API test server (test/integration/rbac.test.ts)
// and on the real control plane (test/e2e/rbac-audit.test.ts): web (Evict, a probe header from a
// Secret that allows the policy, diagnostics kept a minute), api (Delete) and gate (the
// ReadinessGate drain method, through pods/status).
import { aPolicy, aReplicaSet, aService, type Obj } from "./cluster.js";

/** The objects in the order to create them: the Secret, then each Service and ReplicaSet before its policy. */
export function rbacScenarioObjects(ns: string): Obj[] {
  return [
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "probe-auth", namespace: ns, annotations: { "healthprobe.io/allowed-policies": "web" } },
      data: { token: Buffer.from("s3cret").toString("base64") },
    },
    ...["web", "api"].flatMap((app) => [aService(app, ns), aReplicaSet(app, ns, 3, { app })]),
    aPolicy("web", ns, {
      failureThreshold: 1,
      probe: {
        headers: [{ name: "Authorization", valueFrom: { secretKeyRef: { name: "probe-auth", key: "token" } } }],
      },
      // Two of three pods fail in the scenario: above the mass-failure breaker's default of 50%, so it is off here.
      // Diagnostics are captured before each eviction, and kept for one minute.
      replacement: {
        enabled: true,
        after: "30s",
        maxPerHour: 5,
        maxPerDay: 10,
        method: "Evict",
        pauseAboveUnhealthyPercent: 100,
        diagnosticsRetention: "1m",
      },
    }),
    aPolicy("api", ns, {
      serviceName: "api",
      selector: { app: "api" },
      failureThreshold: 1,
      replacement: { enabled: true, after: "30s", maxPerHour: 5, maxPerDay: 10, method: "Delete" },
    }),
    aService("gate", ns, { selector: { app: "gate" } }),
    aReplicaSet("gate", ns, 2, { app: "gate" }, { gated: true }),
    aPolicy("gate", ns, { serviceName: undefined, method: "ReadinessGate", selector: { app: "gate" } }),
  ];
}
