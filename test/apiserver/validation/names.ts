// Name and key formats. Rules and messages from kubernetes/kubernetes
// staging/src/k8s.io/apimachinery/pkg/util/validation/validation.go,
// staging/src/k8s.io/apimachinery/pkg/api/validate/content/kube.go (label keys and values),
// staging/src/k8s.io/apimachinery/pkg/api/validation/generic.go (name functions) and
// staging/src/k8s.io/apimachinery/pkg/api/validation/path/name.go (path segment names).
// Each function returns the real list of messages; empty means valid.
import {
  DNS1123_LABEL,
  DNS1123_LABEL_FMT,
  DNS1123_SUBDOMAIN,
  DNS1123_SUBDOMAIN_FMT,
} from "../../../operator/src/api/dns-names.js";

/** Lengths are in bytes, as Go's len() counts them. */
export const byteLength = (s: string): number => new TextEncoder().encode(s).length;

export function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let out = `${msg} (e.g. `;
  examples.forEach((ex, i) => {
    if (i > 0) out += " or ";
    out += `'${ex}', `;
  });
  return `${out}regex used for validation is '${fmt}')`;
}

export const emptyError = (): string => "must be non-empty";
export const inclusiveRangeError = (lo: number, hi: number): string => `must be between ${lo} and ${hi}, inclusive`;

const dns1123LabelFmt = DNS1123_LABEL_FMT;
const dns1123LabelErrMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const dns1123SubdomainFmt = DNS1123_SUBDOMAIN_FMT;
const dns1123SubdomainErrMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const anchored = (fmt: string): RegExp => new RegExp(`^(?:${fmt})$`);
const dns1123LabelRe = DNS1123_LABEL;
const dns1123SubdomainRe = DNS1123_SUBDOMAIN;

export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!dns1123LabelRe.test(value)) {
    // A valid subdomain that is not a valid label can only be failing on dots.
    if (dns1123SubdomainRe.test(value)) errs.push("must not contain dots");
    else errs.push(regexError(dns1123LabelErrMsg, dns1123LabelFmt, "my-name", "123-abc"));
  }
  return errs;
}

export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 253) errs.push(maxLenError(253));
  if (!dns1123SubdomainRe.test(value))
    errs.push(regexError(dns1123SubdomainErrMsg, dns1123SubdomainFmt, "example.com"));
  return errs;
}

const labelKeyFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const labelKeyErrMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const labelKeyRe = anchored(labelKeyFmt);

/** A "qualified name" (label key): optional DNS subdomain prefix and '/', then a name part. */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split("/");
  let name: string;
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push(`prefix part ${emptyError()}`);
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a valid label key ${regexError(labelKeyErrMsg, labelKeyFmt, "MyName", "my.name", "123-abc")} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push(`name part ${emptyError()}`);
  else if (byteLength(name) > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!labelKeyRe.test(name))
    errs.push(`name part ${regexError(labelKeyErrMsg, labelKeyFmt, "MyName", "my.name", "123-abc")}`);
  return errs;
}

const labelValueFmt = `(${labelKeyFmt})?`;
const labelValueErrMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const labelValueRe = anchored(labelValueFmt);

export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!labelValueRe.test(value)) errs.push(regexError(labelValueErrMsg, labelValueFmt, "MyValue", "my_value", "12345"));
  return errs;
}

const configMapKeyFmt = "[-._a-zA-Z0-9]+";
const configMapKeyRe = anchored(configMapKeyFmt);

export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 253) errs.push(maxLenError(253));
  if (!configMapKeyRe.test(value)) {
    errs.push(
      regexError(
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
        configMapKeyFmt,
        "key.name",
        "KEY_NAME",
        "key-name",
      ),
    );
  }
  if (value === ".") errs.push("must not be '.'");
  else if (value === "..") errs.push("must not be '..'");
  else if (value.startsWith("..")) errs.push("must not start with '..'");
  return errs;
}

/** path.IsValidPathSegmentName: what every object name must satisfy to live in a URL. */
export function isValidPathSegmentName(name: string): string[] {
  for (const illegal of [".", ".."]) if (name === illegal) return [`may not be '${illegal}'`];
  const errs: string[] = [];
  for (const illegal of ["/", "%"]) if (name.includes(illegal)) errs.push(`may not contain '${illegal}'`);
  return errs;
}

/** A ValidateNameFunc: prefix is true for generateName, whose trailing dash is masked. */
export type NameFn = (name: string, prefix: boolean) => string[];

const maskTrailingDash = (name: string): string => (name.endsWith("-") ? `${name.slice(0, -2)}a` : name);
export const nameIsDNSSubdomain: NameFn = (name, prefix) => isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
export const nameIsPathSegment: NameFn = (name, prefix) =>
  prefix
    ? ["/", "%"].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`)
    : isValidPathSegmentName(name);
