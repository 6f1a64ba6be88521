// The servers every probe type is judged against in tests: a TCP listener that accepts, a
// port that refuses, a listener that never answers, and a gRPC health server whose services
// answer SERVING ("" and shop.Cart), NOT_SERVING (shop.Down), SERVICE_UNKNOWN (shop.Gone) and
// never (shop.Hang).
import { startGrpcHealthServer, type GrpcHealthServer } from "./grpc-health-server.js";
import { refusedPort, startAcceptingListener, startSilentListener, type Target } from "./tcp-targets.js";

export interface ProbeTypeTargets {
  accepting: Awaited<ReturnType<typeof startAcceptingListener>>;
  silent: Target;
  refused: number;
  grpc: GrpcHealthServer;
  close(): Promise<void>;
}

export async function startProbeTypeTargets(): Promise<ProbeTypeTargets> {
  const accepting = await startAcceptingListener();
  const silent = await startSilentListener();
  const refused = await refusedPort();
  const grpc = await startGrpcHealthServer();
  grpc.set("shop.Cart", "SERVING");
  grpc.set("shop.Down", "NOT_SERVING");
  grpc.set("shop.Gone", "SERVICE_UNKNOWN");
  grpc.set("shop.Hang", "hang");
  return {
    accepting,
    silent,
    refused,
    grpc,
    close: async () => {
      await accepting.close();
      await silent.close();
      await grpc.close();
    },
  };
}
