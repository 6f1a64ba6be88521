// The set-up and tear-down every integration test file shares: a test cluster with its own pod
// range, a pod farm, an offset clock for operators that need windows to pass on demand, and, at
// the end, the operators stopped (their logs printed with DUMP_LOGS=1) before the farm and the
// cluster.
import { afterAll, afterEach, beforeAll, beforeEach, describe, it } from "@jest/globals";
import { clusterKind } from "../../support/cluster-kind.js";
import { OffsetClock } from "../../../operator/src/runtime/testing/offset-clock.js";
import { aPolicy, aService, startCluster, type PolicyOptions, type TestCluster } from "./cluster.js";
import { servedPods } from "./queries.js";
import type { Farm } from "../../support/pod-farm.js";
import { startTestOperator, type TestOperator } from "./operator.js";

export interface Bed {
  cluster: TestCluster;
  farm: Farm;
}

/**
 * `it` on the API test server and `it.skip` on the real control plane: for a test of what only the
 * test server can do (inject faults, fill pod logs, read its store) or of its kubelet stand-in's
 * ways. Each use says why beside it.
 */
export const itOnTestServer = clusterKind === "test-server" ? it : it.skip;
export const describeOnTestServer = clusterKind === "test-server" ? describe : describe.skip;

type ClusterOptions = Parameters<typeof startCluster>[0];
type OperatorOptions = Parameters<typeof startTestOperator>[2];

async function openBed(opts: ClusterOptions = {}): Promise<Bed> {
  const cluster = await startCluster(opts);
  return { cluster, farm: cluster.newFarm() };
}

async function closeBed(bed: Partial<Bed>, operators: ReadonlyArray<TestOperator | undefined>): Promise<void> {
  for (const op of operators) {
    if (!op) continue;
    if (process.env.DUMP_LOGS) console.log(JSON.stringify(op.logs.slice(-60), null, 1));
    await op.stop();
  }
  await bed.farm?.close();
  await bed.cluster?.stop();
}

/** A test file's bed: what `useBed()` opens before each test (or once for the file) and closes after. */
export interface TestBed extends Bed {
  /** Fresh with each bed; operators run on it only when a test passes it (`{ clock: bed.clock }`). */
  readonly clock: OffsetClock;
  /** The operator started last and not stopped since; throws when there is none. */
  readonly operator: TestOperator;
  /** The same, or undefined when there is none. */
  readonly running: TestOperator | undefined;
  /** Starts the operator in-process against this bed's cluster; the bed stops it at the end. */
  startOperator(flags?: string[], opts?: OperatorOptions): Promise<TestOperator>;
  /** Stops an operator (by default the one started last) before the end of the test. */
  stopOperator(op?: TestOperator): Promise<void>;
}

export interface BedOptions extends NonNullable<ClusterOptions> {
  /** "test" (default): a bed per test, in beforeEach/afterEach; "file": one for the file, in beforeAll/afterAll. */
  per?: "test" | "file";
  /** With DUMP_LOGS=1: what else to print before the bed closes, beside the operators' logs. */
  dump?: (bed: Bed) => Promise<unknown>;
}

/** Registers the bed's set-up and tear-down with jest, and returns the bed the tests use. */
export function useBed(opts: BedOptions = {}): TestBed {
  const { per = "test", dump, ...clusterOpts } = opts;
  let opened: (Bed & { clock: OffsetClock }) | undefined;
  const operators: TestOperator[] = [];
  const current = () => {
    if (!opened) throw new Error("the test bed is used outside a test, or its set-up failed");
    return opened;
  };
  (per === "file" ? beforeAll : beforeEach)(async () => {
    opened = { ...(await openBed(clusterOpts)), clock: new OffsetClock() };
  });
  (per === "file" ? afterAll : afterEach)(async () => {
    if (process.env.DUMP_LOGS && dump && opened) console.log(JSON.stringify(await dump(opened), null, 1));
    await closeBed(opened ?? {}, operators.splice(0));
    opened = undefined;
  });
  return {
    get cluster() {
      return current().cluster;
    },
    get farm() {
      return current().farm;
    },
    get clock() {
      return current().clock;
    },
    get operator() {
      const op = operators.at(-1);
      if (!op) throw new Error("no operator is running in this test bed");
      return op;
    },
    get running() {
      return operators.at(-1);
    },
    async startOperator(flags = [], operatorOpts = {}) {
      const op = await startTestOperator(current().cluster.server, flags, operatorOpts);
      operators.push(op);
      return op;
    },
    async stopOperator(op = operators.at(-1)) {
      if (!op) return;
      const i = operators.indexOf(op);
      if (i >= 0) operators.splice(i, 1);
      await op.stop();
    },
  };
}

/** A selector-less Service "web", bare served pods, a policy over them and the operator: the start of most scenarios. */
export async function givenPolicyOver(
  bed: TestBed,
  names: readonly string[],
  policy: PolicyOptions = {},
): Promise<Map<string, string>> {
  await bed.cluster.create(aService("web", bed.cluster.namespace));
  const ips = await servedPods(bed, names);
  await bed.cluster.create(aPolicy("web", bed.cluster.namespace, policy));
  await bed.startOperator();
  return ips;
}
