import { describe, it, expect } from "@jest/globals";
import {
  isConfigMapKey,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  nameIsDNSSubdomain,
} from "./names.js";
import { parseIP, validateEndpointIP } from "./ip.js";

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
    [
      "a config key rejects slashes",
      isConfigMapKey,
      "a/b",
      "a valid config key must consist of alphanumeric characters",
    ],
    ["a config key may not be '..'", isConfigMapKey, "..", "must not be '..'"],
  ];
  it.each(cases)("%s", (_name, check, value, fragment) => {
    const errs = check(value);
    if (fragment === undefined) expect(errs).toEqual([]);
    else expect(errs.join("\n")).toContain(fragment);
  });

  it("allows a trailing dash in generateName but not in a name", () => {
    expect(nameIsDNSSubdomain("web-", true)).toEqual([]);
    expect(nameIsDNSSubdomain("web-", false)).not.toEqual([]);
  });
});

describe("IP parsing with Go semantics", () => {
  it.each([
    ["10.0.0.1", 4],
    ["010.000.000.001", 4],
    ["::ffff:10.0.0.1", 4],
    ["2001:db8::1", 16],
  ])("parses %s into %i bytes", (text, len) => {
    expect(parseIP(text)?.bytes.length).toBe(len);
  });

  it.each(["256.0.0.1", "1.2.3", "abc", "1.2.3.4.5", "fe80::1%eth0"])("rejects %s", (text) => {
    expect(parseIP(text)).toBeUndefined();
  });

  it.each([
    ["127.0.10.5", "may not be in the loopback range (127.0.0.0/8, ::1/128)"],
    ["::1", "may not be in the loopback range"],
    ["169.254.1.1", "may not be in the link-local range (169.254.0.0/16, fe80::/10)"],
    ["fe80::1", "may not be in the link-local range"],
    ["224.0.0.5", "may not be in the link-local multicast range"],
    ["0.0.0.0", "may not be unspecified (0.0.0.0)"],
  ])("an endpoint may not use %s", (ip, fragment) => {
    expect(
      validateEndpointIP("x", ip)
        .map((e) => e.message)
        .join("\n"),
    ).toContain(fragment);
  });

  it("an endpoint may use an ordinary private address", () => {
    expect(validateEndpointIP("x", "10.1.2.3")).toEqual([]);
  });
});
