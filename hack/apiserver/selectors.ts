// Label and field selectors with the real grammar (=, ==, !=, in, notin, exists, !exists).
import { badRequest } from "./errors.js";

type Requirement = { key: string; op: "in" | "notin"; values: string[] } | { key: string; op: "exists" | "!exists" };

export type LabelSelector = Requirement[];

/** Splits on commas that are not inside parentheses. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of text) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      parts.push(current);
      current = "";
    } else current += ch;
  }
  parts.push(current);
  return parts.map((p) => p.trim()).filter((p) => p.length > 0);
}

export function parseLabelSelector(text: string | null | undefined): LabelSelector {
  if (!text) return [];
  const reqs: Requirement[] = [];
  for (const part of splitTopLevel(text)) {
    let m = /^([^\s!=(),]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(part);
    if (m) {
      const values = m[3]!
        .split(",")
        .map((v) => v.trim())
        .filter((v) => v !== "");
      reqs.push({ key: m[1]!, op: m[2] as "in" | "notin", values });
      continue;
    }
    m = /^([^\s!=(),]+)\s*(==|!=|=)\s*([^\s!=(),]*)$/.exec(part);
    if (m) {
      reqs.push({ key: m[1]!, op: m[2] === "!=" ? "notin" : "in", values: [m[3]!] });
      continue;
    }
    m = /^!\s*([^\s!=(),]+)$/.exec(part);
    if (m) {
      reqs.push({ key: m[1]!, op: "!exists" });
      continue;
    }
    m = /^([^\s!=(),]+)$/.exec(part);
    if (m) {
      reqs.push({ key: m[1]!, op: "exists" });
      continue;
    }
    throw badRequest(`unable to parse requirement: found '${part}', expected: in, notin, =, ==, !=, gt, lt`);
  }
  return reqs;
}

export function matchesLabels(selector: LabelSelector, labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  return selector.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    switch (r.op) {
      case "exists":
        return has;
      case "!exists":
        return !has;
      case "in":
        return has && r.values.includes(l[r.key]!);
      case "notin":
        return !has || !r.values.includes(l[r.key]!);
    }
  });
}

/**
 * metav1.LabelSelectorAsSelector + Matches, the one matcher of the server and its controllers:
 * a null selector selects nothing, and an unknown operator (which the real conversion refuses)
 * matches nothing.
 */
export function matchesLabelSelectorObject(
  selector: Record<string, any> | undefined | null,
  labels: Record<string, string> | undefined,
): boolean {
  if (!selector || typeof selector !== "object") return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries((selector.matchLabels ?? {}) as Record<string, string>))
    if (l[k] !== v) return false;
  for (const e of (selector.matchExpressions ?? []) as Array<{ key: string; operator: string; values?: string[] }>) {
    const has = Object.prototype.hasOwnProperty.call(l, e.key);
    const values = e.values ?? [];
    switch (e.operator) {
      case "In":
        if (!has || !values.includes(l[e.key]!)) return false;
        break;
      case "NotIn":
        if (has && values.includes(l[e.key]!)) return false;
        break;
      case "Exists":
        if (!has) return false;
        break;
      case "DoesNotExist":
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

export interface FieldRequirement {
  field: string;
  op: "=" | "!=";
  value: string;
}

export function parseFieldSelector(
  text: string | null | undefined,
  allowed: string[],
  qualifiedResource: string,
): FieldRequirement[] {
  if (!text) return [];
  const reqs: FieldRequirement[] = [];
  for (const part of splitTopLevel(text)) {
    const m = /^([^=!]+?)\s*(==|!=|=)\s*(.*)$/.exec(part);
    if (!m) throw badRequest(`invalid selector: '${text}'; can't understand '${part}'`);
    const field = m[1]!.trim();
    if (field !== "metadata.name" && field !== "metadata.namespace" && !allowed.includes(field)) {
      throw badRequest(`field label not supported: ${field}`);
    }
    void qualifiedResource;
    reqs.push({ field, op: m[2] === "!=" ? "!=" : "=", value: m[3]!.trim() });
  }
  return reqs;
}

function fieldValue(obj: Record<string, any>, field: string): string {
  // Core Events' "source" is source.component, else reportingComponent (events.k8s.io writers set only that),
  // as the real event strategy's ToSelectableFields has it.
  if (field === "source") return String(obj.source?.component || obj.reportingComponent || "");
  let cur: any = obj;
  for (const seg of field.split(".")) {
    if (cur === null || typeof cur !== "object") return "";
    cur = cur[seg];
  }
  if (cur === undefined || cur === null) return "";
  return String(cur);
}

export function matchesFields(reqs: FieldRequirement[], obj: Record<string, any>): boolean {
  return reqs.every((r) => {
    const v = fieldValue(obj, r.field);
    return r.op === "=" ? v === r.value : v !== r.value;
  });
}
