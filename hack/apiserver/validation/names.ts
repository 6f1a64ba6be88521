// Name and key formats, with the real messages (k8s.io/apimachinery/pkg/util/validation and
// pkg/api/validation/path). Each function returns the list of messages; empty means valid.

// The formats as Kubernetes quotes them in errors, unanchored (neither has a top-level alternation).
const DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_LABEL = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_SUBDOMAIN = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);

/** Lengths are in bytes, as Go's len() counts them. */
const byteLength = (s: string): number => new TextEncoder().encode(s).length;
const tooLong = (n: number): string => `must be no more than ${n} characters`;
const regexError = (msg: string, fmt: string, ...examples: string[]): string =>
  `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(" or ")}regex used for validation is '${fmt}')`;

const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const KEY_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const VALUE_FMT = `(${KEY_FMT})?`;
const VALUE_MSG = `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`;

export function isDNS1123Label(value: string): string[] {
  const errs = byteLength(value) > 63 ? [tooLong(63)] : [];
  // A valid subdomain that is not a valid label can only be failing on dots.
  if (!DNS1123_LABEL.test(value))
    errs.push(
      DNS1123_SUBDOMAIN.test(value)
        ? "must not contain dots"
        : regexError(LABEL_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc"),
    );
  return errs;
}

export function isDNS1123Subdomain(value: string): string[] {
  const errs = byteLength(value) > 253 ? [tooLong(253)] : [];
  if (!DNS1123_SUBDOMAIN.test(value)) errs.push(regexError(SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"));
  return errs;
}

/** A "qualified name" (label key): an optional DNS subdomain prefix and '/', then a name part. */
export function isQualifiedName(value: string): string[] {
  const parts = value.split("/");
  const keyError = regexError(KEY_MSG, KEY_FMT, "MyName", "my.name", "123-abc");
  if (parts.length > 2)
    return [`a valid label key ${keyError} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  const name = parts.pop()!;
  const prefix = parts[0];
  const errs =
    prefix === undefined
      ? []
      : prefix === ""
        ? ["prefix part must be non-empty"]
        : isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`);
  if (name === "") errs.push("name part must be non-empty");
  else if (byteLength(name) > 63) errs.push(`name part ${tooLong(63)}`);
  if (!new RegExp(`^(?:${KEY_FMT})$`).test(name)) errs.push(`name part ${keyError}`);
  return errs;
}

export function isValidLabelValue(value: string): string[] {
  const errs = byteLength(value) > 63 ? [tooLong(63)] : [];
  if (!new RegExp(`^(?:${VALUE_FMT})$`).test(value))
    errs.push(regexError(VALUE_MSG, VALUE_FMT, "MyValue", "my_value", "12345"));
  return errs;
}

/** path.IsValidPathSegmentName: what every object name must satisfy to live in a URL. */
export function isValidPathSegmentName(name: string): string[] {
  if (name === "." || name === "..") return [`may not be '${name}'`];
  return ["/", "%"].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`);
}
