// meta.k8s.io/v1 Table output for `kubectl get`: printer columns of CRDs, NAME/AGE for built-ins.
import type { ResourceType } from "./resource-types.js";
import { CORE_EVENT_VERSION, convertEvent } from "./event-conversion.js";
import type { KubeObject } from "./store.js";

interface Column {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

/** kubectl's duration.HumanDuration: 45s, 3m20s, 5h, 2d3h, 400d... */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.floor(seconds / 3600);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.floor(hours / 24) % 365;
    return dy === 0 ? `${Math.floor(hours / 24 / 365)}y` : `${Math.floor(hours / 24 / 365)}y${dy}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

/** Evaluates the simple JSONPath forms printer columns use: .a.b, .a[0].b, .a[*].b, .a['x.y']. */
export function evalJsonPath(obj: unknown, path: string): unknown[] {
  const expr = path.replace(/^\{|\}$/g, "").replace(/^\$/, "");
  type Filter = { key: string; op: string; value: string | number | undefined };
  const segs: Array<string | number | "*" | Filter> = [];
  const re =
    /\.([^.[\]]+)|\[\?\(@\.([A-Za-z0-9_]+)\s*(?:(==|!=)\s*("[^"]*"|'[^']*'|[^)\s]+))?\)\]|\[(\d+|\*|'[^']*'|"[^"]*")\]/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(expr))) {
    if (m[1] !== undefined) segs.push(m[1]);
    else if (m[2] !== undefined) {
      const raw = m[4];
      const value =
        raw === undefined
          ? undefined
          : /^["']/.test(raw)
            ? raw.slice(1, -1)
            : Number.isNaN(Number(raw))
              ? raw
              : Number(raw);
      segs.push({ key: m[2], op: m[3] ?? "exists", value });
    } else if (m[5] === "*") segs.push("*");
    else if (/^\d+$/.test(m[5]!)) segs.push(Number(m[5]));
    else segs.push(m[5]!.slice(1, -1));
  }
  let cur: unknown[] = [obj];
  for (const seg of segs) {
    const nextVals: unknown[] = [];
    for (const c of cur) {
      if (c === null || c === undefined) continue;
      if (typeof seg === "object") {
        // A filter like [?(@.type=="Ready")] keeps the list items that match.
        const items = Array.isArray(c) ? c : [];
        for (const item of items) {
          const v = item && typeof item === "object" ? (item as Record<string, unknown>)[seg.key] : undefined;
          if (seg.op === "exists" ? v !== undefined : seg.op === "==" ? v === seg.value : v !== seg.value)
            nextVals.push(item);
        }
      } else if (seg === "*") {
        if (Array.isArray(c)) nextVals.push(...c);
        else if (typeof c === "object") nextVals.push(...Object.values(c));
      } else if (typeof seg === "number") {
        if (Array.isArray(c) && c[seg] !== undefined) nextVals.push(c[seg]);
      } else if (typeof c === "object" && !Array.isArray(c) && (c as Record<string, unknown>)[seg] !== undefined) {
        nextVals.push((c as Record<string, unknown>)[seg]);
      }
    }
    cur = nextVals;
  }
  return cur;
}

function cellValue(values: unknown[], type: string, now: number): unknown {
  if (values.length === 0) return null;
  const v = values.length === 1 ? values[0] : values;
  if (type === "date" && typeof v === "string") {
    const t = Date.parse(v);
    return Number.isNaN(t) ? v : humanDuration(now - t);
  }
  if (Array.isArray(v)) return v.map((x) => (typeof x === "object" ? JSON.stringify(x) : String(x))).join(",");
  if (typeof v === "object" && v !== null) return JSON.stringify(v);
  return v;
}

function age(obj: KubeObject, now: number): string {
  const t = Date.parse(obj.metadata?.creationTimestamp ?? "");
  return Number.isNaN(t) ? "<unknown>" : humanDuration(now - t);
}

const col = (name: string, type = "string", description = "", format = "", priority = 0): Column => ({
  name,
  type,
  format,
  description,
  priority,
});

function podRow(pod: KubeObject, now: number): unknown[] {
  const containers = (pod.spec?.containers ?? []) as unknown[];
  const statuses = (pod.status?.containerStatuses ?? []) as Array<Record<string, any>>;
  const ready = statuses.filter((s) => s.ready).length;
  const restarts = statuses.reduce((a, s) => a + Number(s.restartCount ?? 0), 0);
  let status = pod.status?.reason ?? pod.status?.phase ?? "Unknown";
  for (const s of statuses) {
    if (s.state?.waiting?.reason) status = s.state.waiting.reason;
    else if (s.state?.terminated?.reason) status = s.state.terminated.reason;
  }
  if (pod.metadata?.deletionTimestamp) status = "Terminating";
  return [
    pod.metadata.name,
    `${ready}/${containers.length}`,
    status,
    restarts,
    age(pod, now),
    pod.status?.podIP ?? "<none>",
    pod.spec?.nodeName ?? "<none>",
  ];
}

const orNone = (v: unknown, none = "<none>"): string => (v === undefined || v === null || v === "" ? none : String(v));

function endpointSliceRow(o: KubeObject, now: number): unknown[] {
  const ports = ((o.ports ?? []) as Array<Record<string, any>>).map((p) => p.port).filter((p) => p !== undefined);
  const addresses = ((o.endpoints ?? []) as Array<Record<string, any>>).flatMap((e) => (e.addresses ?? []) as string[]);
  const shown = addresses.slice(0, 3).join(",") + (addresses.length > 3 ? ` + ${addresses.length - 3} more...` : "");
  return [
    o.metadata.name,
    o.addressType ?? "",
    ports.length ? ports.join(",") : "<unset>",
    addresses.length ? shown : "<unset>",
    age(o, now),
  ];
}

function serviceRow(o: KubeObject, now: number): unknown[] {
  const ports = ((o.spec?.ports ?? []) as Array<Record<string, any>>).map(
    (p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ""}/${p.protocol ?? "TCP"}`,
  );
  const selector = Object.entries((o.spec?.selector ?? {}) as Record<string, string>)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  return [
    o.metadata.name,
    o.spec?.type ?? "ClusterIP",
    orNone(o.spec?.clusterIP),
    orNone((o.spec?.externalIPs ?? []).join(",")),
    ports.length ? ports.join(",") : "<none>",
    age(o, now),
    orNone(selector),
  ];
}

