// A compact CEL interpreter covering what CRD validation rules commonly use: field access, has(), size(),
// comparisons, logic, arithmetic, ternaries, list/map literals, `in`, string functions and the
// all/exists/exists_one/map/filter macros. Numbers are JS numbers; int division truncates.
type Value = unknown;

type Node =
  | { t: "lit"; v: Value }
  | { t: "id"; name: string }
  | { t: "sel"; obj: Node; field: string }
  | { t: "idx"; obj: Node; index: Node }
  | { t: "call"; fn: string; target?: Node; args: Node[] }
  | { t: "un"; op: string; x: Node }
  | { t: "bin"; op: string; l: Node; r: Node }
  | { t: "cond"; c: Node; a: Node; b: Node }
  | { t: "list"; items: Node[] }
  | { t: "map"; entries: Array<[Node, Node]> };

interface Token {
  k: "num" | "str" | "id" | "op" | "eof";
  v: string;
  n?: number;
}

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const rest = src.slice(i);
    let m = /^(0x[0-9a-fA-F]+|\d+\.\d*(?:[eE][+-]?\d+)?|\d*\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+)[uU]?/.exec(rest);
    if (m) {
      out.push({ k: "num", v: m[0], n: Number(m[1]) });
      i += m[0].length;
      continue;
    }
    m = /^[rR]?('''|"""|'|")/.exec(rest);
    if (m) {
      const raw = m[0].length > m[1]!.length;
      const q = m[1]!;
      let j = i + m[0].length;
      let s = "";
      while (j < src.length && src.slice(j, j + q.length) !== q) {
        if (!raw && src[j] === "\\") {
          const e = src[j + 1];
          s += e === "n" ? "\n" : e === "t" ? "\t" : e === "r" ? "\r" : e === "\\" ? "\\" : (e ?? "");
          j += 2;
        } else s += src[j++];
      }
      if (j >= src.length) throw new Error("unterminated string literal");
      out.push({ k: "str", v: s });
      i = j + q.length;
      continue;
    }
    m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest);
    if (m) {
      out.push({ k: "id", v: m[0] });
      i += m[0].length;
      continue;
    }
    m = /^(\|\||&&|==|!=|<=|>=|[<>!+\-*/%?:.,()[\]{}])/.exec(rest);
    if (m) {
      out.push({ k: "op", v: m[0] });
      i += m[0].length;
      continue;
    }
    throw new Error(`Syntax error: token recognition error at: '${c}'`);
  }
  out.push({ k: "eof", v: "" });
  return out;
}

class Parser {
  private pos = 0;
  constructor(private readonly toks: Token[]) {}
  private peek(): Token {
    return this.toks[this.pos]!;
  }
  private next(): Token {
    return this.toks[this.pos++]!;
  }
  private accept(v: string): boolean {
    const t = this.peek();
    if ((t.k === "op" || t.k === "id") && t.v === v) {
      this.pos++;
      return true;
    }
    return false;
  }
  private expect(v: string): void {
    if (!this.accept(v)) throw new Error(`Syntax error: expected '${v}' but found '${this.peek().v}'`);
  }
  parseAll(): Node {
    const n = this.expr();
    if (this.peek().k !== "eof") throw new Error(`Syntax error: unexpected '${this.peek().v}'`);
    return n;
  }
  private expr(): Node {
    const c = this.or();
    if (this.accept("?")) {
      const a = this.or();
      this.expect(":");
      const b = this.expr();
      return { t: "cond", c, a, b };
    }
    return c;
  }
  private or(): Node {
    let l = this.and();
    while (this.accept("||")) l = { t: "bin", op: "||", l, r: this.and() };
    return l;
  }
  private and(): Node {
    let l = this.rel();
    while (this.accept("&&")) l = { t: "bin", op: "&&", l, r: this.rel() };
    return l;
  }
  private rel(): Node {
    let l = this.add();
    for (;;) {
      const t = this.peek();
      if ((t.k === "op" && ["==", "!=", "<", "<=", ">", ">="].includes(t.v)) || (t.k === "id" && t.v === "in")) {
        this.next();
        l = { t: "bin", op: t.v, l, r: this.add() };
      } else return l;
    }
  }
  private add(): Node {
    let l = this.mul();
    for (;;) {
      const t = this.peek();
      if (t.k === "op" && (t.v === "+" || t.v === "-")) {
        this.next();
        l = { t: "bin", op: t.v, l, r: this.mul() };
      } else return l;
    }
  }
  private mul(): Node {
    let l = this.unary();
    for (;;) {
      const t = this.peek();
      if (t.k === "op" && (t.v === "*" || t.v === "/" || t.v === "%")) {
        this.next();
        l = { t: "bin", op: t.v, l, r: this.unary() };
      } else return l;
    }
  }
  private unary(): Node {
    if (this.accept("!")) return { t: "un", op: "!", x: this.unary() };
    if (this.accept("-")) return { t: "un", op: "-", x: this.unary() };
    return this.member();
  }
  private args(): Node[] {
    const args: Node[] = [];
    if (!this.accept(")")) {
      do args.push(this.expr());
      while (this.accept(","));
      this.expect(")");
    }
    return args;
  }
  private member(): Node {
    let n = this.primary();
    for (;;) {
      if (this.accept(".")) {
        const id = this.next();
        if (id.k !== "id") throw new Error("Syntax error: expected field name");
        if (this.accept("(")) n = { t: "call", fn: id.v, target: n, args: this.args() };
        else n = { t: "sel", obj: n, field: id.v };
      } else if (this.accept("[")) {
        const index = this.expr();
        this.expect("]");
        n = { t: "idx", obj: n, index };
      } else return n;
    }
  }
  private primary(): Node {
    const t = this.next();
    if (t.k === "num") return { t: "lit", v: t.n };
    if (t.k === "str") return { t: "lit", v: t.v };
    if (t.k === "id") {
      if (t.v === "true") return { t: "lit", v: true };
      if (t.v === "false") return { t: "lit", v: false };
      if (t.v === "null") return { t: "lit", v: null };
      if (this.accept("(")) return { t: "call", fn: t.v, args: this.args() };
      return { t: "id", name: t.v };
    }
    if (t.k === "op" && t.v === "(") {
      const e = this.expr();
      this.expect(")");
      return e;
    }
    if (t.k === "op" && t.v === "[") {
      const items: Node[] = [];
      if (!this.accept("]")) {
        do items.push(this.expr());
        while (this.accept(","));
        this.expect("]");
      }
      return { t: "list", items };
    }
    if (t.k === "op" && t.v === "{") {
      const entries: Array<[Node, Node]> = [];
      if (!this.accept("}")) {
        do {
          const k = this.expr();
          this.expect(":");
          entries.push([k, this.expr()]);
        } while (this.accept(","));
        this.expect("}");
      }
      return { t: "map", entries };
    }
    throw new Error(`Syntax error: unexpected '${t.v}'`);
  }
}

/** A CEL type value, as type(x) returns and the identifiers int, string, ... denote. */
class CelType {
  constructor(readonly name: string) {}
}

const TYPE_NAMES = new Set(["int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type"]);

const isMap = (v: unknown): v is Record<string, any> => v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof CelType);

function equal(a: Value, b: Value): boolean {
  if (a instanceof CelType || b instanceof CelType) return a instanceof CelType && b instanceof CelType && a.name === b.name;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equal(x, b[i]));
  if (isMap(a) && isMap(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && equal(a[k], b[k]));
  }
  return a === b;
}

function typeName(v: Value): string {
  if (v === null) return "null_type";
  if (Array.isArray(v)) return "list";
  if (isMap(v)) return "map";
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "double";
  if (typeof v === "boolean") return "bool";
  return typeof v;
}

function compare(op: string, a: Value, b: Value): boolean {
  if (!((typeof a === "number" && typeof b === "number") || (typeof a === "string" && typeof b === "string"))) {
    throw new Error(`no such overload: ${typeName(a)} ${op} ${typeName(b)}`);
  }
  switch (op) {
    case "<":
      return a < b;
    case "<=":
      return a <= b;
    case ">":
      return a > b;
    default:
      return a >= b;
  }
}

function size(v: Value): number {
  if (typeof v === "string") return [...v].length;
  if (Array.isArray(v)) return v.length;
  if (isMap(v)) return Object.keys(v).length;
  throw new Error(`no such overload: size(${typeName(v)})`);
}

const DURATION = /^(-?)((?:\d+(?:\.\d+)?(?:h|ms|m|s|us|ns))+)$/;

function parseDurationSeconds(s: string): number {
  const m = DURATION.exec(s);
  if (!m) throw new Error(`invalid duration: ${s}`);
  const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 1e-3, us: 1e-6, ns: 1e-9 };
  let total = 0;
  for (const part of m[2]!.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|ns)/g)) total += Number(part[1]) * units[part[2]!]!;
  return m[1] ? -total : total;
}

type Env = Record<string, Value>;

function evalNode(n: Node, env: Env): Value {
  switch (n.t) {
    case "lit":
      return n.v;
    case "id":
      if (!(n.name in env) && TYPE_NAMES.has(n.name)) return new CelType(n.name);
      if (!(n.name in env)) throw new Error(`undeclared reference to '${n.name}'`);
      return env[n.name];
    case "sel": {
      const o = evalNode(n.obj, env);
      if (!isMap(o)) throw new Error(`no such key: ${n.field}`);
      if (!(n.field in o)) throw new Error(`no such key: ${n.field}`);
      return o[n.field];
    }
    case "idx": {
      const o = evalNode(n.obj, env);
      const i = evalNode(n.index, env);
      if (Array.isArray(o) && typeof i === "number") {
        if (i < 0 || i >= o.length) throw new Error(`index out of bounds: ${i}`);
        return o[i];
      }
      if (isMap(o) && typeof i === "string") {
        if (!(i in o)) throw new Error(`no such key: ${i}`);
        return o[i];
      }
      throw new Error("invalid index");
    }
    case "un": {
      const x = evalNode(n.x, env);
      if (n.op === "!") {
        if (typeof x !== "boolean") throw new Error(`no such overload: !${typeName(x)}`);
        return !x;
      }
      if (typeof x !== "number") throw new Error(`no such overload: -${typeName(x)}`);
      return -x;
    }
    case "cond": {
      const c = evalNode(n.c, env);
      if (typeof c !== "boolean") throw new Error("no matching overload for conditional");
      return c ? evalNode(n.a, env) : evalNode(n.b, env);
    }
    case "list":
      return n.items.map((i) => evalNode(i, env));
    case "map":
      return Object.fromEntries(n.entries.map(([k, v]) => [String(evalNode(k, env)), evalNode(v, env)]));
    case "bin":
      return evalBinary(n, env);
    case "call":
      return evalCall(n, env);
  }
}

function evalBinary(n: Extract<Node, { t: "bin" }>, env: Env): Value {
  if (n.op === "&&" || n.op === "||") {
    // CEL's logical operators are commutative over errors: a decisive side wins.
    const decisive = n.op === "||";
    let lErr: unknown;
    let l: Value;
    try {
      l = evalNode(n.l, env);
      if (l === decisive) return decisive;
    } catch (e) {
      lErr = e;
    }
    const r = evalNode(n.r, env);
    if (r === decisive) return decisive;
    if (lErr) throw lErr;
    if (typeof l !== "boolean" || typeof r !== "boolean") throw new Error(`no such overload: ${n.op}`);
    return !decisive;
  }
  const l = evalNode(n.l, env);
  const r = evalNode(n.r, env);
  switch (n.op) {
    case "==":
      return equal(l, r);
    case "!=":
      return !equal(l, r);
    case "<":
    case "<=":
    case ">":
    case ">=":
      return compare(n.op, l, r);
    case "in":
      if (Array.isArray(r)) return r.some((x) => equal(x, l));
      if (isMap(r)) return typeof l === "string" && l in r;
      throw new Error("no such overload: in");
    case "+":
      if (typeof l === "number" && typeof r === "number") return l + r;
      if (typeof l === "string" && typeof r === "string") return l + r;
      if (Array.isArray(l) && Array.isArray(r)) return [...l, ...r];
      throw new Error(`no such overload: ${typeName(l)} + ${typeName(r)}`);
    case "-":
    case "*":
    case "/":
    case "%": {
      if (typeof l !== "number" || typeof r !== "number") throw new Error(`no such overload: ${typeName(l)} ${n.op} ${typeName(r)}`);
      if (n.op === "-") return l - r;
      if (n.op === "*") return l * r;
      if ((n.op === "/" || n.op === "%") && r === 0 && Number.isInteger(l)) throw new Error("division by zero");
      if (n.op === "%") return l % r;
      return Number.isInteger(l) && Number.isInteger(r) ? Math.trunc(l / r) : l / r;
    }
  }
  throw new Error(`unknown operator ${n.op}`);
}

const MACROS = new Set(["all", "exists", "exists_one", "map", "filter"]);

function evalCall(n: Extract<Node, { t: "call" }>, env: Env): Value {
  if (!n.target && n.fn === "has") {
    const arg = n.args[0];
    if (!arg || arg.t !== "sel") throw new Error("invalid argument to has() macro");
    const o = evalNode(arg.obj, env);
    return isMap(o) && arg.field in o && o[arg.field] !== undefined;
  }
  if (n.target && MACROS.has(n.fn)) {
    const coll = evalNode(n.target, env);
    const varNode = n.args[0];
    if (!varNode || varNode.t !== "id") throw new Error(`${n.fn}() macro needs a variable`);
    const items = Array.isArray(coll) ? coll : isMap(coll) ? Object.keys(coll) : undefined;
    if (!items) throw new Error(`no such overload: ${n.fn}`);
    const bodyNode = n.args[n.args.length - 1]!;
    const run = (x: Value, node: Node): Value => evalNode(node, { ...env, [varNode.name]: x });
    switch (n.fn) {
      case "all":
        return items.every((x) => run(x, bodyNode) === true);
      case "exists":
        return items.some((x) => run(x, bodyNode) === true);
      case "exists_one":
        return items.filter((x) => run(x, bodyNode) === true).length === 1;
      case "filter":
        return items.filter((x) => run(x, bodyNode) === true);
      case "map":
        if (n.args.length === 3) return items.filter((x) => run(x, n.args[1]!) === true).map((x) => run(x, bodyNode));
        return items.map((x) => run(x, bodyNode));
    }
  }
  const args = n.args.map((a) => evalNode(a, env));
  const self = n.target ? evalNode(n.target, env) : undefined;
  const str = (v: Value): string => {
    if (typeof v !== "string") throw new Error(`no such overload: ${n.fn}(${typeName(v)})`);
    return v;
  };
  switch (n.fn) {
    case "size":
      return size(n.target ? self : args[0]);
    case "string": {
      const v = args[0];
      return typeof v === "string" ? v : v === null ? "null" : String(v);
    }
    case "int": {
      const v = args[0];
      if (typeof v === "string") {
        if (!/^-?\d+$/.test(v)) throw new Error(`cannot convert ${v} to int`);
        return Number(v);
      }
      if (typeof v === "number") return Math.trunc(v);
      throw new Error("no such overload: int");
    }
    case "double":
      return Number(args[0]);
    case "bool":
      return args[0] === true || args[0] === "true";
    case "duration":
      return parseDurationSeconds(str(args[0]));
    case "type":
      return new CelType(typeName(args[0]));
    case "startsWith":
      return str(self).startsWith(str(args[0]));
    case "endsWith":
      return str(self).endsWith(str(args[0]));
    case "contains":
      return str(self).includes(str(args[0]));
    case "matches":
      return new RegExp(str(n.target ? args[0] : args[1])).test(str(n.target ? self : args[0]));
    case "lowerAscii":
      return str(self).toLowerCase();
    case "upperAscii":
      return str(self).toUpperCase();
    case "trim":
      return str(self).trim();
    case "indexOf":
      return str(self).indexOf(str(args[0]));
    case "lastIndexOf":
      return str(self).lastIndexOf(str(args[0]));
    case "split":
      return str(self).split(str(args[0]));
    case "substring":
      return str(self).substring(Number(args[0]), args[1] === undefined ? undefined : Number(args[1]));
    case "replace":
      return str(self).split(str(args[0])).join(str(args[1]));
    case "join":
      if (!Array.isArray(self)) throw new Error("no such overload: join");
      return self.join(args[0] === undefined ? "" : str(args[0]));
    case "isSorted":
      if (!Array.isArray(self)) throw new Error("no such overload: isSorted");
      return self.every((x, i) => i === 0 || compare("<=", self[i - 1], x));
    case "sum":
      if (!Array.isArray(self)) throw new Error("no such overload: sum");
      return self.reduce((a: number, b) => a + (b as number), 0);
    case "min":
    case "max":
      if (!Array.isArray(self) || self.length === 0) throw new Error(`no such overload: ${n.fn}`);
      return (self as number[]).reduce((a, b) => (n.fn === "min" ? (b < a ? b : a) : b > a ? b : a));
    case "getSeconds":
      return Math.trunc(Number(self));
    case "getMilliseconds":
      return Math.round((Number(self) % 1) * 1000);
  }
  throw new Error(`undeclared reference to '${n.fn}'`);
}

const cache = new Map<string, Node>();

/** Evaluates a CEL expression over the given variables (plain JSON values). */
export function evaluateCel(expression: string, vars: Record<string, unknown>, _schema?: unknown): unknown {
  let node = cache.get(expression);
  if (!node) {
    node = new Parser(tokenize(expression)).parseAll();
    cache.set(expression, node);
  }
  return evalNode(node, vars);
}
