// `make demo`: the operator's main job on an embedded default. See README.md, "The demo".
//
//   npx tsx hack/demo/main.ts [--scenario tour|gate] [--headless] [--seconds N] [--plain]
//                             [--pod-cidr 127.0.10.0/24] [--dir .scratch/demo]
//
// Without --headless: a live view, redrawn in place, with keys to break and heal pods.
// --scenario tour plays the scripted tour (in the view, or narrated with --headless, exiting
// 0 only when every expected effect was observed in the API). --seconds N stops after N
// seconds; --plain prints one frame after another instead of redrawing (for logs).
// --scenario gate runs the live view over an ordinary Service whose pods carry the readiness
// gate, with a policy that drains by the pod condition (demo-gate.yaml).
import { relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { kubectlBin, repoRoot } from "../../test/support/paths.js";
import { startDemoCluster, type DemoCluster } from "./demo-cluster.js";
import { readKeys, openScreen } from "./terminal.js";
import { runTour, type TourResult } from "./tour.js";
import { assignPodKeys } from "./pod-keys.js";
import { computePodRows, orderedPods, renderView } from "./view.js";

function usage(message: string): never {
  process.stderr.write(
    `${message}\nusage: npx tsx hack/demo/main.ts [--scenario tour|gate] [--headless] [--seconds N] [--plain] [--pod-cidr CIDR] [--dir DIR]\n`,
  );
  process.exit(2);
}

let values: { headless: boolean; plain: boolean; scenario?: string; seconds?: string; "pod-cidr": string; dir: string };
try {
  values = parseArgs({
    options: {
      headless: { type: "boolean", default: false },
      plain: { type: "boolean", default: false },
      scenario: { type: "string" },
      seconds: { type: "string" },
      "pod-cidr": { type: "string", default: "127.0.10.0/24" },
      dir: { type: "string", default: resolve(repoRoot, ".scratch", "demo") },
    },
  }).values as typeof values;
} catch (err) {
  usage((err as Error).message);
}
if (values.scenario !== undefined && values.scenario !== "tour" && values.scenario !== "gate")
  usage(`--scenario: must be "tour" or "gate", got "${values.scenario}"`);
const seconds = values.seconds !== undefined ? Number(values.seconds) : undefined;
if (seconds !== undefined && (!Number.isFinite(seconds) || seconds <= 0))
  usage(`--seconds: must be a positive number, got "${values.seconds}"`);
if (!/^127\.\d{1,3}\.\d{1,3}\.0\/24$/.test(values["pod-cidr"]))
  usage(`--pod-cidr: must be a loopback /24 such as 127.0.10.0/24, got "${values["pod-cidr"]}"`);

const shown = (p: string) => {
  const r = relative(process.cwd(), p);
  return r.startsWith("..") ? p : r;
};
const out = (line: string) => process.stdout.write(`${line}\n`);

out(
  `starting the API test server, ${values.scenario === "tour" ? "the tour's" : "the demo"} pods on ${values["pod-cidr"]} and the operator…`,
);
let cluster: DemoCluster;
try {
  cluster = await startDemoCluster({
    dir: values.dir,
    podCidr: values["pod-cidr"],
    manifest: values.scenario === "gate" ? "gate" : "default",
  });
} catch (err) {
  process.stderr.write(`demo: could not start: ${describe(err)}\n`);
  process.exit(1);
}
const kubectl = shown(kubectlBin);
const kubeconfig = shown(cluster.kubeconfigPath);
const operatorLog = shown(cluster.operatorLogPath);

// Clean shutdown, whatever ends the demo: everything it started is stopped.
let restoreKeys: (() => void) | undefined;
let closeScreen: (() => void) | undefined;
let stopping: Promise<never> | undefined;
function shutdown(code: number): Promise<never> {
  stopping ??= (async () => {
    restoreKeys?.();
    closeScreen?.();
    out("stopping the operator, the demo pods and the API test server…");
    await cluster.stop().catch((err: unknown) => process.stderr.write(`demo: while stopping: ${describe(err)}\n`));
    out("demo stopped.");
    process.exit(code);
  })();
  return stopping;
}
process.on("SIGINT", () => void shutdown(130));
process.on("SIGTERM", () => void shutdown(143));
process.on("exit", () => cluster.killNow());
process.on("uncaughtException", (err) => {
  process.stderr.write(`demo: ${describe(err)}\n`);
  void shutdown(1);
});
if (seconds !== undefined)
  setTimeout(() => void shutdown(tourResult?.passed === false ? 1 : 0), seconds * 1000).unref();

let tourResult: TourResult | undefined;
const tourLines: string[] = [];

if (values.headless) {
  out(`kubeconfig: ${kubeconfig}   try: ${kubectl} --kubeconfig ${kubeconfig} get hpp -n demo -o wide`);
  out(`operator log: ${operatorLog}`);
  if (values.scenario === "tour") {
    tourResult = await runTour(cluster, { say: out });
    await shutdown(tourResult.passed ? 0 : 1);
  }
  out(`running until Ctrl-C${seconds !== undefined ? ` or ${seconds}s` : ""}.`);
} else {
  const screen = openScreen(process.stdout, !values.plain && process.stdout.isTTY === true);
  closeScreen = () => screen.close();
  // A notice about one pod names it by uid too, so it can say when that pod is gone.
  let notice: { text: string; pod?: { uid: string; name: string; key: number } } = {
    text: values.scenario === "tour" ? "the tour is running" : "press a number to break that pod's /healthz",
  };
  const tourRunning = () => values.scenario === "tour" && tourResult === undefined;
  if (values.scenario === "tour") {
    void runTour(cluster, { say: (l) => tourLines.push(l) }).then((r) => {
      tourResult = r;
      notice = { text: r.passed ? "tour passed: the keys are yours now" : `tour failed: ${r.failure}` };
    });
  }
  let rows = [] as ReturnType<typeof computePodRows>;
  let keys = new Map<string, number>();
  restoreKeys = readKeys(process.stdin, (key) => {
    if (key === "q" || key === "\x03") return void shutdown(tourResult?.passed === false ? 1 : 0);
    if (tourRunning()) return;
    if (key >= "1" && key <= "9") {
      const row = rows.find((r) => r.key === Number(key));
      if (!row) return void (notice = { text: `no pod has key ${key} now` });
      if (row.answers === "503") cluster.healPod(row.name);
      else cluster.breakPod(row.name);
      notice = {
        text: `${row.name} now answers HTTP ${row.answers === "503" ? "200" : "503"}`,
        pod: { uid: row.uid, name: row.name, key: Number(key) },
      };
    } else if (key === "a") {
      for (const r of rows) cluster.breakPod(r.name);
      notice = { text: "every pod now answers HTTP 503: watch the Service fail open" };
    } else if (key === "h") {
      for (const r of rows) cluster.healPod(r.name);
      notice = { text: "every pod now answers HTTP 200" };
    }
  });
  const startedAt = Date.now();
  const frameMs = values.plain || !process.stdout.isTTY ? 2000 : 500;
  for (;;) {
    try {
      const s = await cluster.snapshot();
      keys = assignPodKeys(
        keys,
        orderedPods(s).map((p) => ({ uid: String(p.metadata?.uid) })),
      );
      rows = computePodRows(s, { keys, startedAt });
      const tour = values.scenario === "tour" ? { lines: tourLines, running: tourRunning() } : undefined;
      const gone = notice.pod && !s.pods.some((p) => p.metadata?.uid === notice.pod!.uid);
      if (gone)
        notice = { text: `${notice.pod!.name} is gone: key ${notice.pod!.key} is free until a new pod takes it` };
      screen.draw(
        renderView(s, {
          width: screen.width(),
          startedAt,
          kubectl,
          kubeconfig,
          operatorLog,
          notice: notice.text,
          tour,
          keys,
        }),
      );
    } catch (err) {
      screen.draw([`reading the demo cluster failed: ${describe(err)}`]);
    }
    await new Promise((r) => setTimeout(r, frameMs));
  }
}

function describe(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e !== undefined && parts.length < 5; e = (e as { cause?: unknown }).cause) {
    parts.push(e instanceof Error ? e.message : String(e));
  }
  return parts.join(": ");
}
