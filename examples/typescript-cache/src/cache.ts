// The cache's parts that know nothing of hookhost: the config's rules,
// the key of a call, and a size-bounded LRU store whose entries expire.

import { checkGlob, matchGlob } from "@hookhost/plugin";

/** What configure() accepts, checked; see README.md. */
export interface Settings {
  tools: string[];
  ttlMs: number;
  maxEntries: number;
}

/**
 * A Go duration ("30s", "1m30s", "500ms", "2h"): the host's config speaks
 * them everywhere, so the cache's ttl does too. Returns milliseconds, or
 * undefined when the text is not one.
 */
export function parseDuration(text: string): number | undefined {
  const units: Record<string, number> = { ns: 1e-6, us: 1e-3, "µs": 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/y;
  if (text === "" || text === "0") return text === "0" ? 0 : undefined;
  let ms = 0;
  let i = 0;
  while (i < text.length) {
    re.lastIndex = i;
    const m = re.exec(text);
    if (!m) return undefined;
    ms += Number(m[1]) * units[m[2]];
    i = re.lastIndex;
  }
  return ms;
}

/** Checks the decoded config; the error names the key, for the operator. */
export function settings(c: { tools: string[]; ttl: string; max_entries: number }): Settings {
  if (c.tools.length === 0) {
    // No default: which tools are safe to cache is the operator's call.
    throw new Error('tools: list the read-only tools to cache, such as tools = ["read_file", "calculate"]');
  }
  c.tools.forEach((g, i) => {
    try {
      if (g === "") throw new Error("empty");
      checkGlob(g);
    } catch {
      throw new Error(`tools[${i}]: ${JSON.stringify(g)} is not a tool name or glob`);
    }
  });
  const ttlMs = parseDuration(c.ttl);
  if (ttlMs === undefined || !(ttlMs > 0)) {
    throw new Error(`ttl: ${JSON.stringify(c.ttl)} is not a positive duration (use Go durations such as "30s" or "5m")`);
  }
  return { tools: c.tools, ttlMs, maxEntries: c.max_entries };
}

/** Whether tool is one of the configured tools; memoised, since it is asked on every call. */
export class Cacheable {
  private readonly memo = new Map<string, boolean>();
  constructor(private readonly globs: string[]) {}
  has(tool: string): boolean {
    let v = this.memo.get(tool);
    if (v === undefined) {
      v = this.globs.some((g) => matchGlob(g, tool));
      // Tool names come from a finite catalogue, but a model may invent
      // names: keep the memo bounded.
      if (this.memo.size >= 1024) this.memo.clear();
      this.memo.set(tool, v);
    }
    return v;
  }
}

/**
 * The key of a call: the tool and its arguments re-encoded with sorted keys
 * and no insignificant space, so that {"a":1, "b":2} and {"b":2,"a":1} share
 * an entry. Numbers are kept as written: parsing them would round two
 * 20-digit ids into one key and serve one call the other's result.
 * Arguments that are not JSON are used as they are.
 */
export function key(tool: string, args: string): string {
  let canon: string;
  try {
    const p = new Canon(args);
    canon = p.value();
    p.end();
  } catch {
    canon = args;
  }
  return tool + "\0" + canon;
}

class Canon {
  private i = 0;
  constructor(private readonly s: string) {}
  private ws(): void {
    while (this.i < this.s.length && " \t\n\r".includes(this.s[this.i])) this.i++;
  }
  end(): void {
    this.ws();
    if (this.i !== this.s.length) throw new Error("trailing data");
  }
  value(): string {
    this.ws();
    const c = this.s[this.i];
    if (c === "{") return this.object();
    if (c === "[") return this.array();
    if (c === '"') return JSON.stringify(JSON.parse(this.stringToken()));
    for (const lit of ["true", "false", "null"]) {
      if (this.s.startsWith(lit, this.i)) {
        this.i += lit.length;
        return lit;
      }
    }
    const num = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    num.lastIndex = this.i;
    const m = num.exec(this.s);
    if (!m || m[0] === "") throw new Error("not JSON");
    this.i = num.lastIndex;
    return m[0];
  }
  private stringToken(): string {
    const start = this.i++;
    while (this.i < this.s.length && this.s[this.i] !== '"') this.i += this.s[this.i] === "\\" ? 2 : 1;
    if (this.i >= this.s.length) throw new Error("unterminated string");
    this.i++;
    return this.s.slice(start, this.i);
  }
  private object(): string {
    this.i++;
    const fields = new Map<string, string>();
    this.ws();
    if (this.s[this.i] === "}") {
      this.i++;
      return "{}";
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') throw new Error("not JSON");
      const k = JSON.parse(this.stringToken()) as string;
      this.ws();
      if (this.s[this.i++] !== ":") throw new Error("not JSON");
      fields.set(k, this.value()); // a repeated key: the last one wins, as in Go
      this.ws();
      const c = this.s[this.i++];
      if (c === "}") break;
      if (c !== ",") throw new Error("not JSON");
    }
    return "{" + [...fields.keys()].sort().map((k) => JSON.stringify(k) + ":" + fields.get(k)).join(",") + "}";
  }
  private array(): string {
    this.i++;
    const items: string[] = [];
    this.ws();
    if (this.s[this.i] === "]") {
      this.i++;
      return "[]";
    }
    for (;;) {
      items.push(this.value());
      this.ws();
      const c = this.s[this.i++];
      if (c === "]") break;
      if (c !== ",") throw new Error("not JSON");
    }
    return "[" + items.join(",") + "]";
  }
}

export interface Result {
  content: string;
  isError?: boolean;
}

/** A size-bounded LRU of tool results whose entries expire ttl after they were stored. */
export class Store {
  // A Map keeps insertion order: the first key is the least recently used.
  private readonly items = new Map<string, { result: Result; expires: number }>();
  constructor(private readonly max: number, private readonly ttlMs: number, private readonly now: () => number = Date.now) {}

  get(k: string): Result | undefined {
    const e = this.items.get(k);
    if (e === undefined) return undefined;
    this.items.delete(k);
    if (this.now() >= e.expires) return undefined;
    this.items.set(k, e);
    return e.result;
  }

  put(k: string, result: Result): void {
    this.items.delete(k);
    this.items.set(k, { result, expires: this.now() + this.ttlMs });
    while (this.items.size > this.max) this.items.delete(this.items.keys().next().value as string);
  }

  get size(): number {
    return this.items.size;
  }
}
