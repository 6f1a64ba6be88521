// Wires the readiness-gate admission webhook: the HTTPS listener, the pod admission handler over
// the policy cache, and the certificate keeper on a queue of its own. Every replica runs all of
// it, leader or not: the handler only reads the cache, and the certificate writes are conditional.
import { Counter } from "prom-client";
import type { KubeClient } from "./adapters/kube-client.js";
import { kubeWebhookCertificateStore } from "./adapters/webhook-certificate-store.js";
import type { ObjectCache, PolicyObject } from "./controllers/kube-objects.js";
import { handlePodAdmission } from "./controllers/pod-gate-webhook.js";
import { WebhookCertificate } from "./controllers/webhook-certificate.js";
import type { Clock } from "./runtime/clock.js";
import type { OperatorConfig } from "./runtime/config.js";
import type { Logger } from "./runtime/logger.js";
import { controllerMetrics, queueMetrics, type OperatorMetrics } from "./runtime/metrics.js";
import { startWebhookServer } from "./runtime/webhook-server.js";
import { WorkQueue, runController } from "./runtime/work-queue.js";

const WEBHOOK_CERTIFICATE_CONTROLLER = "webhook-certificate";
const CERTIFICATE_KEY = "webhook-certificate";

export interface RunningWebhook {
  port: number;
  stop(): Promise<void>;
}

export interface WebhookDeps {
  client: KubeClient;
  policies: ObjectCache<PolicyObject>;
  synced: () => boolean;
  logger: Logger;
  clock: Clock;
  metrics: OperatorMetrics;
  /** Certificate lifetimes and resync (tests shorten them). */
  certificate?: { caLifetimeMs?: number; leafLifetimeMs?: number; resyncMs?: number };
}

/** The host names the serving certificate must carry. */
export function webhookHosts(config: OperatorConfig): string[] {
  return [`${config.webhook.serviceName}.${config.operatorNamespace}.svc`, ...config.webhook.extraSans];
}

/** Starts the webhook when --webhook-bind-address is set; undefined otherwise. */
export async function startWebhook(config: OperatorConfig, d: WebhookDeps): Promise<RunningWebhook | undefined> {
  const w = config.webhook;
  if (w.bindAddress.disabled) return undefined;
  const logger = d.logger.child({ component: "webhook" });
  const admissions = new Counter({
    name: "healthprobe_webhook_admissions_total",
    help: "Pod admission reviews answered, by outcome: patched (gate added), skipped, error (allowed unchanged).",
    labelNames: ["outcome"] as const,
    registers: [d.metrics.registry],
  });
  const server = await startWebhookServer({
    address: w.bindAddress,
    handler: (body) =>
      handlePodAdmission(body, {
        policies: d.policies,
        synced: d.synced,
        logger,
        onOutcome: (outcome) => admissions.inc({ outcome }),
      }),
    onError: (err) => logger.error({ err }, "webhook request failed"),
  });
  const keeper = new WebhookCertificate({
    store: kubeWebhookCertificateStore(d.client, {
      namespace: config.operatorNamespace,
      secretName: w.secretName,
      configurationName: w.configurationName,
    }),
    hosts: webhookHosts(config),
    manage: w.manageCertificate,
    keepCaBundle: w.configurationName !== "",
    serve: (pair) => server.setCertificate(pair),
    clock: d.clock,
    logger,
    ...d.certificate,
  });
  const queue = new WorkQueue({ clock: d.clock, metrics: queueMetrics(d.metrics, WEBHOOK_CERTIFICATE_CONTROLLER) });
  const controller = runController({
    queue,
    workers: 1,
    reconcile: () => keeper.reconcile(),
    logger,
    metrics: controllerMetrics(d.metrics, WEBHOOK_CERTIFICATE_CONTROLLER),
    clock: d.clock,
  });
  queue.add(CERTIFICATE_KEY);
  logger.info(
    { port: server.port, hosts: webhookHosts(config), manageCertificate: w.manageCertificate },
    "admission webhook listening",
  );
  return {
    port: server.port,
    async stop() {
      await controller.stop();
      await server.close();
    },
  };
}
