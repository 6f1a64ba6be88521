// Node's own HTTP client (llhttp, strict: insecureHTTPParser off, as node:http defaults) as the
// reference for the probe's response parser. A local TCP server answers every request with the
// bytes a case gives, in the pieces it gives, then closes or holds the connection. What the
// client saw is settled when its request closes, or, on a held connection, once every byte has
// reached the client's socket and the parser has run on it (the parser runs inside the socket's
// data event, so one setImmediate later it has seen them all).
import { request, type IncomingMessage } from "node:http";
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";

export const BODY_LIMIT = 64 * 1024;

export type ReferenceOutcome =
  /** A final response: its status and body so far; `complete` when its message ended. */
  | { kind: "response"; status: number; body: Buffer; complete: boolean }
  | { kind: "refused"; error: string }
  /** No verdict yet: the connection is held and the response is not complete. */
  | { kind: "incomplete" };

export interface ReferenceCase {
  pieces: Buffer[];
  method: "GET" | "HEAD";
  /** Close the connection after the last piece, or hold it open. */
  close: boolean;
}

export interface LlhttpReference {
  run(c: ReferenceCase): Promise<ReferenceOutcome>;
  stop(): Promise<void>;
}

export async function startLlhttpReference(): Promise<LlhttpReference> {
  const pending = new Map<number, ReferenceCase>();
  const sockets = new Set<Socket>();
  let nextId = 1;
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    let head = "";
    socket.on("data", (d) => {
      if (head.includes("\r\n\r\n")) return;
      head += d.toString("latin1");
      if (!head.includes("\r\n\r\n")) return;
      const id = Number(/\r\nx-case: (\d+)\r\n/i.exec(head)?.[1]);
      const c = pending.get(id);
      if (!c) return void socket.destroy();
      for (const p of c.pieces) socket.write(p);
      if (c.close) socket.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;

  const run = (c: ReferenceCase) =>
    new Promise<ReferenceOutcome>((resolve) => {
      const id = nextId++;
      pending.set(id, c);
      const total = c.pieces.reduce((n, p) => n + p.length, 0);
      if (total === 0 && !c.close) return resolve({ kind: "incomplete" });
      let status = 0;
      let complete = false;
      let error: string | undefined;
      const body: Buffer[] = [];
      let settled = false;
      const settle = () => {
        if (settled) return;
        settled = true;
        pending.delete(id);
        req.destroy();
        if (status > 0 && (complete || bodyLength(body) >= BODY_LIMIT)) {
          resolve({ kind: "response", status, body: Buffer.concat(body), complete });
        } else if (error !== undefined) resolve({ kind: "refused", error });
        else if (c.close) resolve({ kind: "refused", error: "closed without a verdict" });
        else resolve({ kind: "incomplete" });
      };
      const req = request({
        host: "127.0.0.1",
        port,
        method: c.method,
        path: "/",
        agent: false,
        headers: { "x-case": String(id), connection: "close" },
      });
      req.on("socket", (socket) => {
        let received = 0;
        socket.on("data", (d: Buffer) => {
          received += d.length;
          if (!c.close && received >= total) setImmediate(settle);
        });
      });
      req.on("error", (err) => {
        error ??= (err as NodeJS.ErrnoException).code ?? err.message;
        setImmediate(settle);
      });
      req.on("close", () => setImmediate(settle));
      // A 101 is a final response without a body, for llhttp as for the probe.
      req.on("upgrade", (res: IncomingMessage) => {
        status = res.statusCode ?? 0;
        complete = true;
        settle();
      });
      req.on("response", (res: IncomingMessage) => {
        status = res.statusCode ?? 0;
        res.on("data", (d: Buffer) => body.push(d));
        res.on("end", () => (complete = true));
        res.on("aborted", () => (error ??= "aborted"));
        res.on("error", (err) => (error ??= (err as NodeJS.ErrnoException).code ?? err.message));
      });
      req.end();
    });

  return {
    run,
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function bodyLength(parts: Buffer[]): number {
  return parts.reduce((n, p) => n + p.length, 0);
}
