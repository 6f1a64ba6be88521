// The client side of the `clients` benchmark: a steady stream of GETs through a Service's
// ClusterIP from inside the node's network namespace, each on a new connection, and what the
// answers say (which pod served, or why none did).
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

/** One request: when it was sent (ms since epoch), the pod that answered, or the error. */
export interface Answer {
  at: number;
  pod?: string;
  error?: string;
}

/** A node script: GET `url` every 1000/rate ms on a new connection, 1 s timeout; one JSON line per answer. */
const clientScript = (url: string, rate: number): string => `
const http = require("node:http");
const send = () => {
  const at = Date.now();
  let done = false;
  const out = (o) => { if (!done) { done = true; process.stdout.write(JSON.stringify({ at, ...o }) + "\\n"); } };
  const req = http.get(${JSON.stringify(url)}, { agent: false, timeout: 1000 }, (res) => {
    let body = "";
    res.on("data", (d) => (body += d));
    res.on("end", () => (res.statusCode === 200 ? out({ pod: body.trim() }) : out({ error: "status " + res.statusCode })));
    res.on("error", (e) => out({ error: e.code || e.message }));
  });
  req.on("timeout", () => { out({ error: "timeout" }); req.destroy(); });
  req.on("error", (e) => out({ error: e.code || e.message }));
};
setInterval(send, ${1000 / rate});
`;

export class Traffic {
  readonly answers: Answer[] = [];
  private constructor(private readonly child: ChildProcess) {}

  /** Starts the client in the network namespace at `netnsPath`. */
  static start(netnsPath: string, url: string, rate: number): Traffic {
    const child = spawn("nsenter", [`--net=${netnsPath}`, "--", process.execPath, "-e", clientScript(url, rate)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const t = new Traffic(child);
    createInterface({ input: child.stdout! }).on("line", (l) => t.answers.push(JSON.parse(l) as Answer));
    return t;
  }

  /** Answers to requests sent in [from, to). */
  between(from: number, to = Infinity): Answer[] {
    return this.answers.filter((a) => a.at >= from && a.at < to);
  }

  stop(): void {
    this.child.kill("SIGTERM");
  }
}

/** Pods that served a request sent in the last `ms`. */
export const podsSeen = (t: Traffic, ms: number, now = Date.now()): Set<string> =>
  new Set(t.between(now - ms).flatMap((a) => (a.pod ? [a.pod] : [])));

/** Requests sent after `from` that `pod` served, and how long after `from` the last one was sent. */
export function toPod(answers: Answer[], pod: string, from: number): { requests: number; lastMs: number } {
  const hits = answers.filter((a) => a.at >= from && a.pod === pod);
  return { requests: hits.length, lastMs: hits.length ? Math.max(...hits.map((a) => a.at)) - from : 0 };
}

export const failed = (answers: Answer[]): number => answers.filter((a) => a.error).length;

/** Failures by cause, e.g. {"ECONNREFUSED": 3, "timeout": 1}. */
export const causes = (answers: Answer[]): Record<string, number> =>
  answers.reduce<Record<string, number>>(
    (acc, a) => (a.error ? { ...acc, [a.error]: (acc[a.error] ?? 0) + 1 } : acc),
    {},
  );
