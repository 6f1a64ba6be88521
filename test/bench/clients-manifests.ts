// The three setups of the `clients` benchmark: 3 workload pods behind Service web, with the same
// probe settings, drained by the operator's EndpointSlice method, its ReadinessGate method, or a
// plain kubelet readiness probe.
import { WORKLOAD_IMAGE } from "../support/workload-control.js";

export const VARIANTS = ["endpointslice", "readinessgate", "readinessprobe"] as const;
export type Variant = (typeof VARIANTS)[number];

const policy = (ns: string, method: "EndpointSlice" | "ReadinessGate"): string => `
---
apiVersion: healthprobe.io/v1alpha1
kind: HealthProbePolicy
metadata: {name: web, namespace: ${ns}}
spec:
  serviceName: web
  selector: {matchLabels: {app: web}}
  probe: {type: HTTP, port: http, path: /healthz, periodSeconds: 1, timeoutSeconds: 1}
  evaluation: {failureThreshold: 2, successThreshold: 1}
  drain: {enabled: true, method: ${method}, maxUnhealthyPercent: 50}
  replacement: {enabled: false}
`;

export function variantManifests(variant: Variant, ns: string): string {
  const gate = variant === "readinessgate" ? "      readinessGates: [{conditionType: healthprobe.io/ready}]\n" : "";
  const probe =
    variant === "readinessprobe"
      ? "          readinessProbe: {httpGet: {path: /healthz, port: 8080}, periodSeconds: 1, timeoutSeconds: 1, failureThreshold: 2, successThreshold: 1}\n"
      : "";
  // The EndpointSlice method owns a selector-less Service's slices; the others use an ordinary one.
  const selector = variant === "endpointslice" ? "" : "  selector: {app: web}\n";
  return `
apiVersion: v1
kind: Namespace
metadata: {name: ${ns}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${ns}}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      automountServiceAccountToken: false
${gate}      containers:
        - name: web
          image: ${WORKLOAD_IMAGE}
          imagePullPolicy: Never
          ports: [{name: http, containerPort: 8080}]
          env: [{name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
${probe}---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: ${ns}}
spec:
${selector}  ports: [{name: http, port: 80, targetPort: 8080}]
${variant === "readinessprobe" ? "" : policy(ns, variant === "endpointslice" ? "EndpointSlice" : "ReadinessGate")}`;
}
