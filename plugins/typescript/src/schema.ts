// A small schema builder for typed tools (and typed config): each builder
// knows the JSON Schema the model sees, the TypeScript type the handler
// gets (Infer), and how to decode a JSON value strictly into it, with the
// problems worded as the Go SDK and the host's validation word them
// (args.items[2].name: must be a string, got number 5).

/** The most problems one decoding reports, like the host's validation. */
const MAX_ERRORS = 20;

/** One way a value does not fit its schema, named by its path. */
export interface SchemaProblem {
  path: string;
  message: string;
}

/** @internal Collects the problems of one decoding. */
export class Decoder {
  problems: SchemaProblem[] = [];
  fail(path: string, message: string): void {
    if (this.problems.length < MAX_ERRORS) this.problems.push({ path, message });
  }
  get full(): boolean {
    return this.problems.length >= MAX_ERRORS;
  }
}

interface Common {
  description?: string;
}

/** The base of every schema builder. `T` is the decoded type. */
export abstract class Schema<T> {
  /** Phantom: the decoded type, for Infer. */
  declare readonly _type: T;
  /** @internal */ _description?: string;
  /** @internal */ _optional = false;
  /** @internal */ _default?: { value: unknown };

  /** A description the model reads. */
  describe(text: string): this {
    const c = this.clone();
    c._description = text;
    return c;
  }

  /** The property may be left out (undefined in the decoded object). */
  optional(): Optional<T> {
    const c = this.clone() as unknown as Schema<T | undefined>;
    c._optional = true;
    return c as unknown as Optional<T>;
  }

  /**
   * The property may be left out, and then takes this value: the schema
   * tells the model, and decoding fills it in.
   */
  default(value: T): Defaulted<T> {
    const problems = this.check(value, "default");
    if (problems.length > 0) {
      throw new Error(`schema: default ${JSON.stringify(value)}: ${problems[0].path}: ${problems[0].message}`);
    }
    const c = this.clone();
    c._optional = true;
    c._default = { value };
    return c as unknown as Defaulted<T>;
  }

  /** The JSON Schema of this builder. */
  toJSONSchema(): Record<string, unknown> {
    const s: Record<string, unknown> = this.jsonSchema();
    if (this._description !== undefined) s.description = this._description;
    if (this._default !== undefined) s.default = this._default.value;
    return s;
  }

  /** Decodes a JSON value, reporting every problem (up to 20). */
  check(value: unknown, path: string): SchemaProblem[] {
    const d = new Decoder();
    this.decode(value, path, d);
    return d.problems;
  }

  /** @internal */ abstract jsonSchema(): Record<string, unknown>;
  /** @internal */ abstract decode(value: unknown, path: string, d: Decoder): T;

  /** @internal */ protected clone(): this {
    return Object.assign(Object.create(Object.getPrototypeOf(this)), this);
  }
}

/** A schema whose property may be left out. */
export type Optional<T> = Schema<T | undefined> & { readonly _opt: true };
/** A schema whose property may be left out and then takes its default. */
export type Defaulted<T> = Schema<T> & { readonly _opt: true; readonly _def: true };

/** The type a schema decodes to. */
export type Infer<S> = S extends Schema<infer T> ? T : never;

// --- describing values, as the Go SDK does ---------------------------------------

function describe(v: unknown): string {
  if (v === null) return "null";
  if (typeof v === "boolean") return `boolean ${v}`;
  if (typeof v === "string") {
    const chars = Array.from(v);
    return "string " + JSON.stringify(chars.length > 40 ? chars.slice(0, 40).join("") + "..." : v);
  }
  if (typeof v === "number") return `number ${clip(String(v))}`;
  if (Array.isArray(v)) return "array";
  if (typeof v === "object") return "object";
  return typeof v;
}

function clip(s: string): string {
  return s.length > 40 ? s.slice(0, 40) + "..." : s;
}

function quoteList(names: readonly string[]): string {
  return names.map((n) => JSON.stringify(n)).join(", ");
}

