// The admission webhook's HTTPS listener: POST /mutate-pods with an AdmissionReview. It listens
// from the start; until a certificate is loaded every TLS handshake fails, which kube-apiserver
// treats as a failed call (failurePolicy: Ignore admits the pod unchanged). A new certificate
// replaces the old one in place (setSecureContext): open connections keep theirs, new ones get it.
import { createServer, type Server } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { BindAddress } from "./config.js";
import { listen, type RunningServer } from "./health-server.js";

export const MUTATE_PODS_PATH = "/mutate-pods";
/** kube-apiserver refuses objects over 3 MiB; the review wraps one, and the old one on updates. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

export type WebhookHandler = (body: unknown) => { status: number; body: unknown };

export interface RunningWebhookServer extends RunningServer {
  setCertificate(pair: { cert: string; key: string }): void;
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(status, {
    "content-type": typeof body === "string" ? "text/plain; charset=utf-8" : "application/json",
  });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        resolve(undefined);
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

async function handleRequest(req: IncomingMessage, res: ServerResponse, handler: WebhookHandler): Promise<void> {
  const path = (req.url ?? "/").split("?")[0];
  if (path !== MUTATE_PODS_PATH) return reply(res, 404, "not found\n");
  if (req.method !== "POST") return reply(res, 405, "method not allowed\n");
  const text = await readBody(req);
  if (text === undefined) return reply(res, 413, `body over ${MAX_BODY_BYTES} bytes\n`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return reply(res, 400, "body: not JSON\n");
  }
  const answer = handler(body);
  reply(res, answer.status, answer.body);
}

export async function startWebhookServer(opts: {
  address: Exclude<BindAddress, { disabled: true }>;
  handler: WebhookHandler;
  onError?: (err: unknown) => void;
}): Promise<RunningWebhookServer> {
  const server: Server = createServer({ minVersion: "TLSv1.2" }, (req, res) => {
    handleRequest(req, res, opts.handler).catch((err: unknown) => {
      opts.onError?.(err);
      if (!res.headersSent) reply(res, 500, "internal error\n");
    });
  });
  server.on("tlsClientError", () => undefined);
  const running = await listen(server, opts.address);
  return {
    ...running,
    setCertificate: (pair) => server.setSecureContext({ cert: pair.cert, key: pair.key, minVersion: "TLSv1.2" }),
  };
}
