// Valid baseline objects per kind, for table-driven tests: each case changes one thing.
type Obj = Record<string, any>;

const merge = (base: Obj, patch: (o: Obj) => void): Obj => {
  const o = structuredClone(base);
  patch(o);
  return o;
};

export const meta = (name: string, namespace?: string): Obj => ({ name, ...(namespace ? { namespace } : {}) });

export const anEndpointSlice = (patch: (o: Obj) => void = () => {}): Obj =>
  merge(
    {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { ...meta("web-abc12", "default"), labels: { "kubernetes.io/service-name": "web" } },
      addressType: "IPv4",
      endpoints: [
        {
          addresses: ["10.1.2.3"],
          conditions: { ready: true },
          nodeName: "node-1",
          zone: "a",
          targetRef: { kind: "Pod", name: "web-1", namespace: "default" },
        },
      ],
      ports: [{ name: "http", protocol: "TCP", port: 8080 }],
    },
    patch,
  );

export const aLease = (patch: (o: Obj) => void = () => {}): Obj =>
  merge(
    {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: meta("leader", "default"),
      spec: { holderIdentity: "a", leaseDurationSeconds: 15, leaseTransitions: 0 },
    },
    patch,
  );

export const aCoreEvent = (patch: (o: Obj) => void = () => {}): Obj =>
  merge(
    {
      apiVersion: "v1",
      kind: "Event",
      metadata: meta("web-1.17a", "default"),
      involvedObject: { kind: "Pod", name: "web-1", namespace: "default" },
      reason: "Drained",
      message: "removed from load balancer",
      type: "Normal",
      source: { component: "healthprobe" },
    },
    patch,
  );

export const anEventsV1Event = (patch: (o: Obj) => void = () => {}): Obj =>
  merge(
    {
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      metadata: meta("web-1.17b", "default"),
      regarding: { kind: "Pod", name: "web-1", namespace: "default" },
      reason: "Drained",
      note: "removed from load balancer",
      type: "Normal",
      action: "Drain",
      eventTime: "2026-11-29T21:00:00.000000Z",
      reportingController: "healthprobe.io/operator",
      reportingInstance: "operator-0",
    },
    patch,
  );

export const aPod = (patch: (o: Obj) => void = () => {}): Obj =>
  merge(
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        ...meta("web-1", "default"),
        uid: "u-1",
        resourceVersion: "5",
        creationTimestamp: "2026-11-29T21:00:00Z",
        labels: { app: "web" },
      },
      spec: { containers: [{ name: "app", image: "nginx", ports: [{ name: "http", containerPort: 8080 }] }] },
      status: { phase: "Pending" },
    },
    patch,
  );

export const aConfigMap = (patch: (o: Obj) => void = () => {}): Obj =>
  merge(
    { apiVersion: "v1", kind: "ConfigMap", metadata: meta("settings", "default"), data: { "app.yaml": "a: 1" } },
    patch,
  );

export const aSecret = (patch: (o: Obj) => void = () => {}): Obj =>
  merge(
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: meta("creds", "default"),
      data: { token: Buffer.from("s3cret").toString("base64") },
    },
    patch,
  );

export const aPodDisruptionBudget = (patch: (o: Obj) => void = () => {}): Obj =>
  merge(
    {
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: meta("web", "default"),
      spec: { minAvailable: 1, selector: { matchLabels: { app: "web" } } },
    },
    patch,
  );

export const aNode = (patch: (o: Obj) => void = () => {}): Obj =>
  merge({ apiVersion: "v1", kind: "Node", metadata: meta("node-1.example") }, patch);

export const stored = (o: Obj): Obj =>
  merge(o, (x) => {
    x.metadata.uid ??= "uid-1";
    x.metadata.resourceVersion ??= "7";
    x.metadata.creationTimestamp ??= "2026-11-29T21:00:00Z";
  });
