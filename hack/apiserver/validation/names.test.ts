import { describe, it, expect } from "@jest/globals";
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue } from "./names.js";
import { validateMetadata } from "./index.js";

describe("name formats", () => {
  const cases: Array<[string, (v: string) => string[], string, string | undefined]> = [
    ["a DNS label accepts lower case and dashes", isDNS1123Label, "web-1", undefined],
    ["a DNS label rejects dots with its own message", isDNS1123Label, "a.b", "must not contain dots"],
    ["a DNS label rejects upper case", isDNS1123Label, "Web", "a lowercase RFC 1123 label must consist of"],
    ["a DNS label is at most 63 characters", isDNS1123Label, "a".repeat(64), "must be no more than 63 characters"],
    ["a DNS subdomain accepts dots", isDNS1123Subdomain, "a.b.c", undefined],
    [
      "a DNS subdomain rejects underscores",
      isDNS1123Subdomain,
      "a_b",
      "(e.g. 'example.com', regex used for validation is",
    ],
    ["a qualified name accepts a prefix", isQualifiedName, "healthprobe.io/policy", undefined],
    ["a qualified name rejects an empty prefix", isQualifiedName, "/x", "prefix part must be non-empty"],
    ["a qualified name rejects two slashes", isQualifiedName, "a/b/c", "with an optional DNS subdomain prefix and '/'"],
    [
      "a qualified name rejects a bad name part",
      isQualifiedName,
      "bad label!",
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ],
    ["a label value may be empty", isValidLabelValue, "", undefined],
    [
      "a label value may not end in a dash",
      isValidLabelValue,
      "a-",
      "a valid label must be an empty string or consist of",
    ],
  ];
  it.each(cases)("%s", (_name, check, value, fragment) => {
    const errs = check(value);
    if (fragment === undefined) expect(errs).toEqual([]);
    else expect(errs.join("\n")).toContain(fragment);
  });
});

describe("metadata checks", () => {
  const render = (errs: Array<{ field: string; message: string }>) => errs.map((e) => `${e.field}: ${e.message}`);
  it.each([
    ["a name is required", { labels: {} }, "custom", "metadata.name: Required value: name or generateName is required"],
    ["a custom resource's name is a DNS subdomain", { name: "Web" }, "custom", 'metadata.name: Invalid value: "Web"'],
    ["a Namespace's name is a DNS label", { name: "a.b" }, "Namespace", 'metadata.name: Invalid value: "a.b"'],
    [
      "another built-in's name is a path segment",
      { name: "a%b" },
      "Role.rbac.authorization.k8s.io",
      "may not contain '%'",
    ],
    [
      "a label key is a qualified name",
      { name: "a", labels: { "bad key!": "x" } },
      "Pod",
      'metadata.labels: Invalid value: "bad key!"',
    ],
    [
      "a label value may not end in a dash",
      { name: "a", labels: { app: "web-" } },
      "Pod",
      'metadata.labels: Invalid value: "web-"',
    ],
    [
      "an annotation key is a qualified name",
      { name: "a", annotations: { "a/b/c": "x" } },
      "Pod",
      "metadata.annotations",
    ],
  ])("%s", (_name, meta, kind, fragment) => {
    expect(render(validateMetadata(meta, kind, true)).join("\n")).toContain(fragment);
  });

  it("accepts a valid object, and checks the name on create only", () => {
    expect(validateMetadata({ name: "system:controller:web", labels: { app: "web" } }, "ClusterRole", true)).toEqual(
      [],
    );
    expect(validateMetadata({ name: "Web" }, "custom", false)).toEqual([]);
  });
});
