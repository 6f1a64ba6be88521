// What a policy is told when the operator runs it differently from its spec or cannot run it: a
// Secret the API server refuses the operator (403, as with the chart's rbac.secrets=false) is
// SecretForbidden for that policy alone, and a timeoutSeconds over --max-probe-timeout is capped
// and said so in Ready's message, naming the field and the cap.
import { describe, expect, it } from "@jest/globals";
import { waitFor } from "../support/wait-for.js";
import { aPod, aPolicy, aService, type Obj } from "./support/cluster.js";
import { itOnTestServer, useBed } from "./support/test-bed.js";
import { servedPod, type PolicyCondition as Condition } from "./support/queries.js";

const HPP = "healthprobe.io/v1alpha1";
const TOKEN = "Bearer s3cret-value";

const bed = useBed();

const givenPod = (pod: Obj) => servedPod(bed, pod);

async function readyCondition(reason: string, policy = "web"): Promise<Condition> {
  return waitFor(
    async () => {
      const c = (
        (await bed.cluster.get(HPP, "HealthProbePolicy", policy))?.status?.conditions as Condition[] | undefined
      )?.find((x) => x.type === "Ready");
      return c?.reason === reason ? c : undefined;
    },
    { what: `${policy}'s Ready reason ${reason}` },
  );
}

describe("a Secret the operator may not read", () => {
  // Test server only: it refuses the Secret read with an injected 403 (no fault proxy on the control plane).
  itOnTestServer(
    "reports SecretForbidden naming the field when the API server refuses the read (403), keeps the namespace's other policy probing, and heals once the read is allowed",
    async () => {
      const ns = bed.cluster.namespace;
      await bed.cluster.create({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "probe-auth", namespace: ns, annotations: { "healthprobe.io/allowed-policies": "web" } },
        data: { token: Buffer.from(TOKEN).toString("base64") },
      });
      await bed.cluster.create(aService("web", ns));
      await bed.cluster.create(aService("api", ns));
      const webIP = await givenPod(aPod("web-a", ns));
      const apiIP = await givenPod(aPod("api-a", ns, { labels: { app: "api" } }));
      await bed.cluster.create(
        aPolicy("web", ns, {
          probe: {
            headers: [{ name: "Authorization", valueFrom: { secretKeyRef: { name: "probe-auth", key: "token" } } }],
          },
        }),
      );
      await bed.cluster.create(aPolicy("api", ns, { serviceName: "api", selector: { app: "api" } }));
      // As the API server answers an operator installed with rbac.secrets=false.
      bed.cluster.testServer().faults.failRate({ rate: 1, verb: "get", resource: "secrets", code: 403 });
      await bed.startOperator();

      const forbidden = await readyCondition("SecretForbidden");
      expect(forbidden.status).toBe("False");
      expect(forbidden.message).toMatch(
        /^spec\.probe\.headers\[0\]\.valueFrom\.secretKeyRef: the API server refuses the operator Secret "probe-auth" \(403 Forbidden: .+\); the operator needs get on secrets in this namespace \(the chart's rbac\.secrets=true\)/,
      );
      const warning = await waitFor(
        async () =>
          (await bed.cluster.list("events.k8s.io/v1", "Event")).find((e: Obj) => e.reason === "SecretForbidden"),
        { what: "a SecretForbidden Event" },
      );
      expect(warning.type).toBe("Warning");
      await readyCondition("Reconciled", "api");
      await waitFor(async () => (await bed.farm.hitsOf(apiIP)) > 0, { what: "api-a probed meanwhile" });
      expect(await bed.farm.hitsOf(webIP)).toBe(0);
      // A policy's problem, not a failed reconcile retried with back-off.
      expect(bed.operator.logs.filter((l) => String(l.msg).startsWith("reconcile failed"))).toEqual([]);

      bed.cluster.testServer().faults.clear();
      expect(await readyCondition("Reconciled")).toMatchObject({ status: "True" });
      await waitFor(async () => await bed.farm.sawHeaderValue(webIP, TOKEN), {
        what: "the Secret's value sent to web-a once it can be read",
      });
    },
  );
});

describe("--max-probe-timeout", () => {
  it("keeps a policy whose timeoutSeconds it caps Ready, says so in Ready's message naming the field and the cap, and probes it", async () => {
    const ns = bed.cluster.namespace;
    await bed.cluster.create(aService("web", ns));
    const ip = await givenPod(aPod("web-a", ns));
    await bed.cluster.create(aPolicy("web", ns, { periodSeconds: 5, timeoutSeconds: 5 }));
    await bed.startOperator(["--max-probe-timeout", "2s"]);

    expect(await readyCondition("Reconciled")).toMatchObject({
      status: "True",
      message:
        "spec valid, Service found and selector-less, probing running; spec.probe.timeoutSeconds 5 capped to 2: the operator's --max-probe-timeout is 2s",
    });
    await waitFor(async () => (await bed.farm.hitsOf(ip)) > 0, { what: "web-a probed" });
  });
});