/** printers.go printEvent, over the core v1 form (events.k8s.io rows are converted to it, as the real printer sees one internal Event). */
function eventRow(o: KubeObject, now: number): unknown[] {
  const since = (time: unknown): string => {
    const ms = typeof time === "string" ? Date.parse(time) : Number.NaN;
    return Number.isNaN(ms) ? "<unknown>" : humanDuration(now - ms);
  };
  const firstSeen = o.firstTimestamp ? since(o.firstTimestamp) : since(o.eventTime);
  let lastSeen = o.lastTimestamp ? since(o.lastTimestamp) : firstSeen;
  let count = Number(o.count ?? 0);
  if (o.series) {
    lastSeen = since(o.series.lastObservedTime);
    count = Number(o.series.count ?? 0);
  } else if (count === 0) count = 1; // events.k8s.io singletons carry no count
  const inv = o.involvedObject ?? {};
  const kind = String(inv.kind ?? "").toLowerCase();
  const component = o.source?.component || o.reportingComponent || "";
  const instance = o.source?.host || o.reportingInstance || "";
  return [
    lastSeen,
    o.type ?? "",
    o.reason ?? "",
    inv.name ? `${kind}/${inv.name}` : kind,
    inv.fieldPath ?? "",
    instance ? `${component}, ${instance}` : component,
    String(o.message ?? "").trim(),
    firstSeen,
    count,
    o.metadata.name,
  ];
}

