// The clients benchmark's split of scenario 1 read from log lines as the operator, the kubelet
// and kube-proxy write them (lines copied from a run, names shortened).
import { describe, expect, it } from "@jest/globals";
import { klogTime, kubeletSplit, operatorSplit, proxySplit, spread } from "./clients-timeline.js";

const T0 = new Date(2026, 11, 3, 12, 22, 5, 0).getTime(); // local time, as klog writes it

const op = (ms: number, fields: object): string =>
  JSON.stringify({ level: "debug", time: new Date(T0 + ms).toISOString(), ...fields });
const POLICY = "clients-endpointslice/web";
const OPERATOR_LOG = [
  op(-500, { policy: POLICY, uid: "sick", success: true, finishedAt: T0 - 500, msg: "probe result" }),
  op(300, { policy: POLICY, uid: "other", success: false, finishedAt: T0 + 300, msg: "probe result" }),
  op(500, { policy: POLICY, uid: "sick", success: false, finishedAt: T0 + 498, msg: "probe result" }),
  op(1500, { policy: POLICY, uid: "sick", success: false, finishedAt: T0 + 1500, msg: "probe result" }),
  op(1501, { policy: POLICY, uid: "sick", state: "Unhealthy", msg: "verdict changed; policy queued" }),
  op(1502, { policy: POLICY, reconcileId: "a", msg: "reconcile started" }),
  "not a log line",
  op(1530, { policy: POLICY, reconcileId: "a", slice: "web-1", action: "update", msg: "EndpointSlice written" }),
].join("\n");

const klog = (ms: number, rest: string): string => {
  const d = new Date(T0 + ms);
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  return `I${p(d.getMonth() + 1)}${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds() * 1000, 6)}    9652 ${rest}`;
};

const KUBELET_LOG = [
  klog(
    -800,
    'prober.go:123] "Probe failed" probeType="Readiness" pod="clients-readinessprobe/web-b" podUID="x" containerName="web" probeResult="failure"',
  ),
  klog(
    700,
    'prober.go:123] "Probe failed" probeType="Readiness" pod="clients-readinessprobe/web-a" podUID="y" containerName="web" probeResult="failure"',
  ),
  klog(
    900,
    'prober.go:123] "Probe failed" probeType="Liveness" pod="clients-readinessprobe/web-a" podUID="y" containerName="web" probeResult="failure"',
  ),
  klog(
    1700,
    'prober.go:123] "Probe failed" probeType="Readiness" pod="clients-readinessprobe/web-a" podUID="y" containerName="web" probeResult="failure"',
  ),
].join("\n");

const PROXY_LOG = [
  klog(600, 'proxier.go:655] "Syncing iptables rules" ipFamily="IPv4" fullSync=false'),
  klog(650, 'proxier.go:649] "SyncProxyRules complete" ipFamily="IPv4" elapsed="50ms"'),
  klog(660, 'proxier.go:649] "SyncProxyRules complete" ipFamily="IPv6" elapsed="60ms"'),
  klog(1540, 'config.go:142] "Calling handler.OnEndpointSliceUpdate"'),
  // Held by minSyncPeriod: the merge and the sync start together, 1 s after the last IPv4 sync ended.
  klog(
    1650,
    'endpointschangetracker.go:242] "Updating existing service endpoints" portName="clients-endpointslice/web:http" endpoints=["10.244.1.2:8080"]',
  ),
  klog(1650, 'proxier.go:655] "Syncing iptables rules" ipFamily="IPv4" fullSync=false'),
  klog(1700, 'proxier.go:649] "SyncProxyRules complete" ipFamily="IPv4" elapsed="50ms"'),
].join("\n");

describe("the clients benchmark's split of a drain", () => {
  it.each([
    ["a klog line, in local time", klog(1234, 'x.go:1] "y"'), T0 + 1234],
    ["a line that is not klog's", '{"level":"info"}', undefined],
  ])("reads the time of %s", (_name, line, want) => {
    expect(klogTime(line, T0)).toBe(want);
  });

  it("takes the operator's first failing result of the pod, its verdict, the reconcile it woke and the slice write", () => {
    expect(operatorSplit(OPERATOR_LOG, POLICY, "sick", T0)).toEqual({
      firstFailingProbeMs: 498,
      verdictMs: 1501,
      reconcileStartMs: 1502,
      sliceWrittenMs: 1530,
    });
  });

  it("reports no verdict when the pod's results never crossed the threshold", () => {
    expect(operatorSplit(OPERATOR_LOG, POLICY, "other", T0)).toEqual({ firstFailingProbeMs: 300 });
  });

  it("takes the kubelet's failing readiness probes of the pod after the switch, the threshold-th as its verdict", () => {
    expect(kubeletSplit(KUBELET_LOG, "clients-readinessprobe/web-a", T0, 2)).toEqual({
      firstFailingProbeMs: 700,
      verdictMs: 1700,
    });
  });

  it("takes kube-proxy's first slice event after the verdict, the IPv4 sync that merged the Service's endpoints, and the sync before it", () => {
    expect(proxySplit(PROXY_LOG, "clients-endpointslice/web", T0 + 1501, T0)).toEqual({
      proxySawSliceMs: 1540,
      proxySyncStartMs: 1650,
      proxySyncEndMs: 1700,
      previousSyncEndedMsBefore: 1000,
    });
  });

  it("reports nothing of kube-proxy when no slice event came after the verdict", () => {
    expect(proxySplit(PROXY_LOG, "clients-endpointslice/web", T0 + 1600, T0)).toEqual({});
  });

  it.each([
    ["one value", [5], { min: 5, median: 5, max: 5 }],
    ["an odd count", [3, 1, 2], { min: 1, median: 2, max: 3 }],
    ["an even count, the lower middle", [4, 1, 3, 2], { min: 1, median: 2, max: 4 }],
  ])("spreads %s", (_name, values, want) => {
    expect(spread(values)).toEqual(want);
  });
});
