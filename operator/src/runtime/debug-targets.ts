// /debug/targets, bounded: `?namespace=` keeps one namespace's policies, `?limit=` (default 1000,
// at most 10000) caps the page, and `?continue=` resumes after the last entry of the previous page
// (ordered by policy, then pod uid). The page is written in chunks, yielding to the event loop
// between them and waiting for the socket to drain, so a large page never holds the loop for its
// whole serialisation.
import type { ServerResponse } from "node:http";
import { BinaryHeap } from "./binary-heap.js";

export const DEFAULT_DEBUG_LIMIT = 1000;
export const MAX_DEBUG_LIMIT = 10_000;
/** Entries serialised between two yields to the event loop. */
const CHUNK = 200;
/** Targets scanned between two yields. */
const SCAN_CHUNK = 2000;

/** One target as the health store lists it; the rest of its fields are passed through. */
export interface DebugTargetEntry {
  policy: string;
  uid: string;
}

/** What /debug/targets reads: the targets, and other figures shown beside them (the scheduler's). */
export interface DebugSnapshot {
  targets: readonly DebugTargetEntry[];
  [other: string]: unknown;
}

export interface DebugQuery {
  namespace?: string;
  limit: number;
  /** The last entry already served. */
  after?: DebugTargetEntry;
}

export interface DebugPage {
  targets: DebugTargetEntry[];
  /** More entries match after this page: ask again with `continue`. */
  truncated: boolean;
  continue?: string;
}

/** (policy, uid) order: the order pages are served in. */
function compare(a: DebugTargetEntry, b: DebugTargetEntry): number {
  if (a.policy !== b.policy) return a.policy < b.policy ? -1 : 1;
  return a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0;
}

const markerOf = (t: DebugTargetEntry) => Buffer.from(`${t.policy}\u0000${t.uid}`, "utf8").toString("base64url");

/** Reads the query; a bad value is an error naming the parameter. */
export function parseDebugQuery(params: URLSearchParams): DebugQuery | string {
  const q: DebugQuery = { limit: DEFAULT_DEBUG_LIMIT };
  const namespace = params.get("namespace");
  if (namespace !== null && namespace !== "") q.namespace = namespace;
  const limit = params.get("limit");
  if (limit !== null) {
    const n = /^\d+$/.test(limit) ? Number(limit) : NaN;
    if (!(n >= 1 && n <= MAX_DEBUG_LIMIT))
      return `limit must be an integer from 1 to ${MAX_DEBUG_LIMIT}, got ${JSON.stringify(limit)}`;
    q.limit = n;
  }
  const cont = params.get("continue");
  if (cont !== null && cont !== "") {
    const [policy, uid, ...rest] = Buffer.from(cont, "base64url").toString("utf8").split("\u0000");
    if (policy === undefined || uid === undefined || rest.length > 0)
      return `continue is not a marker this endpoint returned, got ${JSON.stringify(cont)}`;
    q.after = { policy, uid };
  }
  return q;
}

/**
 * Gathers one page, a target at a time: keeps only the `limit + 1` first in (policy, uid) order
 * in a max-heap instead of sorting every target (O(n log limit)), so the scan can be cut into
 * chunks with the event loop running between them.
 */
class PageCollector {
  private readonly prefix: string | undefined;
  private readonly keep = new BinaryHeap<DebugTargetEntry>((a, b) => compare(a, b) > 0);

  constructor(private readonly q: DebugQuery) {
    this.prefix = q.namespace === undefined ? undefined : `${q.namespace}/`;
  }

  add(t: DebugTargetEntry): void {
    if (this.prefix !== undefined && !t.policy.startsWith(this.prefix)) return;
    if (this.q.after !== undefined && compare(t, this.q.after) <= 0) return;
    this.keep.push(t);
    if (this.keep.size > this.q.limit + 1) this.keep.pop();
  }

  page(): DebugPage {
    const first: DebugTargetEntry[] = [];
    for (let t = this.keep.pop(); t !== undefined; t = this.keep.pop()) first.push(t);
    first.reverse();
    const truncated = first.length > this.q.limit;
    const targets = first.slice(0, this.q.limit);
    const out: DebugPage = { targets, truncated };
    if (truncated) out.continue = markerOf(targets[targets.length - 1]!);
    return out;
  }
}

/** The page of targets the query asks for, in (policy, uid) order. */
export function pageOf(targets: readonly DebugTargetEntry[], q: DebugQuery): DebugPage {
  const c = new PageCollector(q);
  for (const t of targets) c.add(t);
  return c.page();
}

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** pageOf, scanning SCAN_CHUNK targets at a time with the event loop running between chunks. */
async function pageOfChunked(targets: readonly DebugTargetEntry[], q: DebugQuery): Promise<DebugPage> {
  const c = new PageCollector(q);
  for (let i = 0; i < targets.length; i++) {
    c.add(targets[i]!);
    if (i % SCAN_CHUNK === SCAN_CHUNK - 1) await yieldToLoop();
  }
  return c.page();
}

/** Writes `{...others, limit, truncated, continue?, targets: [...]}` a chunk at a time. */
export async function writeDebugPage(res: ServerResponse, snapshot: DebugSnapshot, q: DebugQuery): Promise<void> {
  const { targets: all, ...others } = snapshot;
  const page = await pageOfChunked(all, q);
  const head = {
    ...others,
    limit: q.limit,
    truncated: page.truncated,
    ...(page.continue !== undefined ? { continue: page.continue } : {}),
  };
  res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
  await write(res, `${JSON.stringify(head).slice(0, -1)}${Object.keys(head).length > 0 ? "," : ""}"targets":[`);
  for (let i = 0; i < page.targets.length; i += CHUNK) {
    // A client gone mid-page: nothing more to write.
    if (res.destroyed) return;
    const chunk = page.targets
      .slice(i, i + CHUNK)
      .map((t) => JSON.stringify(t))
      .join(",");
    await write(res, (i > 0 ? "," : "") + chunk);
    // Let probes and reconciles run between chunks.
    await yieldToLoop();
  }
  res.end("]}");
}

function write(res: ServerResponse, text: string): Promise<void> {
  if (res.write(text)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
  });
}
