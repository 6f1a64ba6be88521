// The set-up and tear-down every integration test file shares: a test cluster with its own pod
// range, a pod farm, and, at the end, the operators stopped (their logs printed with DUMP_LOGS=1)
// before the farm and the cluster.
import { startCluster, type TestCluster } from "./cluster.js";
import { PodFarm } from "../../support/pod-farm.js";
import type { TestOperator } from "./operator.js";

export interface Bed {
  cluster: TestCluster;
  farm: PodFarm;
}

export async function openBed(opts: Parameters<typeof startCluster>[0] = {}): Promise<Bed> {
  return { cluster: await startCluster(opts), farm: new PodFarm() };
}

export async function closeBed(bed: Partial<Bed>, operators: ReadonlyArray<TestOperator | undefined>): Promise<void> {
  for (const op of operators) {
    if (!op) continue;
    if (process.env.DUMP_LOGS) console.log(JSON.stringify(op.logs.slice(-60), null, 1));
    await op.stop();
  }
  await bed.farm?.close();
  await bed.cluster?.stop();
}
