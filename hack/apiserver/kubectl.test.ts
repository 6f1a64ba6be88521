import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { spawn } from "node:child_process";
import { startApiServer, type TestApiServer } from "./index.js";
import { kubectlBin } from "../../test/support/paths.js";
import { Kubectl, aConfigMap, http, objectApi, ownerRef, type Obj } from "./test-kit.js";
import { widgetCrd } from "./crd-fixture.js";
import { waitFor } from "../../test/support/wait-for.js";

let server: TestApiServer;
let kubectl: Kubectl;

beforeAll(async () => {
  server = await startApiServer({ controllers: false });
  kubectl = new Kubectl(server);
  const crd = kubectl.file("crd.yaml", JSON.stringify(widgetCrd));
  const created = await kubectl.run(["apply", "-f", crd]);
  expect(created.stderr).toBe("");
});
afterAll(async () => {
  await server.stop();
  kubectl.cleanup();
});

const widgetYaml = (name: string, size: number, extra = ""): string =>
  `apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: ${name}\nspec:\n  size: ${size}\n  color: blue\n${extra}`;

describe("the real kubectl", () => {
  it("reports the server version", async () => {
    const out = await kubectl.run(["version", "-o", "json"]);
    expect(JSON.parse(out.stdout).serverVersion.gitVersion).toMatch(/^v1\.33\./);
  });

  it("applies client-side, then shows the CRD's printer columns by short name and category", async () => {
    const file = kubectl.file("w-cs.yaml", widgetYaml("cs", 3));
    const applied = await kubectl.run(["apply", "-f", file]);
    expect(applied.stdout.trim()).toBe("widget.example.com/cs created");
    const table = await kubectl.run(["get", "wd", "cs"]);
    expect(table.stdout.split("\n")[0]!.split(/\s+/)).toEqual(["NAME", "SIZE", "COLOR", "READY", "AGE"]);
    expect(table.stdout.split("\n")[1]).toMatch(/^cs\s+3\s+blue\s+\d+s$/);
    const byCategory = await kubectl.run(["get", "gadgets", "-o", "name"]);
    expect(byCategory.stdout).toContain("widget.example.com/cs");
    const reapplied = await kubectl.run(["apply", "-f", kubectl.file("w-cs2.yaml", widgetYaml("cs", 5))]);
    expect(reapplied.stdout.trim()).toBe("widget.example.com/cs configured");
    expect(
      server.store.get({ group: "example.com", version: "v1", resource: "widgets" }, "default", "cs")!.spec.size,
    ).toBe(5);
  });

  it("applies server-side with kubectl as the field manager", async () => {
    const out = await kubectl.run(["apply", "--server-side", "-f", kubectl.file("w-ss.yaml", widgetYaml("ss", 2))]);
    expect(out.stdout.trim()).toBe("widget.example.com/ss serverside-applied");
    const stored = server.store.get({ group: "example.com", version: "v1", resource: "widgets" }, "default", "ss")!;
    expect(stored.spec.size).toBe(2);
    const applied = server.requestLog.filter((e) => e.name === "ss" && e.verb === "patch");
    expect(applied.map((e) => e.fieldManager)).toEqual(["kubectl"]);
  });

  it("shows the server's validation errors", async () => {
    const invalid = await kubectl.run(["apply", "-f", kubectl.file("w-bad.yaml", widgetYaml("bad", 61))]);
    expect(invalid.code).not.toBe(0);
    expect(invalid.stderr).toContain(
      'The Widget "bad" is invalid: spec.size: Invalid value: 61: spec.size in body should be less than or equal to 60',
    );
    const unknown = await kubectl.run([
      "apply",
      "-f",
      kubectl.file("w-unknown.yaml", widgetYaml("unk", 1, "  bogus: 1\n")),
    ]);
    expect(unknown.stderr).toContain('strict decoding error: unknown field "spec.bogus"');
  });

  it("explains a custom resource's fields from OpenAPI v3", async () => {
    const out = await kubectl.run(["explain", "wd.spec.probe"]);
    expect(out.stdout).toContain("KIND:       Widget");
    expect(out.stdout).toContain("How to probe the widget.");
    expect(out.stdout).toMatch(/timeoutSeconds\s+<integer>/);
  });

  it("patches the status subresource", async () => {
    await kubectl.run(["apply", "-f", kubectl.file("w-st.yaml", widgetYaml("st", 1))]);
    const out = await kubectl.run([
      "patch",
      "wd",
      "st",
      "--subresource=status",
      "--type=merge",
      "-p",
      '{"status":{"conditions":[{"type":"Ready","status":"True"}]}}',
    ]);
    expect(out.stdout.trim()).toBe("widget.example.com/st patched");
    const table = await kubectl.run(["get", "wd", "st", "--no-headers"]);
    expect(table.stdout).toMatch(/^st\s+1\s+blue\s+True\s+/);
  });

  it("sees a change with get -w", async () => {
    await kubectl.run(["apply", "-f", kubectl.file("w-watch.yaml", widgetYaml("watched", 1))]);
    let output = "";
    const child = spawn(
      kubectlBin,
      ["--kubeconfig", kubectl.kubeconfig, "get", "wd", "watched", "-w", "-o", 'jsonpath={.spec.size}{"\\n"}'],
      { env: { ...process.env, HOME: kubectl.home } },
    );
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    try {
      await waitFor(() => output.includes("1\n"), { what: "initial watch output" });
      await http(server, "PATCH", "/apis/example.com/v1/namespaces/default/widgets/watched", {
        body: { spec: { size: 42 } },
        contentType: "application/merge-patch+json",
      });
      await waitFor(() => output.includes("42\n"), { what: "watched change" });
    } finally {
      child.kill("SIGTERM");
    }
    // client-go sends no credentials over plain HTTP: kubectl shows up as anonymous, with its user agent.
    const watchEntry = server.requestLog.find((e) => e.verb === "watch" && e.resource === "widgets");
    expect(watchEntry).toMatchObject({ user: "system:anonymous", userAgent: expect.stringMatching(/^kubectl\//) });
  });

  it("deletes an owner and the garbage collector removes its dependents", async () => {
    const api = objectApi(server);
    const owner = (await api.create(aConfigMap({ name: "owner" }))) as Obj;
    for (const name of ["dep-a", "dep-b"]) await api.create(aConfigMap({ name, ownerReferences: [ownerRef(owner)] }));
    const out = await kubectl.run(["delete", "configmap", "owner"]);
    expect(out.stdout.trim()).toBe('configmap "owner" deleted');
    await waitFor(
      () =>
        server.store
          .list({ group: "", version: "v1", resource: "configmaps" }, "default")
          .every((c) => !c.metadata.name.startsWith("dep-")),
      { what: "dependents deleted" },
    );
  });

  it("applies a built-in kind twice, the second time as a strategic merge patch that merges lists by key", async () => {
    const deployment = (env: string): string => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: app:1
        env: [${env}]
`;
    expect(
      (await kubectl.run(["apply", "-f", kubectl.file("d1.yaml", deployment("{name: A, value: '1'}"))])).stdout.trim(),
    ).toBe("deployment.apps/web created");
    // Someone else adds a container: a client-side apply of the file must keep it.
    await http(server, "PATCH", "/apis/apps/v1/namespaces/default/deployments/web", {
      contentType: "application/strategic-merge-patch+json",
      body: { spec: { template: { spec: { containers: [{ name: "sidecar", image: "side:1" }] } } } },
    });
    const second = await kubectl.run([
      "apply",
      "-f",
      kubectl.file("d2.yaml", deployment("{name: A, value: '2'}, {name: B, value: '3'}")),
    ]);
    expect(second.stdout.trim()).toBe("deployment.apps/web configured");
    const stored = server.store.get({ group: "apps", version: "v1", resource: "deployments" }, "default", "web")!;
    const containers = stored.spec.template.spec.containers as Obj[];
    expect(containers.map((c) => c.name).sort()).toEqual(["app", "sidecar"]);
    expect(containers.find((c) => c.name === "app")!.env).toEqual([
      { name: "A", value: "2" },
      { name: "B", value: "3" },
    ]);
    const patchEntry = server.requestLog.filter(
      (e) => e.resource === "deployments" && e.verb === "patch" && e.fieldManager === "kubectl-client-side-apply",
    );
    expect(patchEntry).toHaveLength(1);
  });

  it("prints EndpointSlices and Services with the real columns", async () => {
    await http(server, "POST", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", {
      body: {
        metadata: { name: "web-abc", labels: { "kubernetes.io/service-name": "web" } },
        addressType: "IPv4",
        ports: [{ port: 8080 }],
        endpoints: [{ addresses: ["127.0.10.1"] }, { addresses: ["127.0.10.2"] }],
      },
    });
    const slices = await kubectl.run(["get", "endpointslices", "-l", "kubernetes.io/service-name=web"]);
    expect(slices.stdout.split("\n")[0]!.split(/\s+/)).toEqual(["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]);
    expect(slices.stdout.split("\n")[1]).toMatch(/^web-abc\s+IPv4\s+8080\s+127\.0\.10\.1,127\.0\.10\.2\s+\d+s$/);
    const services = await kubectl.run(["get", "services", "kubernetes", "--no-headers"]);
    expect(services.stdout).toMatch(/^kubernetes\s+ClusterIP\s+10\.96\.0\.1\s+<none>\s+443\/TCP\s+\d+s$/m);
  });

  it("creates a secret with kubectl create (a protobuf body, as helm's release storage sends)", async () => {
    const out = await kubectl.run(["create", "secret", "generic", "creds", "--from-literal=user=alice"]);
    expect({ stderr: out.stderr, code: out.code }).toEqual({ stderr: "", code: 0 });
    const secret: Obj = JSON.parse((await kubectl.run(["get", "secret", "creds", "-o", "json"])).stdout);
    expect(Buffer.from(secret.data.user, "base64").toString()).toBe("alice");
  });

  it("lists built-in kinds with NAME and AGE", async () => {
    const out = await kubectl.run(["get", "namespaces"]);
    expect(out.stdout.split("\n")[0]!.split(/\s+/)).toEqual(["NAME", "AGE"]);
    expect(out.stdout).toMatch(/^kube-system\s+\d+s$/m);
  });
});
