import { describe, it, expect } from "@jest/globals";
import { validateBuiltin, type FieldCause } from "./index.js";
import {
  aConfigMap,
  aCoreEvent,
  aLease,
  aNode,
  anEndpointSlice,
  anEventsV1Event,
  aPod,
  aPodDisruptionBudget,
  aSecret,
  stored,
} from "./builders.js";

type Obj = Record<string, any>;
const GVK: Record<string, { group: string; version: string; kind: string }> = {
  EndpointSlice: { group: "discovery.k8s.io", version: "v1", kind: "EndpointSlice" },
  Lease: { group: "coordination.k8s.io", version: "v1", kind: "Lease" },
  Event: { group: "", version: "v1", kind: "Event" },
  EventsV1: { group: "events.k8s.io", version: "v1", kind: "Event" },
  Pod: { group: "", version: "v1", kind: "Pod" },
  Service: { group: "", version: "v1", kind: "Service" },
  ConfigMap: { group: "", version: "v1", kind: "ConfigMap" },
  Secret: { group: "", version: "v1", kind: "Secret" },
  PodDisruptionBudget: { group: "policy", version: "v1", kind: "PodDisruptionBudget" },
  Namespace: { group: "", version: "v1", kind: "Namespace" },
  Node: { group: "", version: "v1", kind: "Node" },
  ReplicaSet: { group: "apps", version: "v1", kind: "ReplicaSet" },
};

const baselines: Array<[string, Obj]> = [
  ["EndpointSlice", anEndpointSlice()],
  ["Lease", aLease()],
  ["Event", aCoreEvent()],
  ["EventsV1", anEventsV1Event()],
  ["Pod", aPod()],
  ["ConfigMap", aConfigMap()],
  ["Secret", aSecret()],
  ["PodDisruptionBudget", aPodDisruptionBudget()],
  ["Node", aNode()],
];

const render = (errs: FieldCause[]): string => errs.map((e) => `${e.field}: ${e.message}`).join("\n");

describe("valid baselines", () => {
  it.each(baselines)("a valid %s passes on create", (kind, obj) => {
    expect(render(validateBuiltin(GVK[kind]!, obj, undefined, ""))).toBe("");
  });
  it.each(baselines)("an unchanged %s passes on update", (kind, obj) => {
    const s = stored(obj);
    expect(render(validateBuiltin(GVK[kind]!, s, s, ""))).toBe("");
  });
});

interface Case {
  name: string;
  kind: string;
  obj: Obj;
  old?: Obj;
  sub?: string;
  field: string;
  message: string;
  reason?: string;
}

