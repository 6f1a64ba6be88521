import { afterEach, describe, expect, it } from "@jest/globals";
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import type { ProbeRequest } from "../domain/probe-request.js";
import { createProber } from "./prober.js";
import { closeProbeSocket } from "./socket-close.js";

// How the pod's end of a probe's connection sees it end: "reset" (an RST: nothing left in
// TIME_WAIT on either side) or "fin" (an orderly close).
type Ending = "reset" | "fin";

let server: Server | undefined;

afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

/** A server that answers 200 to the first request (keeping the connection open), and reports how each connection ended. */
async function serve(answer: boolean): Promise<{ port: number; ending: () => Promise<Ending> }> {
  const endings: Array<Promise<Ending>> = [];
  server = createServer((socket: Socket) => {
    endings.push(
      new Promise<Ending>((resolve) => {
        socket.on("error", (err: NodeJS.ErrnoException) => resolve(err.code === "ECONNRESET" ? "reset" : "fin"));
        socket.on("end", () => {
          resolve("fin");
          socket.end();
        });
      }),
    );
    if (answer) socket.once("data", () => socket.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"));
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    ending: async () => {
      while (endings.length === 0) await new Promise((r) => setImmediate(r));
      return endings[0]!;
    },
  };
}

const aRequest = (type: "HTTP" | "TCP", port: number): ProbeRequest => ({
  type,
  scheme: "HTTP",
  address: "127.0.0.1",
  port,
  path: "/healthz",
  method: "GET",
  headers: [],
});

describe("how a probe's connection ends", () => {
  it.each([
    { type: "HTTP" as const, answer: true, expected: "response" },
    { type: "TCP" as const, answer: false, expected: "connected" },
  ])("a $type probe resets its connection once it has its answer", async ({ type, answer, expected }) => {
    const { port, ending } = await serve(answer);
    const result = await createProber()(aRequest(type, port), 2_000, false);
    expect(result.kind).toBe(expected);
    expect(await ending()).toBe("reset");
  });

  it("destroys a socket that is still connecting at once (a reset would wait for the connection)", async () => {
    const { port } = await serve(false);
    const socket = connect({ host: "127.0.0.1", port });
    socket.on("error", () => {});
    expect(socket.connecting).toBe(true);
    closeProbeSocket(socket, false);
    expect(socket.destroyed).toBe(true);
  });
});
