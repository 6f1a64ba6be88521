import { describe, it, expect } from "@jest/globals";
import {
  classifyAddress,
  computeEndpoint,
  computeEndpointConditions,
  computeEndpointKey,
  computeEndpointPorts,
  computePortSetKey,
  shouldIncludePod,
} from "./endpoint-slice-endpoint.js";
import { aPod, aService } from "./testing/slice-builders.js";

describe("which pods get an endpoint", () => {
  const cases = [
    { name: "a running pod with an IP is included", pod: aPod(), include: true },
    { name: "a pod without an IP is skipped", pod: aPod({ podIPs: [] }), include: false },
    { name: "a Succeeded pod is skipped", pod: aPod({ phase: "Succeeded" }), include: false },
    { name: "a Failed pod is skipped", pod: aPod({ phase: "Failed" }), include: false },
    { name: "a Pending pod with an IP is included", pod: aPod({ phase: "Pending" }), include: true },
    { name: "a terminating pod is included", pod: aPod({ terminating: true }), include: true },
  ];
  it.each(cases)("$name", ({ pod, include }) => {
    const decision = shouldIncludePod(pod);
    expect(decision.include).toBe(include);
    expect(decision.reason).not.toBe("");
  });
});

describe("endpoint conditions", () => {
  const cases = [
    {
      name: "ready and admitted is ready and serving",
      pod: aPod({ ready: true }),
      admitted: true,
      want: { ready: true, serving: true, terminating: false },
    },
    {
      name: "ready but not admitted is neither ready nor serving",
      pod: aPod({ ready: true }),
      admitted: false,
      want: { ready: false, serving: false, terminating: false },
    },
    {
      name: "kubelet-unready is never ready however admitted",
      pod: aPod({ ready: false }),
      admitted: true,
      want: { ready: false, serving: false, terminating: false },
    },
    {
      name: "terminating, ready and admitted is serving but not ready",
      pod: aPod({ ready: true, terminating: true }),
      admitted: true,
      want: { ready: false, serving: true, terminating: true },
    },
    {
      name: "terminating and not admitted is not serving",
      pod: aPod({ ready: true, terminating: true }),
      admitted: false,
      want: { ready: false, serving: false, terminating: true },
    },
    {
      name: "terminating and kubelet-unready is not serving",
      pod: aPod({ ready: false, terminating: true }),
      admitted: true,
      want: { ready: false, serving: false, terminating: true },
    },
  ];
  it.each(cases)("$name", ({ pod, admitted, want }) => {
    expect(computeEndpointConditions(pod, admitted).conditions).toEqual(want);
  });

  it("names the first reason the pod is out of rotation", () => {
    expect(computeEndpointConditions(aPod({ ready: false }), false).reason).toMatch(/kubelet/);
    expect(computeEndpointConditions(aPod(), false).reason).toMatch(/does not admit/);
    expect(computeEndpointConditions(aPod({ terminating: true }), true).reason).toMatch(/terminating/);
  });
});

describe("address families", () => {
  const cases = [
    { name: "a dotted address is IPv4", ip: "10.1.2.3", want: { addressType: "IPv4", address: "10.1.2.3" } },
    { name: "a colon address is IPv6, lower-cased", ip: "FD00::A", want: { addressType: "IPv6", address: "fd00::a" } },
    {
      name: "an IPv4-mapped IPv6 address is IPv4",
      ip: "::ffff:10.0.0.9",
      want: { addressType: "IPv4", address: "10.0.0.9" },
    },
  ];
  it.each(cases)("$name", ({ ip, want }) => {
    expect(classifyAddress(ip)).toEqual(want);
  });
});