/** Extends a path as the host's validation does: args.limit, args["content-type"]. */
export function child(path: string, key: string): string {
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

// --- scalars ------------------------------------------------------------------------

export class StringSchema<T extends string = string> extends Schema<T> {
  /** @internal */ _enum?: readonly string[];
  /** @internal */ jsonSchema(): Record<string, unknown> {
    const s: Record<string, unknown> = { type: "string" };
    if (this._enum) s.enum = [...this._enum];
    return s;
  }
  /** @internal */ decode(v: unknown, path: string, d: Decoder): T {
    if (typeof v !== "string") {
      d.fail(path, `must be a string, got ${describe(v)}`);
      return undefined as unknown as T;
    }
    if (this._enum && !this._enum.includes(v)) {
      d.fail(path, `must be one of ${quoteList(this._enum)}, got ${describe(v)}`);
    }
    return v as T;
  }
}

interface NumberOptions extends Common {
  minimum?: number;
  maximum?: number;
}

export class NumberSchema extends Schema<number> {
  /** @internal */ _integer = false;
  /** @internal */ _min?: number;
  /** @internal */ _max?: number;
  /** @internal */ jsonSchema(): Record<string, unknown> {
    const s: Record<string, unknown> = { type: this._integer ? "integer" : "number" };
    if (this._min !== undefined) s.minimum = this._min;
    if (this._max !== undefined) s.maximum = this._max;
    return s;
  }
  /** @internal */ decode(v: unknown, path: string, d: Decoder): number {
    const want = this._integer ? "an integer" : "a number";
    if (typeof v !== "number") {
      d.fail(path, `must be ${want}, got ${describe(v)}`);
      return NaN;
    }
    if (!Number.isFinite(v)) {
      // JSON.parse makes 1e400 Infinity: refused, as the Go SDK refuses it.
      d.fail(path, `the number is out of range (beyond ±${Number.MAX_VALUE})`);
      return v;
    }
    if (this._integer) {
      if (!Number.isInteger(v)) {
        d.fail(path, `must be ${want}, got number ${clip(String(v))}`);
        return v;
      }
      if (!Number.isSafeInteger(v)) {
        d.fail(path, `${clip(String(v))} is out of range for an integer (at most 2^53-1 in magnitude)`);
        return v;
      }
    }
    if (this._min !== undefined && v < this._min) d.fail(path, `must be >= ${this._min}, got ${clip(String(v))}`);
    if (this._max !== undefined && v > this._max) d.fail(path, `must be <= ${this._max}, got ${clip(String(v))}`);
    return v;
  }
}

export class BooleanSchema extends Schema<boolean> {
  /** @internal */ jsonSchema(): Record<string, unknown> {
    return { type: "boolean" };
  }
  /** @internal */ decode(v: unknown, path: string, d: Decoder): boolean {
    if (typeof v !== "boolean") d.fail(path, `must be a boolean, got ${describe(v)}`);
    return v as boolean;
  }
}

/** Any JSON value, taken as it is. */
export class AnySchema extends Schema<unknown> {
  /** @internal */ jsonSchema(): Record<string, unknown> {
    return {};
  }
  /** @internal */ decode(v: unknown): unknown {
    return v;
  }
}

// --- composites ---------------------------------------------------------------------

export class ArraySchema<T> extends Schema<T[]> {
  constructor(/** @internal */ readonly _items: Schema<T>) {
    super();
  }
  /** @internal */ jsonSchema(): Record<string, unknown> {
    return { type: "array", items: this._items.toJSONSchema() };
  }
  /** @internal */ decode(v: unknown, path: string, d: Decoder): T[] {
    if (!Array.isArray(v)) {
      d.fail(path, `must be an array, got ${describe(v)}`);
      return [];
    }
    const out: T[] = [];
    for (let i = 0; i < v.length && !d.full; i++) out.push(this._items.decode(v[i], `${path}[${i}]`, d));
    return out;
  }
}

/** The properties of an object schema. */
export type Shape = { [key: string]: Schema<any> };

type OptionalKeys<S extends Shape> = { [K in keyof S]: S[K] extends { readonly _opt: true } ? (S[K] extends { readonly _def: true } ? never : K) : never }[keyof S];
type DefaultedKeys<S extends Shape> = { [K in keyof S]: S[K] extends { readonly _def: true } ? K : never }[keyof S];
type RequiredKeys<S extends Shape> = Exclude<keyof S, OptionalKeys<S> | DefaultedKeys<S>>;
type Flatten<T> = { [K in keyof T]: T[K] };

/** The decoded type of an object schema's shape. */
export type InferShape<S extends Shape> = Flatten<
  { [K in RequiredKeys<S> | DefaultedKeys<S>]: Exclude<Infer<S[K]>, undefined> } & { [K in OptionalKeys<S>]?: Exclude<Infer<S[K]>, undefined> }
>;

export class ObjectSchema<S extends Shape> extends Schema<InferShape<S>> {
  constructor(/** @internal */ readonly _shape: S) {
    super();
    for (const key of Object.keys(_shape)) {
      if (key === "" || key.includes("\0")) throw new Error(`schema: ${JSON.stringify(key)} is not a usable property name`);
      if (!(_shape[key] instanceof Schema)) throw new Error(`schema: property ${JSON.stringify(key)} is not a schema (use s.string(), s.number(), ...)`);
    }
  }
  /** @internal */ jsonSchema(): Record<string, unknown> {
    const properties: Record<string, unknown> = {};
    const required: string[] = [];
    for (const [k, v] of Object.entries(this._shape)) {
      properties[k] = v.toJSONSchema();
      if (!v._optional) required.push(k);
    }
    const s: Record<string, unknown> = { type: "object", properties };
    if (required.length > 0) s.required = required;
    s.additionalProperties = false;
    return s;
  }
  /** @internal */ decode(v: unknown, path: string, d: Decoder): InferShape<S> {
    if (typeof v !== "object" || v === null || Array.isArray(v)) {
      d.fail(path, `must be an object, got ${describe(v)}`);
      return {} as InferShape<S>;
    }
    const obj = v as Record<string, unknown>;
    const names = Object.keys(this._shape);
    for (const k of names) {
      if (!Object.prototype.hasOwnProperty.call(obj, k) && !this._shape[k]._optional) d.fail(path, `missing required property ${JSON.stringify(k)}`);
    }
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(obj).sort()) {
      if (!Object.prototype.hasOwnProperty.call(this._shape, k)) {
        if (names.length === 0) d.fail(path, `unexpected property ${JSON.stringify(k)}; this tool takes no arguments, send {}`);
        else d.fail(path, `unexpected property ${JSON.stringify(k)}; allowed properties are ${quoteList(names)}`);
        continue;
      }
      // Own property, so that "__proto__" as a key stays a plain key.
      Object.defineProperty(out, k, { value: this._shape[k].decode(obj[k], child(path, k), d), enumerable: true, writable: true, configurable: true });
    }
    for (const k of names) {
      const def = this._shape[k]._default;
      if (def !== undefined && !Object.prototype.hasOwnProperty.call(out, k)) out[k] = structuredClone(def.value);
    }
    return out as InferShape<S>;
  }
}

