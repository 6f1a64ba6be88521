// A TCP port inside a network namespace, reachable from the host's loopback without touching the
// host's network: path-based unix sockets cross network namespaces, so a forwarder inside the
// namespace listens on a unix socket in the run's directory and connects to the port there, and
// a host-side forwarder listens on 127.0.0.1:<free port> and pipes each connection to that socket.
//
//   node --import tsx bridge.ts <unix-socket> <tcp-port>   (run inside the namespace)
import { rmSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { fileURLToPath } from "node:url";

function pipe(a: Socket, b: Socket): void {
  a.pipe(b);
  b.pipe(a);
  const end = (): void => {
    a.destroy();
    b.destroy();
  };
  a.once("error", end).once("close", end);
  b.once("error", end).once("close", end);
}

function listen(server: Server, target: { port: number; host: string } | { path: string }): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(target, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

export interface HostBridge {
  /** The loopback port on the host that reaches the port inside the namespace. */
  readonly port: number;
  close(): Promise<void>;
}

/** Listens on a free port of the host's loopback and forwards every connection to `socketPath`. */
export async function startHostBridge(socketPath: string): Promise<HostBridge> {
  const open = new Set<Socket>();
  const server = createServer((client) => {
    open.add(client);
    client.once("close", () => open.delete(client));
    pipe(client, connect({ path: socketPath }));
  });
  await listen(server, { port: 0, host: "127.0.0.1" });
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Inside the namespace: listens on `socketPath` and forwards every connection to 127.0.0.1:`port`. */
export async function startNamespaceForwarder(socketPath: string, port: number): Promise<Server> {
  rmSync(socketPath, { force: true });
  const server = createServer((client) => pipe(client, connect({ port, host: "127.0.0.1" })));
  await listen(server, { path: socketPath });
  return server;
}

async function main(argv: string[]): Promise<void> {
  const [socketPath, portText] = argv;
  const port = Number(portText);
  if (!socketPath || !Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new Error(`usage: bridge.ts <unix-socket> <tcp-port> (got ${JSON.stringify(argv)})`);
  }
  const server = await startNamespaceForwarder(socketPath, port);
  const stop = (): void => {
    server.close();
    rmSync(socketPath, { force: true });
    process.exit(0);
  };
  process.once("SIGTERM", stop).once("SIGINT", stop);
  console.log(`forwarding ${socketPath} to 127.0.0.1:${port}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