describe("endpoint ports", () => {
  const cases = [
    {
      name: "an absent targetPort is the service port",
      service: aService({ ports: [{ name: "http", port: 80 }] }),
      pod: aPod(),
      want: [{ name: "http", port: 80, protocol: "TCP" }],
    },
    {
      name: "a numeric targetPort is used as is",
      service: aService({ ports: [{ name: "http", port: 80, targetPort: 9090 }] }),
      pod: aPod(),
      want: [{ name: "http", port: 9090, protocol: "TCP" }],
    },
    {
      name: "a named targetPort resolves to the pod's container port",
      service: aService({ ports: [{ name: "http", port: 80, targetPort: "web" }] }),
      pod: aPod({ containerPorts: [{ name: "web", containerPort: 8081 }] }),
      want: [{ name: "http", port: 8081, protocol: "TCP" }],
    },
    {
      name: "a named targetPort in a second container resolves",
      service: aService({ ports: [{ name: "m", port: 9000, targetPort: "metrics" }] }),
      pod: aPod({
        containers: [
          { ports: [{ name: "web", containerPort: 1 }] },
          { ports: [{ name: "metrics", containerPort: 9102 }] },
        ],
      }),
      want: [{ name: "m", port: 9102, protocol: "TCP" }],
    },
    {
      name: "a named targetPort needs the same protocol",
      service: aService({ ports: [{ name: "dns", port: 53, targetPort: "dns", protocol: "UDP" }] }),
      pod: aPod({ containerPorts: [{ name: "dns", containerPort: 5353, protocol: "TCP" }] }),
      want: [],
    },
    {
      name: "a port the pod cannot resolve is left out, the others stay",
      service: aService({
        ports: [
          { name: "http", port: 80, targetPort: "web" },
          { name: "admin", port: 81, targetPort: "admin" },
        ],
      }),
      pod: aPod({ containerPorts: [{ name: "web", containerPort: 8080 }] }),
      want: [{ name: "http", port: 8080, protocol: "TCP" }],
    },
    {
      name: "an unnamed port gets the empty name and appProtocol is kept",
      service: aService({ ports: [{ port: 443, appProtocol: "https" }] }),
      pod: aPod(),
      want: [{ name: "", port: 443, protocol: "TCP", appProtocol: "https" }],
    },
    {
      name: "ports come out sorted by name",
      service: aService({
        ports: [
          { name: "b", port: 2 },
          { name: "a", port: 1 },
        ],
      }),
      pod: aPod(),
      want: [
        { name: "a", port: 1, protocol: "TCP" },
        { name: "b", port: 2, protocol: "TCP" },
      ],
    },
  ];
  it.each(cases)("$name", ({ service, pod, want }) => {
    expect(computeEndpointPorts(service, pod)).toEqual(want);
  });

  it("groups port sets regardless of order", () => {
    const a = { name: "a", port: 1, protocol: "TCP" };
    const b = { name: "b", port: 2, protocol: "TCP" };
    expect(computePortSetKey([a, b])).toBe(computePortSetKey([b, a]));
    expect(computePortSetKey([a])).not.toBe(computePortSetKey([a, b]));
    expect(computePortSetKey([{ ...a, appProtocol: "h2c" }])).not.toBe(computePortSetKey([a]));
  });
});

describe("one pod's endpoint", () => {
  const service = aService();

  it("carries targetRef, nodeName and the node's zone", () => {
    const endpoint = computeEndpoint(
      aPod({ name: "web-1", uid: "u1", nodeName: "node-b", ip: "10.0.0.7" }),
      service,
      "IPv4",
      true,
      { "node-b": "zone-b" },
    );
    expect(endpoint).toEqual({
      addresses: ["10.0.0.7"],
      conditions: { ready: true, serving: true, terminating: false },
      nodeName: "node-b",
      zone: "zone-b",
      targetRef: { kind: "Pod", namespace: "default", name: "web-1", uid: "u1" },
    });
  });

  it("has no zone when the node's zone is unknown", () => {
    const endpoint = computeEndpoint(aPod({ nodeName: "node-z" }), service, "IPv4", true, { "node-a": "zone-a" });
    expect(endpoint.nodeName).toBe("node-z");
    expect(endpoint).not.toHaveProperty("zone");
  });

  it("has no zone for a node named like an object property", () => {
    expect(computeEndpoint(aPod({ nodeName: "constructor" }), service, "IPv4", true, {})).not.toHaveProperty("zone");
  });

  const hostnameCases = [
    {
      name: "a hostname with the Service as subdomain is published",
      pod: aPod({ hostname: "web-0", subdomain: "web" }),
      want: "web-0",
    },
    {
      name: "a hostname with another subdomain is not",
      pod: aPod({ hostname: "web-0", subdomain: "other" }),
      want: undefined,
    },
    { name: "a hostname without subdomain is not", pod: aPod({ hostname: "web-0" }), want: undefined },
    {
      name: "a pod in another namespace is not",
      pod: aPod({ hostname: "web-0", subdomain: "web", namespace: "other" }),
      want: undefined,
    },
  ];
  it.each(hostnameCases)("$name", ({ pod, want }) => {
    expect(computeEndpoint(pod, service, "IPv4", true, {}).hostname).toBe(want);
  });

  it("takes only the addresses of the asked family", () => {
    const pod = aPod({ podIPs: ["10.0.0.1", "fd00::1"] });
    expect(computeEndpoint(pod, service, "IPv4", true, {}).addresses).toEqual(["10.0.0.1"]);
    expect(computeEndpoint(pod, service, "IPv6", true, {}).addresses).toEqual(["fd00::1"]);
    expect(computeEndpoint(aPod({ ip: "10.0.0.1" }), service, "IPv6", true, {}).addresses).toEqual([]);
  });

  it("is identified by addresses, hostname and pod name, not by its conditions", () => {
    const ready = computeEndpoint(aPod(), service, "IPv4", true, {});
    const drained = computeEndpoint(aPod(), service, "IPv4", false, {});
    const moved = computeEndpoint(aPod({ ip: "10.0.0.2" }), service, "IPv4", true, {});
    expect(computeEndpointKey(ready)).toBe(computeEndpointKey(drained));
    expect(computeEndpointKey(ready)).not.toBe(computeEndpointKey(moved));
  });
});