/** A map from string keys to values of one schema. */
export class RecordSchema<T> extends Schema<{ [key: string]: T }> {
  constructor(/** @internal */ readonly _values: Schema<T>) {
    super();
  }
  /** @internal */ jsonSchema(): Record<string, unknown> {
    return { type: "object", additionalProperties: this._values.toJSONSchema() };
  }
  /** @internal */ decode(v: unknown, path: string, d: Decoder): { [key: string]: T } {
    if (typeof v !== "object" || v === null || Array.isArray(v)) {
      d.fail(path, `must be an object, got ${describe(v)}`);
      return {};
    }
    const out: { [key: string]: T } = {};
    for (const k of Object.keys(v).sort()) {
      Object.defineProperty(out, k, { value: this._values.decode((v as Record<string, unknown>)[k], child(path, k), d), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
}

// --- the builder --------------------------------------------------------------------

function withCommon<S extends Schema<any>>(schema: S, opts?: Common): S {
  return opts?.description !== undefined ? schema.describe(opts.description) : schema;
}

function numberSchema(integer: boolean, opts?: NumberOptions): NumberSchema {
  const n = new NumberSchema();
  n._integer = integer;
  for (const key of ["minimum", "maximum"] as const) {
    const b = opts?.[key];
    if (b !== undefined && (typeof b !== "number" || !Number.isFinite(b))) throw new Error(`schema: ${key} ${String(b)} is not a finite number`);
  }
  n._min = opts?.minimum;
  n._max = opts?.maximum;
  if (n._min !== undefined && n._max !== undefined && n._min > n._max) throw new Error(`schema: minimum ${n._min} is greater than maximum ${n._max}`);
  return withCommon(n, opts);
}

/**
 * The schema builder. Every property is required unless marked
 * `.optional()` or given a `.default(value)`; objects refuse unknown
 * properties.
 *
 *     const args = s.object({
 *       city: s.string({ description: "city name" }),
 *       days: s.integer({ minimum: 1, maximum: 7 }).default(1),
 *       units: s.enum(["metric", "imperial"]).optional(),
 *     });
 */
export const s = {
  string(opts?: Common): StringSchema {
    return withCommon(new StringSchema(), opts);
  },
  /** A string that must be one of `values`. */
  enum<const V extends readonly [string, ...string[]]>(values: V, opts?: Common): StringSchema<V[number]> {
    const seen = new Set<string>();
    for (const v of values) {
      if (typeof v !== "string" || v === "") throw new Error(`schema: enum value ${JSON.stringify(v)} must be a non-empty string`);
      if (seen.has(v)) throw new Error(`schema: enum lists ${JSON.stringify(v)} twice`);
      seen.add(v);
    }
    const e = new StringSchema<V[number]>();
    e._enum = [...values];
    return withCommon(e, opts);
  },
  number(opts?: NumberOptions): NumberSchema {
    return numberSchema(false, opts);
  },
  integer(opts?: NumberOptions): NumberSchema {
    return numberSchema(true, opts);
  },
  boolean(opts?: Common): BooleanSchema {
    return withCommon(new BooleanSchema(), opts);
  },
  array<T>(items: Schema<T>, opts?: Common): ArraySchema<T> {
    return withCommon(new ArraySchema(items), opts);
  },
  object<S extends Shape>(shape: S, opts?: Common): ObjectSchema<S> {
    return withCommon(new ObjectSchema(shape), opts);
  },
  record<T>(values: Schema<T>, opts?: Common): RecordSchema<T> {
    return withCommon(new RecordSchema(values), opts);
  },
  /** Any JSON value. */
  any(opts?: Common): AnySchema {
    return withCommon(new AnySchema(), opts);
  },
  optional<T>(schema: Schema<T>): Optional<T> {
    return schema.optional();
  },
};

/**
 * Decodes JSON text strictly against an object schema. Empty text and null
 * are taken as {} (models send both for a tool without parameters).
 * Returns the value, or the problems worded for the model or the operator.
 */
export function decodeText<S extends Shape>(
  schema: ObjectSchema<S>,
  textValue: string,
  root: string,
): { ok: true; value: InferShape<S> } | { ok: false; problems: SchemaProblem[] } {
  const trimmed = textValue.trim();
  let v: unknown = {};
  if (trimmed !== "" && trimmed !== "null") {
    try {
      v = JSON.parse(trimmed);
    } catch (e) {
      return { ok: false, problems: [{ path: root, message: `not valid JSON: ${(e as Error).message}` }] };
    }
  }
  return decodeValue(schema, v, root);
}

/** Decodes a JSON value strictly against a schema. */
export function decodeValue<T>(schema: Schema<T>, v: unknown, root: string): { ok: true; value: T } | { ok: false; problems: SchemaProblem[] } {
  const d = new Decoder();
  const value = schema.decode(v, root, d);
  if (d.problems.length > 0) return { ok: false, problems: d.problems };
  return { ok: true, value };
}

/** The problems as one line: "args.a: ...; args.b: ...". */
export function problemsText(problems: SchemaProblem[]): string {
  return problems.map((p) => `${p.path}: ${p.message}`).join("; ");
}
