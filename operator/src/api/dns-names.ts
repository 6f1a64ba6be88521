// The DNS-1123 name formats Kubernetes validates names against (k8s.io/apimachinery
// pkg/util/validation), in one place for the operator's schemas and the API test server.

/** A lowercase RFC 1123 label, unanchored (as Kubernetes quotes it in errors; neither format has a top-level alternation, so `^fmt$` anchors it). */
export const DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
/** A lowercase RFC 1123 subdomain: labels joined by dots, unanchored. */
export const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;

export const DNS1123_LABEL = new RegExp(`^${DNS1123_LABEL_FMT}$`);
export const DNS1123_SUBDOMAIN = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);

/** An RFC 1035 label (a Service name): a lowercase letter first. */
export const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