const cases: Case[] = [
  // ObjectMeta, on every kind.
  {
    name: "a label key must be a qualified name",
    kind: "ConfigMap",
    obj: aConfigMap((o) => (o.metadata.labels = { "bad label!": "x" })),
    field: "metadata.labels",
    message: 'Invalid value: "bad label!": name part must consist of alphanumeric characters',
    reason: "FieldValueInvalid",
  },
  {
    name: "a label value must be a valid label value",
    kind: "Pod",
    obj: aPod((o) => (o.metadata.labels = { app: "-web" })),
    field: "metadata.labels",
    message: 'Invalid value: "-web": a valid label must be an empty string',
  },
  {
    name: "an annotation key must be a qualified name",
    kind: "ConfigMap",
    obj: aConfigMap((o) => (o.metadata.annotations = { "a/b/c": "x" })),
    field: "metadata.annotations",
    message: 'Invalid value: "a/b/c"',
  },
  {
    name: "annotations are at most 256 KiB in total",
    kind: "Lease",
    obj: aLease((o) => (o.metadata.annotations = { big: "x".repeat(256 * 1024) })),
    field: "metadata.annotations",
    message: "Too long: must have at most 262144 bytes",
    reason: "FieldValueTooLong",
  },
  {
    name: "a name or generateName is required",
    kind: "ConfigMap",
    obj: aConfigMap((o) => delete o.metadata.name),
    field: "metadata.name",
    message: "Required value: name or generateName is required",
    reason: "FieldValueRequired",
  },
  {
    name: "a namespaced kind needs a namespace",
    kind: "Lease",
    obj: aLease((o) => delete o.metadata.namespace),
    field: "metadata.namespace",
    message: "Required value",
    reason: "FieldValueRequired",
  },
  {
    name: "a namespace must be a DNS label",
    kind: "Pod",
    obj: aPod((o) => (o.metadata.namespace = "a.b")),
    field: "metadata.namespace",
    message: "must not contain dots",
  },
  {
    name: "a cluster-scoped kind may not have a namespace",
    kind: "Node",
    obj: aNode((o) => (o.metadata.namespace = "default")),
    field: "metadata.namespace",
    message: "Forbidden: not allowed on this type",
    reason: "FieldValueForbidden",
  },
  {
    name: "an owner reference needs a uid",
    kind: "Pod",
    obj: aPod((o) => (o.metadata.ownerReferences = [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "web" }])),
    field: "metadata.ownerReferences.uid",
    message: 'Invalid value: "": must not be empty',
  },
  {
    name: "an owner reference needs a version",
    kind: "Pod",
    obj: aPod(
      (o) => (o.metadata.ownerReferences = [{ apiVersion: "apps/", kind: "ReplicaSet", name: "web", uid: "u" }]),
    ),
    field: "metadata.ownerReferences.apiVersion",
    message: "version must not be empty",
  },
  {
    name: "an owner reference needs a kind and name",
    kind: "Pod",
    obj: aPod((o) => (o.metadata.ownerReferences = [{ apiVersion: "v1", uid: "u" }])),
    field: "metadata.ownerReferences.name",
    message: "must not be empty",
  },
  {
    name: "only one owner reference may be the controller",
    kind: "Pod",
    obj: aPod(
      (o) =>
        (o.metadata.ownerReferences = [
          { apiVersion: "apps/v1", kind: "ReplicaSet", name: "a", uid: "1", controller: true },
          { apiVersion: "apps/v1", kind: "ReplicaSet", name: "b", uid: "2", controller: true },
        ]),
    ),
    field: "metadata.ownerReferences",
    message:
      'Only one reference can have Controller set to true. Found "true" in references for ReplicaSet/a and ReplicaSet/b',
  },
  {
    name: "a finalizer must be a qualified name",
    kind: "Lease",
    obj: aLease((o) => (o.metadata.finalizers = ["bad name!"])),
    field: "metadata.finalizers",
    message: 'Invalid value: "bad name!"',
  },
  {
    name: "a name is immutable",
    kind: "ConfigMap",
    obj: stored(aConfigMap((o) => (o.metadata.name = "other"))),
    old: stored(aConfigMap()),
    field: "metadata.name",
    message: 'Invalid value: "other": field is immutable',
  },
  {
    name: "a uid is immutable",
    kind: "Lease",
    obj: stored(aLease((o) => (o.metadata.uid = "uid-2"))),
    old: stored(aLease()),
    field: "metadata.uid",
    message: "field is immutable",
  },
  {
    name: "a creationTimestamp is immutable",
    kind: "Pod",
    obj: stored(aPod((o) => (o.metadata.creationTimestamp = "2027-01-01T00:00:00Z"))),
    old: stored(aPod()),
    field: "metadata.creationTimestamp",
    message: "field is immutable",
  },
  {
    name: "a namespace is immutable",
    kind: "ConfigMap",
    obj: stored(aConfigMap((o) => (o.metadata.namespace = "other"))),
    old: stored(aConfigMap()),
    field: "metadata.namespace",
    message: "field is immutable",
  },
  {
    name: "no finalizer may be added while deleting",
    kind: "ConfigMap",
    obj: stored(
      aConfigMap(
        (o) => ((o.metadata.deletionTimestamp = "2026-11-29T22:00:00Z"), (o.metadata.finalizers = ["a.io/b"])),
      ),
    ),
    old: stored(aConfigMap((o) => (o.metadata.deletionTimestamp = "2026-11-29T22:00:00Z"))),
    field: "metadata.finalizers",
    message:
      'Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"a.io/b"}',
  },

  // EndpointSlice.
  {
    name: "an EndpointSlice needs an addressType",
    kind: "EndpointSlice",
    obj: anEndpointSlice((o) => delete o.addressType),
    field: "addressType",
    message: "Required value",
  },
  {
    name: "an EndpointSlice addressType is one of three",
    kind: "EndpointSlice",
    obj: anEndpointSlice((o) => (o.addressType = "IP")),
    field: "addressType",
    message: 'Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"',
    reason: "FieldValueNotSupported",
  },
  {
    name: "an EndpointSlice addressType is immutable",
    kind: "EndpointSlice",
    obj: stored(anEndpointSlice((o) => ((o.addressType = "IPv6"), (o.endpoints[0].addresses = ["2001:db8::1"])))),
    old: stored(anEndpointSlice()),
    field: "addressType",
    message: 'Invalid value: "IPv6": field is immutable',
  },
  {
    name: "an EndpointSlice holds at most 1000 endpoints",
    kind: "EndpointSlice",
    obj: anEndpointSlice(
      (o) =>
        (o.endpoints = Array.from({ length: 1001 }, (_, i) => ({ addresses: [`10.0.${i >> 8}.${(i & 255) + 0}`] }))),
    ),
    field: "endpoints",
    message: "Too many: 1001: must have at most 1000 items",
    reason: "FieldValueTooMany",
  },
  {
    name: "an endpoint needs at least one address",
    kind: "EndpointSlice",
    obj: anEndpointSlice((o) => (o.endpoints[0].addresses = [])),
    field: "endpoints[0].addresses",
    message: "Required value: must contain at least 1 address",
  },
  {
    name: "an endpoint has at most 100 addresses",
    kind: "EndpointSlice",
    obj: anEndpointSlice((o) => (o.endpoints[0].addresses = Array.from({ length: 101 }, (_, i) => `10.9.0.${i + 1}`))),
    field: "endpoints[0].addresses",
    message: "Too many: 101: must have at most 100 items",
  },
  {
    name: "an IPv4 endpoint address must be a dotted quad",
    kind: "EndpointSlice",
    obj: anEndpointSlice((o) => (o.endpoints[0].addresses = ["10.1.2"])),
    field: "endpoints[0].addresses[0]",
    message: 'Invalid value: "10.1.2": must be a valid IPv4 address',
  },
  {
    name: "an IPv4 slice may not hold IPv6 addresses",
    kind: "EndpointSlice",
    obj: anEndpointSlice((o) => (o.endpoints[0].addresses = ["2001:db8::1"])),
    field: "endpoints[0].addresses[0]",
    message: "must be a valid IPv4 address",
  },
  {
    name: "an IPv6 slice may not hold IPv4 addresses",
    kind: "EndpointSlice",
    obj: anEndpointSlice((o) => ((o.addressType = "IPv6"), (o.endpoints[0].addresses = ["10.1.2.3"]))),
    field: "endpoints[0].addresses[0]",
    message: "must be a valid IPv6 address",
  },
  {
    name: "an endpoint address may not be loopback, as on the real server",
    kind: "EndpointSlice",
    obj: anEndpointSlice((o) => (o.endpoints[0].addresses = ["127.0.10.2"])),
    field: "endpoints[0].addresses[0]",
    message: 'Invalid value: "127.0.10.2": may not be in the loopback range (127.0.0.0/8, ::1/128)',
  },
  {
    name: "an endpoint address may not be link-local",
    kind: "EndpointSlice",
    obj: anEndpointSlice((o) => (o.endpoints[0].addresses = ["169.254.169.254"])),
    field: "endpoints[0].addresses[0]",
    message: "may not be in the link-local range",
  },
  {
    name: "an FQDN endpoint needs two segments",
    kind: "EndpointSlice",
    obj: anEndpointSlice((o) => ((o.addressType = "FQDN"), (o.endpoints[0].addresses = ["localhost"]))),
    field: "endpoints[0].addresses[0]",
    message: "should be a domain with at least two segments separated by dots",
  },
  {
    name: "an endpoint hostname is a DNS label",
    kind: "EndpointSlice",
    obj: anEndpointSlice((o) => (o.endpoints[0].hostname = "a.b")),
    field: "endpoints[0].hostname",
    message: "must not contain dots",
  },
  {
    name: "an endpoint nodeName is a DNS subdomain",
    kind: "EndpointSlice",
    obj: anEndpointSlice((o) => (o.endpoints[0].nodeName = "Node_1")),
    field: "endpoints[0].nodeName",
    message: "a lowercase RFC 1123 subdomain",
  },
  {
    name: "zone hints are valid label values",
    kind: "EndpointSlice",
    obj: anEndpointSlice((o) => (o.endpoints[0].hints = { forZones: [{ name: "zone a" }] })),
    field: "endpoints[0].hints.forZones[0].name",
    message: 'Invalid value: "zone a"',
  },
  {
    name: "zone hints are unique",
    kind: "EndpointSlice",
    obj: anEndpointSlice((o) => (o.endpoints[0].hints = { forZones: [{ name: "a" }, { name: "a" }] })),
    field: "endpoints[0].hints.forZones[1].name",
    message: 'Duplicate value: "a"',
    reason: "FieldValueDuplicate",
  },
  {
    name: "at most 8 zone hints",
    kind: "EndpointSlice",
    obj: anEndpointSlice(
      (o) => (o.endpoints[0].hints = { forZones: Array.from({ length: 9 }, (_, i) => ({ name: `z${i}` })) }),
    ),
    field: "endpoints[0].hints.forZones",
    message: "Too many: 9: must have at most 8 items",
  },
  {
    name: "a slice port name is a DNS label",
    kind: "EndpointSlice",
    obj: anEndpointSlice((o) => (o.ports[0].name = "HTTP")),
    field: "ports[0].name",
    message: 'Invalid value: "HTTP": a lowercase RFC 1123 label',
  },
  {
    name: "slice port names are unique",
    kind: "EndpointSlice",
    obj: anEndpointSlice((o) => o.ports.push({ name: "http", protocol: "TCP", port: 9090 })),
    field: "ports[1].name",
    message: 'Duplicate value: "http"',
  },
  {
    name: "an unnamed slice port is unique too",
    kind: "EndpointSlice",
    obj: anEndpointSlice((o) => (o.ports = [{ port: 1 }, { port: 2 }])),
    field: "ports[1].name",
    message: 'Duplicate value: ""',
  },
  {
    name: "a slice port protocol is TCP, UDP or SCTP",
    kind: "EndpointSlice",
    obj: anEndpointSlice((o) => (o.ports[0].protocol = "HTTP")),
    field: "ports[0].protocol",
    message: 'Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
  },
  {
    name: "a slice port appProtocol is a qualified name",
    kind: "EndpointSlice",
    obj: anEndpointSlice((o) => (o.ports[0].appProtocol = "a b")),
    field: "ports[0].appProtocol",
    message: 'Invalid value: "a b"',
  },

  // Lease.
  {
    name: "a lease lasts more than 0 seconds",
    kind: "Lease",
    obj: aLease((o) => (o.spec.leaseDurationSeconds = 0)),
    field: "spec.leaseDurationSeconds",
    message: "Invalid value: 0: must be greater than 0",
  },
  {
    name: "lease transitions are not negative",
    kind: "Lease",
    obj: aLease((o) => (o.spec.leaseTransitions = -1)),
    field: "spec.leaseTransitions",
    message: "Invalid value: -1: must be greater than or equal to 0",
  },
  {
    name: "a preferred holder needs a strategy",
    kind: "Lease",
    obj: aLease((o) => (o.spec.preferredHolder = "b")),
    field: "spec.preferredHolder",
    message: "Forbidden: may only be specified if `strategy` is defined",
  },
  {
    name: "a lease name is a DNS subdomain",
    kind: "Lease",
    obj: aLease((o) => (o.metadata.name = "Leader")),
    field: "metadata.name",
    message: 'Invalid value: "Leader"',
  },

  // Events.
  {
    name: "a core event's involved object namespace matches the event's",
    kind: "Event",
    obj: aCoreEvent((o) => (o.involvedObject.namespace = "other")),
    field: "involvedObject.namespace",
    message: 'Invalid value: "other": does not match event.namespace',
  },
  {
    name: "a core event with eventTime needs a reportingController",
    kind: "Event",
    obj: aCoreEvent(
      (o) => ((o.eventTime = "2026-11-29T21:00:00.000000Z"), (o.action = "Drain"), (o.reportingInstance = "x")),
    ),
    field: "reportingController",
    message: "Required value",
  },
  {
    name: "a core event name may not contain a slash",
    kind: "Event",
    obj: aCoreEvent((o) => (o.metadata.name = "a/b")),
    field: "metadata.name",
    message: "may not contain '/'",
  },
  {
    name: "an events.k8s.io event note is at most 1 KiB",
    kind: "EventsV1",
    obj: anEventsV1Event((o) => (o.note = "x".repeat(1025))),
    field: "message",
    message: 'Invalid value: "": can have at most 1024 characters',
  },
  {
    name: "an events.k8s.io event reason is at most 128 characters",
    kind: "EventsV1",
    obj: anEventsV1Event((o) => (o.reason = "r".repeat(129))),
    field: "reason",
    message: "can have at most 128 characters",
  },
  {
    name: "an events.k8s.io event needs an action",
    kind: "EventsV1",
    obj: anEventsV1Event((o) => delete o.action),
    field: "action",
    message: "Required value",
  },
  {
    name: "an events.k8s.io event needs a reportingInstance",
    kind: "EventsV1",
    obj: anEventsV1Event((o) => delete o.reportingInstance),
    field: "reportingInstance",
    message: "Required value",
  },
  {
    name: "an events.k8s.io reportingController is a qualified name",
    kind: "EventsV1",
    obj: anEventsV1Event((o) => (o.reportingController = "a/b/c")),
    field: "reportingController",
    message: 'Invalid value: "a/b/c"',
  },
  {
    name: "an events.k8s.io event needs an eventTime",
    kind: "EventsV1",
    obj: anEventsV1Event((o) => ((o.eventTime = undefined), (o.reportingController = "c"))),
    field: "eventTime",
    message: "Required value",
  },
  {
    name: "an events.k8s.io event type is Normal or Warning",
    kind: "EventsV1",
    obj: anEventsV1Event((o) => (o.type = "Info")),
    field: "type",
    message: 'Invalid value: "": has invalid value: Info',
  },
  {
    name: "an events.k8s.io series counts at least 2",
    kind: "EventsV1",
    obj: anEventsV1Event((o) => (o.series = { count: 1, lastObservedTime: "2026-11-29T21:00:00.000000Z" })),
    field: "series.count",
    message: "should be at least 2",
  },
  {
    name: "an events.k8s.io series needs lastObservedTime",
    kind: "EventsV1",
    obj: anEventsV1Event((o) => (o.series = { count: 2 })),
    field: "series.lastObservedTime",
    message: "Required value",
  },
  {
    name: "an events.k8s.io event may not set deprecatedCount",
    kind: "EventsV1",
    obj: anEventsV1Event((o) => (o.deprecatedCount = 3)),
    field: "count",
    message: "needs to be unset",
  },
  {
    name: "an events.k8s.io note is immutable",
    kind: "EventsV1",
    obj: stored(anEventsV1Event((o) => (o.note = "changed"))),
    old: stored(anEventsV1Event()),
    field: "message",
    message: 'Invalid value: "changed": field is immutable',
  },
  {
    name: "a cluster-scoped regarding object needs the event in default or kube-system",
    kind: "EventsV1",
    obj: anEventsV1Event((o) => ((o.regarding = { kind: "Node", name: "n1" }), (o.metadata.namespace = "team-a"))),
    field: "involvedObject.namespace",
    message: "does not match event.namespace",
  },

  // Pod.
  {
    name: "a pod status podIPs are valid IPs",
    kind: "Pod",
    sub: "status",
    obj: stored(aPod((o) => (o.status.podIPs = [{ ip: "10.0.0" }]))),
    old: stored(aPod()),
    field: "status.podIPs[0]",
    message: 'Invalid value: "10.0.0": must be a valid IP address',
  },
  {
    name: "a pod has at most one IP per family",
    kind: "Pod",
    sub: "status",
    obj: stored(
      aPod((o) => ((o.status.podIP = "10.0.0.1"), (o.status.podIPs = [{ ip: "10.0.0.1" }, { ip: "10.0.0.2" }]))),
    ),
    old: stored(aPod()),
    field: "status.podIPs",
    message: "may specify no more than one IP for each IP family",
  },
  {
    name: "a pod's own condition types are qualified names",
    kind: "Pod",
    sub: "status",
    obj: stored(aPod((o) => (o.status.conditions = [{ type: "bad type!", status: "True" }]))),
    old: stored(aPod()),
    field: "status.conditions[0].Type",
    message: 'Invalid value: "bad type!"',
  },
  {
    name: "hostIPs[0] equals hostIP",
    kind: "Pod",
    sub: "status",
    obj: stored(aPod((o) => ((o.status.hostIP = "10.0.0.1"), (o.status.hostIPs = [{ ip: "10.0.0.2" }])))),
    old: stored(aPod()),
    field: "status.hostIPs[0].ip",
    message: "must be equal to `hostIP`",
  },

  // Service.

  // ConfigMap and Secret.
  {
    name: "a config map key is a valid config key",
    kind: "ConfigMap",
    obj: aConfigMap((o) => (o.data = { "a/b": "x" })),
    field: "data[a/b]",
    message: "a valid config key must consist of alphanumeric characters",
  },
  {
    name: "a config map holds at most 1 MiB",
    kind: "ConfigMap",
    obj: aConfigMap((o) => (o.data = { a: "x".repeat(1024 * 1024 + 1) })),
    field: "",
    message: "Too long: must have at most 1048576 bytes",
  },
  {
    name: "a key may not be in both data and binaryData",
    kind: "ConfigMap",
    obj: aConfigMap((o) => (o.binaryData = { "app.yaml": "eA==" })),
    field: "data[app.yaml]",
    message: "duplicate of key present in binaryData",
  },
  {
    name: "a secret key is a valid config key",
    kind: "Secret",
    obj: aSecret((o) => (o.stringData = { "..x": "y" })),
    field: "data[..x]",
    message: "must not start with '..'",
  },
  {
    name: "a secret holds at most 1 MiB",
    kind: "Secret",
    obj: aSecret((o) => (o.stringData = { a: "x".repeat(1024 * 1024 + 1) })),
    field: "data",
    message: "Too long: must have at most 1048576 bytes",
  },
  {
    name: "a secret type is immutable",
    kind: "Secret",
    obj: stored(aSecret((o) => (o.type = "x.io/other"))),
    old: stored(aSecret()),
    field: "type",
    message: "field is immutable",
  },

  // PodDisruptionBudget.
  {
    name: "a kind without rules of its own here (a budget) gets the path-segment name check",
    kind: "PodDisruptionBudget",
    obj: aPodDisruptionBudget((o) => (o.metadata.name = "..")),
    field: "metadata.name",
    message: "may not be '..'",
  },

  // Namespace and Node.

  // ReplicaSet.
];

