// Informers that keep going: client-node's informer stops on any error other than an expired
// watch, so restart it with backoff until stopped. The AbortError fired by stop() is expected.
import { makeInformer, type Informer, type KubeConfig, type KubernetesObject, type ListPromise, type ObjectCache } from "@kubernetes/client-node";

export interface RunningInformer<T extends KubernetesObject> {
  informer: Informer<T> & ObjectCache<T>;
  stop(): Promise<void>;
}

export async function startInformer<T extends KubernetesObject>(
  kc: KubeConfig,
  path: string,
  list: ListPromise<T>,
  onError: (err: unknown) => void,
  setup: (informer: Informer<T> & ObjectCache<T>) => void,
): Promise<RunningInformer<T>> {
  const informer = makeInformer<T>(kc, path, list);
  let stopped = false;
  let failures = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const restart = (): void => {
    if (stopped) return;
    const delay = Math.min(20 * 2 ** failures, 2000);
    failures++;
    timer = setTimeout(() => {
      timer = undefined;
      if (!stopped) informer.start().catch((err) => {
        onError(new Error(`restarting informer for ${path}`, { cause: err }));
        restart();
      });
    }, delay);
  };
  informer.on("error", (err: unknown) => {
    if (stopped && (err as { name?: string } | undefined)?.name === "AbortError") return;
    if (stopped) return;
    onError(new Error(`informer for ${path} failed`, { cause: err }));
    restart();
  });
  informer.on("connect", () => {
    failures = 0;
  });
  setup(informer);
  // Retry the first list too: the server may still be warming up.
  for (;;) {
    try {
      await informer.start();
      break;
    } catch (err) {
      failures++;
      if (failures > 20) throw new Error(`starting informer for ${path}`, { cause: err });
      await new Promise((r) => setTimeout(r, Math.min(20 * 2 ** failures, 1000)));
    }
  }
  return {
    informer,
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await informer.stop();
    },
  };
}
