// `probe-types [--rate 200] [--seconds 5]`: the operator's prober (createProber) for each probe
// type side by side, at the same fixed rate, a fresh connection per probe, against local
// targets in a process of their own (so their CPU is not counted): an HTTP server, TCP
// listeners, and an h2c gRPC health server. Prints one JSON line per type with the CPU per
// probe (µs) and the probes per second achieved.
import { spawn, type ChildProcess } from "node:child_process";
import { createProber } from "../../operator/src/adapters/prober.js";
import type { ProbeRequest } from "../../operator/src/domain/probe-request.js";
import type { Benchmark } from "./bench.js";
import { numberFlags } from "./flags.js";
import { runProbeLoad } from "./probe-load.js";

// The targets. TCP probes are deduplicated by address and port alone, so each TCP target
// gets a listener of its own; HTTP targets differ by path and gRPC targets by service.
const TARGETS_SCRIPT = `
const net = require("node:net"), http = require("node:http"), http2 = require("node:http2");
const count = Number(process.argv[1]);
// No Nagle on the targets' side either: an HTTP/2 server writes its response in several small writes.
const listen = (s) => new Promise((r) => { s.on("connection", (c) => c.setNoDelay(true)); s.listen(0, "127.0.0.1", () => r(s.address().port)); });
(async () => {
  const httpPort = await listen(http.createServer((q, s) => { s.writeHead(200, { "content-length": 3 }); s.end("ok\\n"); }));
  const grpc = http2.createServer();
  grpc.on("stream", (stream) => {
    stream.on("data", () => {});
    stream.on("end", () => {
      stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
      stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
      stream.end(Buffer.from([0, 0, 0, 0, 2, 0x08, 0x01]));
    });
  });
  const grpcPort = await listen(grpc);
  const tcpPorts = [];
  for (let i = 0; i < count; i++) tcpPorts.push(await listen(net.createServer((c) => { c.on("error", () => {}); c.resume(); })));
  process.stdout.write(JSON.stringify({ httpPort, grpcPort, tcpPorts }) + "\\n");
})();
`;

interface TargetPorts {
  httpPort: number;
  grpcPort: number;
  tcpPorts: number[];
}

async function startTargets(count: number): Promise<{ ports: TargetPorts; child: ChildProcess }> {
  const child = spawn(process.execPath, ["-e", TARGETS_SCRIPT, String(count)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const ports = await new Promise<TargetPorts>((resolve, reject) => {
    let text = "";
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`the probe targets exited with ${code}`)));
    child.stdout?.on("data", (d: Buffer) => {
      text += String(d);
      if (text.includes("\n")) resolve(JSON.parse(text) as TargetPorts);
    });
  });
  return { ports, child };
}

export const probeTypesBenchmark: Benchmark = {
  name: "probe-types",
  description:
    "CPU per probe and probes/s of the HTTP, TCP and gRPC probers at one fixed rate, fresh connection per probe",
  usage: "probe-types [--rate 200] [--seconds 5]",
  async run(args) {
    const flags = numberFlags(args, { rate: 200, seconds: 5 });
    const count = Math.max(1, Math.round(flags.rate));
    const { ports, child } = await startTargets(count);
    const base: ProbeRequest = { scheme: "HTTP", address: "127.0.0.1", port: 0, path: "", method: "GET", headers: [] };
    const types: Array<[string, (i: number) => ProbeRequest]> = [
      ["HTTP", (i) => ({ ...base, port: ports.httpPort, path: `/healthz?n=${i}` })],
      ["TCP", (i) => ({ ...base, type: "TCP", port: ports.tcpPorts[i] as number })],
      ["GRPC", (i) => ({ ...base, type: "GRPC", port: ports.grpcPort, grpcService: `bench.S${i}` })],
    ];
    try {
      for (const [type, request] of types) {
        const r = await runProbeLoad({ request, rate: flags.rate, seconds: flags.seconds, execute: createProber() });
        const cpuPerProbeUs = r.probes > 0 ? Math.round((r.cpuSeconds * 1e6) / r.probes) : 0;
        console.log(
          JSON.stringify({ type, cpuPerProbeUs, probesPerSecond: Math.round(r.probes / flags.seconds), ...r }),
        );
      }
    } finally {
      child.removeAllListeners("exit");
      child.kill("SIGTERM");
    }
  },
};