describe("validateBuiltin rules", () => {
  it.each(cases.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const errs = validateBuiltin(GVK[c.kind]!, c.obj, c.old, c.sub ?? "");
    const hit = errs.find((e) => e.field === c.field && e.message.includes(c.message));
    if (!hit) throw new Error(`no cause ${c.field}: …${c.message}… in:\n${render(errs)}`);
    if (c.reason) expect(hit.reason).toBe(c.reason);
  });
});

describe("validateBuiltin options and generic rules", () => {
  it("accepts loopback endpoint addresses only when asked to", () => {
    const slice = anEndpointSlice((o) => (o.endpoints[0].addresses = ["127.0.10.2"]));
    expect(validateBuiltin(GVK.EndpointSlice!, slice, undefined, "")).not.toEqual([]);
    expect(validateBuiltin(GVK.EndpointSlice!, slice, undefined, "", { allowLoopbackEndpointAddresses: true })).toEqual(
      [],
    );
  });

  it("gives kinds without their own rules the generic metadata checks", () => {
    const errs = validateBuiltin(
      { group: "example.io", version: "v1", kind: "Widget" },
      { metadata: { name: "a%b", namespace: "default" } },
      undefined,
      "",
    );
    expect(render(errs)).toContain("metadata.name: Invalid value: \"a%b\": may not contain '%'");
  });

  it("reports one cause once even when two rule sets find it", () => {
    const s = stored(aConfigMap((o) => (o.metadata.labels = { "bad label!": "x" })));
    const errs = validateBuiltin(GVK.ConfigMap!, s, stored(aConfigMap()), "");
    expect(errs.filter((e) => e.field === "metadata.labels" && e.message.includes("bad label!"))).toHaveLength(1);
  });
});

