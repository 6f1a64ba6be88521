// One HTTP server standing in for every pod: it listens on all addresses and answers by the
// address it was reached on (loopback on the test server; on the real control plane a routed
// range made local in the pods' network namespace, where it runs), 200 for a
// healthy pod and 503 for one the benchmark made fail. Addresses outside the pod range get 404.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface PodServer {
  port: number;
  /** Requests answered, by result. */
  served: { ok: number; failing: number; foreign: number };
  setFailing(ips: Iterable<string>): void;
  close(): Promise<void>;
}

export async function startPodServer(inRange: (ip: string) => boolean): Promise<PodServer> {
  let failing = new Set<string>();
  const served = { ok: 0, failing: 0, foreign: 0 };
  const server: Server = createServer((req, res) => {
    const ip = (req.socket.localAddress ?? "").replace(/^::ffff:/, "");
    let status = 200;
    if (!inRange(ip)) {
      status = 404;
      served.foreign++;
    } else if (failing.has(ip)) {
      status = 503;
      served.failing++;
    } else {
      served.ok++;
    }
    res.writeHead(status, { "content-type": "text/plain", connection: "close" });
    res.end(status === 200 ? "ok" : "unavailable");
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    // Every address, an ephemeral port: no clash with pod servers of tests running beside it.
    server.listen(0, "0.0.0.0", 4096, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    served,
    setFailing(ips) {
      failing = new Set(ips);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Whether an IPv4 address is inside a CIDR. */
export function cidrContains(cidr: string): (ip: string) => boolean {
  const [base, bitsText] = cidr.split("/");
  const bits = Number(bitsText);
  const toInt = (ip: string) => ip.split(".").reduce((n, o) => ((n << 8) | Number(o)) >>> 0, 0);
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  const net = (toInt(base ?? "") & mask) >>> 0;
  return (ip) => /^\d+\.\d+\.\d+\.\d+$/.test(ip) && (toInt(ip) & mask) >>> 0 === net;
}