// The real printer's columns; the server always sends the wide set and kubectl hides priority 1 without -o wide.
const EVENT_COLUMNS: Column[] = [
  col("Last Seen"),
  col("Type"),
  col("Reason"),
  col("Object"),
  col("Subobject", "string", "", "", 1),
  col("Source", "string", "", "", 1),
  col("Message"),
  col("First Seen", "string", "", "", 1),
  col("Count", "string", "", "", 1),
  col("Name", "string", "", "name", 1),
];

type Printer = { columns: Column[]; row: (o: KubeObject, now: number) => unknown[] };

const NAME = col("Name", "string", "Name must be unique within a namespace.", "name");
const AGE = col(
  "Age",
  "string",
  "CreationTimestamp is a timestamp representing the server time when this object was created.",
);

/** Built-in printers for the kinds this project looks at with kubectl get, as the real server prints them; others get NAME and AGE. */
const BUILTIN_PRINTERS: Record<string, Printer> = {
  "/Pod": {
    columns: [
      NAME,
      col("Ready"),
      col("Status"),
      col("Restarts", "string"),
      AGE,
      col("IP", "string", "", "", 1),
      col("Node", "string", "", "", 1),
    ],
    row: (o, now) => podRow(o, now),
  },
  "discovery.k8s.io/EndpointSlice": {
    columns: [NAME, col("AddressType"), col("Ports"), col("Endpoints"), AGE],
    row: endpointSliceRow,
  },
  "/Service": {
    columns: [
      NAME,
      col("Type"),
      col("Cluster-IP"),
      col("External-IP"),
      col("Port(s)"),
      AGE,
      col("Selector", "string", "", "", 1),
    ],
    row: serviceRow,
  },
  "/Event": { columns: EVENT_COLUMNS, row: eventRow },
  "events.k8s.io/Event": {
    columns: EVENT_COLUMNS,
    row: (o, now) => eventRow(convertEvent(o, CORE_EVENT_VERSION), now),
  },
  "apps/ReplicaSet": {
    columns: [NAME, col("Desired", "integer"), col("Current", "integer"), col("Ready", "integer"), AGE],
    row: (o, now) => [
      o.metadata.name,
      o.spec?.replicas ?? 0,
      o.status?.replicas ?? 0,
      o.status?.readyReplicas ?? 0,
      age(o, now),
    ],
  },
};

export function toTable(
  t: ResourceType,
  objects: KubeObject[],
  listMeta: Record<string, unknown>,
  now: number,
  includeObject: string,
): Record<string, unknown> {
  let columns: Column[];
  let cells: (o: KubeObject) => unknown[];
  if (t.crd) {
    const printer = t.crd.printerColumns;
    columns = [NAME];
    for (const p of printer) columns.push(col(p.name, p.type, p.description ?? "", p.format ?? "", p.priority ?? 0));
    const hasAge = printer.some((p) => p.jsonPath === ".metadata.creationTimestamp");
    if (printer.length === 0 || !hasAge)
      columns.push(
        col(
          "Age",
          "date",
          "CreationTimestamp is a timestamp representing the server time when this object was created.",
        ),
      );
    cells = (o) => {
      const row: unknown[] = [o.metadata.name];
      for (const p of printer) row.push(cellValue(evalJsonPath(o, p.jsonPath), p.type, now));
      if (printer.length === 0 || !hasAge) row.push(age(o, now));
      return row;
    };
  } else if (BUILTIN_PRINTERS[`${t.group}/${t.kind}`]) {
    const printer = BUILTIN_PRINTERS[`${t.group}/${t.kind}`]!;
    columns = printer.columns;
    cells = (o) => printer.row(o, now);
  } else {
    columns = [NAME, AGE];
    cells = (o) => [o.metadata.name, age(o, now)];
  }
  return {
    kind: "Table",
    apiVersion: "meta.k8s.io/v1",
    metadata: listMeta,
    columnDefinitions: columns,
    rows: objects.map((o) => ({
      cells: cells(o),
      object:
        includeObject === "Object"
          ? o
          : includeObject === "None"
            ? undefined
            : { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: o.metadata },
    })),
  };
}