describe("timestamps compare as instants", () => {
  it("accepts a creationTimestamp re-serialized with milliseconds", () => {
    const old = stored(aPod());
    const s = stored(aPod((o) => (o.metadata.creationTimestamp = "2026-11-29T21:00:00.000Z")));
    expect(validateBuiltin(GVK.Pod!, s, old, "")).toEqual([]);
  });
  it("still rejects a different creationTimestamp", () => {
    const old = stored(aPod());
    const s = stored(aPod((o) => (o.metadata.creationTimestamp = "2026-11-29T21:00:01Z")));
    expect(render(validateBuiltin(GVK.Pod!, s, old, ""))).toContain("metadata.creationTimestamp");
  });
});

describe("updates compare decoded values", () => {
  it("accepts a pod update whose spec only differs in key order and null members", () => {
    const old = stored(aPod());
    const reordered = stored(
      aPod((o) => {
        const c = o.spec.containers[0];
        o.spec = { nodeName: null, containers: [{ ports: c.ports, image: c.image, name: c.name }] };
        o.metadata.ownerReferences = [
          { apiVersion: "apps/v1", kind: "ReplicaSet", name: "web", uid: "u", controller: true },
        ];
      }),
    );
    expect(render(validateBuiltin(GVK.Pod!, reordered, old, ""))).toBe("");
  });
});
