// Which fields an update's manager comes to own, and which stay with the others: the cases a
// status write, a set, a keyed list with a repeated key, a create and a removed field bring.
import { describe, it, expect } from "@jest/globals";
import { Cluster } from "./cluster.js";
import { NUMERIC_RESOURCE_VERSIONS, Store, type KubeObject } from "./store.js";
import { updaterManagedFields } from "./updater-fields.js";

const pods = new Cluster(new Store(10, NUMERIC_RESOURCE_VERSIONS, false)).registry.find("", "v1", "pods")!;

const container = {
  'k:{"name":"c"}': {
    ".": {},
    "f:name": {},
    "f:image": {},
    "f:ports": { 'k:{"containerPort":80}': { ".": {}, "f:containerPort": {} } },
  },
};
const scheduled = { 'k:{"type":"PodScheduled"}': { ".": {}, "f:type": {}, "f:status": {} } };
const metadata = { "f:labels": { "f:app": {} }, "f:finalizers": { 'v:"a"': {} } };
const created = {
  "f:metadata": metadata,
  "f:spec": { "f:containers": container },
  "f:status": { "f:phase": {}, "f:conditions": scheduled },
};
const entry = (manager: string, fieldsV1: object, subresource?: string) => ({
  manager,
  operation: "Update",
  apiVersion: "v1",
  time: "T",
  fieldsType: "FieldsV1",
  fieldsV1,
  ...(subresource ? { subresource } : {}),
});

const pending: KubeObject = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "p", labels: { app: "web" }, finalizers: ["a"] },
  spec: { containers: [{ name: "c", image: "i", ports: [{ containerPort: 80 }] }] },
  status: { phase: "Pending", conditions: [{ type: "PodScheduled", status: "True" }] },
};
const withStatus = (status: object): KubeObject => ({ ...pending, status });
const running = withStatus({
  phase: "Running",
  podIP: "1.2.3.4",
  conditions: [
    { type: "PodScheduled", status: "True" },
    { type: "Ready", status: "True" },
  ],
});

interface Case {
  name: string;
  old: KubeObject | undefined;
  obj: KubeObject;
  entries: object[];
  manager: string;
  subresource: string;
  owns: object;
  othersOwn: object[];
}

const cases: Case[] = [
  {
    name: "a status write owns the status fields it changed; the creator keeps the condition it did not",
    old: pending,
    obj: running,
    entries: [entry("creator", created)],
    manager: "kubelet",
    subresource: "status",
    owns: {
      "f:status": {
        "f:phase": {},
        "f:podIP": {},
        "f:conditions": { 'k:{"type":"Ready"}': { ".": {}, "f:type": {}, "f:status": {} } },
      },
    },
    othersOwn: [{ ...created, "f:status": { "f:conditions": scheduled } }],
  },
  {
    name: "an added finalizer is the only member of the set its writer owns",
    old: pending,
    obj: { ...pending, metadata: { ...pending.metadata, finalizers: ["a", "b"] } },
    entries: [entry("creator", created)],
    manager: "editor",
    subresource: "",
    owns: { "f:metadata": { "f:finalizers": { 'v:"b"': {} } } },
    othersOwn: [created],
  },
  {
    name: "items of a keyed list that repeat a key are one item, read as the first",
    old: pending,
    obj: {
      ...pending,
      spec: {
        containers: [
          { name: "c", image: "j" },
          { name: "c", image: "k" },
        ],
      },
    },
    entries: [entry("creator", created)],
    manager: "editor",
    subresource: "",
    owns: { "f:spec": { "f:containers": { 'k:{"name":"c"}': { ".": {}, "f:image": {} } } } },
    othersOwn: [
      {
        ...created,
        "f:spec": {
          "f:containers": { 'k:{"name":"c"}': { "f:name": {}, "f:ports": container['k:{"name":"c"}']["f:ports"] } },
        },
      },
    ],
  },
  {
    name: "a create owns every field it set",
    old: undefined,
    obj: pending,
    entries: [],
    manager: "creator",
    subresource: "",
    owns: created,
    othersOwn: [],
  },
  {
    name: "a field the writer removed leaves it; a field it changed again stays its own",
    old: running,
    obj: withStatus({
      phase: "Failed",
      conditions: [
        { type: "PodScheduled", status: "True" },
        { type: "Ready", status: "True" },
      ],
    }),
    entries: [entry("creator", created), entry("kubelet", { "f:status": { "f:podIP": {}, "f:phase": {} } }, "status")],
    manager: "kubelet",
    subresource: "status",
    owns: { "f:status": { "f:phase": {} } },
    othersOwn: [{ ...created, "f:status": { "f:conditions": scheduled } }],
  },
];

describe("an updater's managedFields", () => {
  it.each(cases)("$name", (c) => {
    const { fieldsV1, others } = updaterManagedFields(
      pods,
      c.old,
      c.obj,
      c.entries as Array<Record<string, any>>,
      c.manager,
      c.subresource,
    );
    // As JSON: the order of fields is what a client reads.
    expect(JSON.stringify(fieldsV1)).toBe(JSON.stringify(c.owns));
    expect(JSON.stringify(others.map((e) => e.fieldsV1))).toBe(JSON.stringify(c.othersOwn));
  });
});
