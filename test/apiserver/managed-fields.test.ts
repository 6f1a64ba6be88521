// managedFields of Update managers across a pod's life: a creator, a kubelet writing status, an
// editor changing a label. Each write's fields become its manager's and leave the others'.
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startApiServer, type TestApiServer } from "./index.js";
import { aPod, http, uniqueName, type Obj } from "./test-kit.js";

let server: TestApiServer;
beforeAll(async () => {
  server = await startApiServer({ controllers: false });
});
afterAll(async () => {
  await server.stop();
});

const podPath = (name: string, sub = "") => `/api/v1/namespaces/default/pods/${name}${sub}`;
const fieldsOf = (pod: Obj, manager: string) =>
  (pod.metadata!.managedFields as Obj[]).find((e) => e.manager === manager)?.fieldsV1;

async function write(method: "POST" | "PUT", path: string, manager: string, body: Obj): Promise<Obj> {
  const res = await http(server, method, `${path}?fieldManager=${manager}`, { body });
  expect(res.status).toBeLessThan(300);
  return res.body as Obj;
}

const running = (pod: Obj, extra: Obj = {}): Obj => ({
  ...pod,
  status: {
    ...extra,
    phase: "Running",
    podIP: "10.0.0.1",
    hostIP: "10.0.1.1",
    conditions: [{ type: "Ready", status: "True" }],
  },
});

describe("managedFields of Update managers", () => {
  it("gives the status writer the status fields it set, leaves the creator's, and moves a changed label to its editor", async () => {
    const name = uniqueName("mf");
    const created = await write(
      "POST",
      "/api/v1/namespaces/default/pods",
      "creator",
      aPod({ name, labels: { app: "web", tier: "front" } }),
    );
    const creatorFields = fieldsOf(created, "creator");
    expect(creatorFields["f:status"]).toEqual({ "f:phase": {}, "f:qosClass": {} });

    // The kubelet's status write takes the phase it changed; the creator's metadata and spec fields stay as they were.
    const started = await write(
      "PUT",
      podPath(name, "/status"),
      "kubelet",
      running(created, { qosClass: created.status.qosClass }),
    );
    expect(fieldsOf(started, "creator")).toEqual({ ...creatorFields, "f:status": { "f:qosClass": {} } });
    expect(fieldsOf(started, "kubelet")).toEqual({
      "f:status": {
        "f:phase": {},
        "f:podIP": {},
        "f:hostIP": {},
        "f:conditions": { 'k:{"type":"Ready"}': { ".": {}, "f:type": {}, "f:status": {} } },
      },
    });

    // A second status write that drops hostIP and changes Ready: the kubelet keeps what is still there.
    const { hostIP: _h, ...withoutHost } = started.status;
    const notReady = await write("PUT", podPath(name, "/status"), "kubelet", {
      ...started,
      status: { ...withoutHost, conditions: [{ type: "Ready", status: "False" }] },
    });
    expect(fieldsOf(notReady, "kubelet")).toEqual({
      "f:status": {
        "f:phase": {},
        "f:podIP": {},
        "f:conditions": { 'k:{"type":"Ready"}': { ".": {}, "f:type": {}, "f:status": {} } },
      },
    });

    const edited = await write("PUT", podPath(name), "editor", {
      ...notReady,
      metadata: { ...notReady.metadata, labels: { app: "web", tier: "back" } },
    });
    expect(fieldsOf(edited, "editor")).toEqual({ "f:metadata": { "f:labels": { "f:tier": {} } } });
    expect(fieldsOf(edited, "creator")).toEqual({
      ...creatorFields,
      "f:metadata": { "f:labels": { "f:app": {} } },
      "f:status": { "f:qosClass": {} },
    });
    expect(fieldsOf(edited, "kubelet")).toEqual(fieldsOf(notReady, "kubelet"));
  });
});
