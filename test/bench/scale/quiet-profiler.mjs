// Preloaded into each bench operator with HEALTHPROBE_BENCH_CPU_PROF=<dir> (node --import):
// the first SIGUSR2 starts a V8 CPU profile and counts garbage collection, the second writes
// both to <dir>, so the quiet window alone is profiled, not the cold start before it.
import { Session } from "node:inspector";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { PerformanceObserver } from "node:perf_hooks";

const dir = process.env.HEALTHPROBE_BENCH_CPU_PROF;
let session;
let gc;
let observer;

process.on("SIGUSR2", () => {
  if (!session) {
    session = new Session();
    session.connect();
    gc = { count: 0, ms: 0, byKind: {} };
    observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        gc.count++;
        gc.ms += e.duration;
        const kind = String(e.detail?.kind ?? "unknown");
        gc.byKind[kind] = (gc.byKind[kind] ?? 0) + e.duration;
      }
    });
    observer.observe({ entryTypes: ["gc"] });
    session.post("Profiler.enable", () => session.post("Profiler.start"));
    return;
  }
  const done = session;
  session = undefined;
  observer.disconnect();
  done.post("Profiler.stop", (err, result) => {
    if (!err) writeFileSync(join(dir, `quiet-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    writeFileSync(join(dir, `quiet-${process.pid}.gc.json`), JSON.stringify(gc));
    done.disconnect();
  });
});
