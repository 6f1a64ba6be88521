import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { CoreV1Api } from "@kubernetes/client-node";
import { requestsBy, startApiServer, type TestApiServer } from "./index.js";
import { aPod, http, kubeConfigFor } from "./test-kit.js";

let server: TestApiServer;
let core: CoreV1Api;

beforeAll(async () => {
  server = await startApiServer({ controllers: false });
  core = kubeConfigFor(server, "reader").makeApiClient(CoreV1Api);
});
afterAll(async () => {
  await server.stop();
});

async function aRunningPod(containers: string[] = ["app"]): Promise<string> {
  const body = aPod() as any;
  body.spec.containers = containers.map((name) => ({ name, image: "nginx:1.27" }));
  const pod = await core.createNamespacedPod({ namespace: "default", body });
  await core.replaceNamespacedPodStatus({
    namespace: "default",
    name: pod.metadata!.name!,
    body: { ...pod, status: { phase: "Running", podIP: "127.0.10.9" } },
  });
  return pod.metadata!.name!;
}

const log = (name: string, query = "") => http(server, "GET", `/api/v1/namespaces/default/pods/${name}/log${query}`);

describe("GET pods/{name}/log", () => {
  it("serves the tail of the container's log as text, read by client-node as the real one", async () => {
    const name = await aRunningPod();
    server.podLogs.append("default", name, "app", ["one", "two", "three"]);
    expect(await core.readNamespacedPodLog({ name, namespace: "default", tailLines: 2 })).toBe("two\nthree\n");
    expect(await core.readNamespacedPodLog({ name, namespace: "default", container: "app" })).toBe("one\ntwo\nthree\n");
    const res = await log(name, "?limitBytes=5");
    expect([res.status, res.body, res.headers.get("content-type")]).toEqual([200, "one\nt", "text/plain"]);
    expect(
      requestsBy(server.requestLog, { user: "reader", resource: "pods" })
        .filter((e) => e.subresource === "log")
        .map((e) => e.verb),
    ).toContain("get");
  });

  it("serves the previous container's log after a restart, and refuses it before one as the kubelet does", async () => {
    const name = await aRunningPod();
    const before = await log(name, "?previous=true");
    expect([before.status, before.body.message]).toEqual([
      400,
      `previous terminated container "app" in pod "${name}" not found`,
    ]);
    server.podLogs.append("default", name, "app", ["crashed"]);
    server.podLogs.restart("default", name, "app");
    server.podLogs.append("default", name, "app", ["started again"]);
    expect(await core.readNamespacedPodLog({ name, namespace: "default", previous: true })).toBe("crashed\n");
    expect(await core.readNamespacedPodLog({ name, namespace: "default" })).toBe("started again\n");
  });

  const refusals: Array<[string, string[], string, number, string]> = [
    [
      "no container named in a pod with two",
      ["app", "sidecar"],
      "",
      400,
      "a container name must be specified for pod NAME, choose one of: [app sidecar]",
    ],
    ["a container the pod does not have", ["app"], "?container=db", 400, "container db is not valid for pod NAME"],
    [
      "a negative tailLines",
      ["app"],
      "?tailLines=-1",
      422,
      'PodLogOptions "NAME" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0',
    ],
    [
      "a zero limitBytes",
      ["app"],
      "?limitBytes=0",
      422,
      'PodLogOptions "NAME" is invalid: limitBytes: Invalid value: 0: must be greater than 0',
    ],
  ];
  it.each(refusals)("refuses %s with the real message", async (_what, containers, query, code, message) => {
    const name = await aRunningPod(containers);
    const res = await log(name, query);
    expect([res.status, res.body.message]).toEqual([code, message.replace("NAME", name)]);
  });

  it("answers 404 for a missing pod and 400 for a container not started yet", async () => {
    const missing = await log("nope");
    expect([missing.status, missing.body.message]).toEqual([404, 'pods "nope" not found']);
    const pending = (await core.createNamespacedPod({ namespace: "default", body: aPod() as any })).metadata!.name!;
    const res = await log(pending);
    expect([res.status, res.body.message]).toEqual([
      400,
      `container "app" in pod "${pending}" is waiting to start: ContainerCreating`,
    ]);
  });
});
