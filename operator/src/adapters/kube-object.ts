// The client library's object type, re-exported so the composition root needs no client import.
export type { KubernetesObject } from "@kubernetes/client-node";
