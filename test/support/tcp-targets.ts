// TCP listeners for probe tests: one that accepts, a port that refuses, and one that never
// answers a connection attempt at all.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, connect, type AddressInfo, type Socket } from "node:net";

export interface Target {
  port: number;
  close(): Promise<void>;
}

/** Accepts every connection; counts them, those still open, and the bytes clients sent. */
export async function startAcceptingListener(
  host = "127.0.0.1",
): Promise<Target & { accepted: number; open: number; bytesReceived: number }> {
  const sockets = new Set<Socket>();
  const t = {
    port: 0,
    accepted: 0,
    bytesReceived: 0,
    close: async () => {},
    get open() {
      return sockets.size;
    },
  };
  const server = createServer((s) => {
    t.accepted++;
    sockets.add(s);
    s.on("data", (d) => (t.bytesReceived += d.length));
    s.on("error", () => {});
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()));
  t.port = (server.address() as AddressInfo).port;
  t.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return t;
}

/** A port nothing listens on: a connection attempt is refused. */
export async function refusedPort(host = "127.0.0.1"): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A listener that never completes a connection: a stopped process holds a listening socket
 * with a backlog of 1 and never accepts, and its accept queue is filled, so the kernel drops
 * every further SYN. A connection attempt then hangs until the client gives up.
 */
export async function startSilentListener(host = "127.0.0.1"): Promise<Target> {
  const script = `const s = require("node:net").createServer();
s.listen({ port: 0, host: ${JSON.stringify(host)}, backlog: 1 }, () => {
  process.stdout.write(String(s.address().port) + "\\n");
  process.kill(process.pid, "SIGSTOP");
});`;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once("error", reject);
    child.stdout?.once("data", (d: Buffer) => resolve(Number(String(d).trim())));
  });
  const fillers = await fillAcceptQueue(host, port);
  return {
    port,
    close: async () => {
      for (const s of fillers) s.destroy();
      await stop(child);
    },
  };
}

/** Connects until an attempt does not complete within 200 ms: the queue is then full. */
async function fillAcceptQueue(host: string, port: number): Promise<Socket[]> {
  const held: Socket[] = [];
  for (let i = 0; i < 16; i++) {
    const s = connect({ host, port });
    s.on("error", () => {});
    const connected = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 200);
      s.once("connect", () => (clearTimeout(timer), resolve(true)));
    });
    if (!connected) {
      s.destroy();
      return held;
    }
    held.push(s);
  }
  throw new Error(`the accept queue of port ${port} did not fill`);
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}
