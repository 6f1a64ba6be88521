import { describe, expect, it } from "@jest/globals";
import { hostNetworkRefusal, secretNotPermittedMessage, secretPermits, secretPermitsAny } from "./probe-access.js";

describe("secretPermits", () => {
  it.each([
    { name: "a Secret without the annotation allows no policy", annotation: undefined, policy: "web", want: false },
    { name: "an empty annotation allows no policy", annotation: "", policy: "web", want: false },
    {
      name: "an annotation of only commas and spaces allows no policy",
      annotation: " , ,",
      policy: "web",
      want: false,
    },
    { name: "the policy's own name allows it", annotation: "web", policy: "web", want: true },
    { name: "a list allows each name in it, spaces trimmed", annotation: "api , web ,cart", policy: "web", want: true },
    { name: "a list does not allow a name outside it", annotation: "api,cart", policy: "web", want: false },
    { name: "a star allows every policy", annotation: "*", policy: "web", want: true },
    { name: "a star in a list allows every policy", annotation: "api, *", policy: "web", want: true },
    { name: "a name is matched whole, not as a prefix", annotation: "web-canary", policy: "web", want: false },
    { name: "a name is matched case-sensitively", annotation: "Web", policy: "web", want: false },
    { name: "a pattern is not a wildcard", annotation: "web*", policy: "web-canary", want: false },
  ])("$name", ({ annotation, policy, want }) => {
    expect(secretPermits(annotation, policy)).toBe(want);
  });

  it.each([
    { annotation: undefined, want: false },
    { annotation: " , ", want: false },
    { annotation: "web", want: true },
    { annotation: "*", want: true },
  ])(
    "tells whether the annotation $annotation permits any policy (only then is the data kept)",
    ({ annotation, want }) => {
      expect(secretPermitsAny(annotation)).toBe(want);
    },
  );

  it("names the Secret, the policy and the command that allows it", () => {
    expect(secretNotPermittedMessage("probe-auth", "web")).toBe(
      'Secret "probe-auth" does not allow policy "web" to use it; its owner can allow it: kubectl annotate secret probe-auth healthprobe.io/allowed-policies=web',
    );
  });
});

describe("hostNetworkRefusal", () => {
  const why = "hostNetwork pod (add annotation healthprobe.io/probe-host-network=true to probe it)";
  it.each([
    { name: "a pod on its own network is probed", pod: {}, want: undefined },
    { name: "a pod with hostNetwork false is probed", pod: { hostNetwork: false }, want: undefined },
    { name: "a hostNetwork pod without the annotation is not probed", pod: { hostNetwork: true }, want: why },
    {
      name: "a hostNetwork pod with the annotation true is probed",
      pod: { hostNetwork: true, annotations: { "healthprobe.io/probe-host-network": "true" } },
      want: undefined,
    },
    {
      name: "a hostNetwork pod with the annotation false is not probed",
      pod: { hostNetwork: true, annotations: { "healthprobe.io/probe-host-network": "false" } },
      want: why,
    },
    {
      name: "only the exact value true opts in",
      pod: { hostNetwork: true, annotations: { "healthprobe.io/probe-host-network": "True" } },
      want: why,
    },
  ])("$name", ({ pod, want }) => {
    expect(hostNetworkRefusal(pod)).toBe(want);
  });
});
