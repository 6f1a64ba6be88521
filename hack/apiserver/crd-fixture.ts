// A small CRD for the server's own tests: schema constraints, defaults, CEL rules, printer columns, status.
export const widgetCrd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.example.com" },
  spec: {
    group: "example.com",
    scope: "Namespaced",
    names: {
      plural: "widgets",
      singular: "widget",
      kind: "Widget",
      listKind: "WidgetList",
      shortNames: ["wd"],
      categories: ["gadgets"],
    },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        subresources: { status: {} },
        additionalPrinterColumns: [
          { name: "Size", type: "integer", jsonPath: ".spec.size" },
          { name: "Color", type: "string", jsonPath: ".spec.color", description: "The widget's color." },
          { name: "Ready", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
          { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
        ],
        schema: {
          openAPIV3Schema: {
            type: "object",
            description: "A Widget is a test gadget.",
            properties: {
              spec: {
                type: "object",
                description: "What the widget should be.",
                required: ["size"],
                properties: {
                  size: { type: "integer", minimum: 1, maximum: 60, description: "How big, 1-60." },
                  color: {
                    type: "string",
                    enum: ["red", "green", "blue"],
                    default: "red",
                    description: "Color of the widget.",
                  },
                  name: { type: "string", maxLength: 8, pattern: "^[a-z]+$" },
                  path: { type: "string" },
                  minReplicas: { type: "integer", default: 1 },
                  maxReplicas: { type: "integer", default: 3 },
                  tags: { type: "array", maxItems: 2, items: { type: "string" } },
                  probe: {
                    type: "object",
                    description: "How to probe the widget.",
                    properties: {
                      port: { type: "integer", description: "Port to probe." },
                      timeoutSeconds: { type: "integer", default: 5, description: "Probe timeout." },
                    },
                  },
                  extra: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
                  immutable: {
                    type: "string",
                  },
                },
              },
              status: {
                type: "object",
                properties: {
                  observedGeneration: { type: "integer" },
                  conditions: {
                    type: "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["type"],
                    items: {
                      type: "object",
                      required: ["type", "status"],
                      properties: { type: { type: "string" }, status: { type: "string" }, message: { type: "string" } },
                    },
                  },
                },
              },
            },
          },
        },
      },
    ],
  },
};

export function aWidget(
  name: string,
  spec: Record<string, unknown> = { size: 3 },
  namespace = "default",
): Record<string, any> {
  return { apiVersion: "example.com/v1", kind: "Widget", metadata: { name, namespace }, spec };
}
