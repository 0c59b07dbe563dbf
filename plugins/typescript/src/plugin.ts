// A plugin as its author writes it (an object with optional hook methods),
// and the runtime that answers for it: the manifest, Configure, each hook
// call under its deadline and cancellation, and stretches with exactly the
// rules of the host's hookstretch.Run. Both protocol versions and the test
// harness call this runtime, so a plugin behaves the same everywhere.

import { isBug } from "./bug";
import { LEGAL_STRETCHES, TOOL_HOOKS } from "./generated/catalogue";
import type { ModelStage__Output as ModelStage } from "./generated/hookhost/plugin/v2/ModelStage";
import type { Hooks } from "./generated/hooks";
import { checkGlob, matchGlob } from "./glob";
import { after } from "./timer";
import { Logger, newLogger } from "./log";
import { wellFormedText } from "./proto";
import { decodeValue, ObjectSchema, problemsText, Schema } from "./schema";
import { Tool } from "./tool";
import type * as T from "./types";
import { HookRow, MalformedAnswer, parseJSON, rowOf, TABLE } from "./wire";

/** What every handler gets besides its payload. */
export interface HookContext {
  /** The hook being answered. */
  hook: T.HookName;
  /** When the host stops waiting, in Date.now() milliseconds; undefined when it set no deadline. */
  deadline: number | undefined;
  /** Aborted when the deadline passes or the host cancels the call. */
  signal: AbortSignal;
  /** The plugin's logger. */
  log: Logger;
  /**
   * How the call reached the process: "lane" on the host's lane, "grpc"
   * on a Hooks stream or a protocol 1 RPC; undefined in the test harness.
   * For diagnostics: a handler answers alike whichever way a call came.
   */
  carrier?: Carrier | undefined;
}

/** The ways a hook call reaches the process (see PROTOCOL.md, "The lane"). */
export type Carrier = "lane" | "grpc";

/** What Configure gets besides the config. */
export interface ConfigureContext {
  log: Logger;
}

/** A handler's answer: undefined or null mean no opinion. */
export type Answer<A> = A | null | undefined | void | Promise<A | null | undefined | void>;
/** An observer returns nothing. */
export type Observed = void | Promise<void>;

/** The hooks, each an optional method named after it (written from the catalogue). */
export type { Hooks };

/** A plugin: its name, what it declares, and the hooks it answers. */
export interface Plugin<C = T.JsonObject> extends Hooks {
  name: string;
  version?: string | undefined;
  /** Globs (Go's path.Match) of the tool names the tool hooks apply to; none: every tool. */
  matchers?: string[] | undefined;
  /** Globs of one tool hook, overriding `matchers` for it; an empty list: every tool. */
  hookMatchers?: Partial<Record<T.ToolHookName, string[]>> | undefined;
  /**
   * Per-hook options: `{transform_llm_output: {windowBytes: 4096, overlapBytes: 256}}`
   * has a streamed answer reach the client window by window;
   * `{post_llm_call_can_reissue: {decideAfterBytes: 512}}` decides a reissue
   * on the answer's opening.
   */
  hookOptions?: Partial<Record<"transform_llm_output" | "post_llm_call_can_reissue", T.HookOptions>> | undefined;
  /**
   * The tools the plugin contributes: typed tools (tool()), which the SDK
   * answers, and plain specs the plugin answers in
   * preToolCallCanProvideResult.
   */
  tools?: Array<Tool<any> | T.ToolSpec> | undefined;
  /** The config's schema (s.object({...})): Configure then gets it decoded, and a bad config is refused with the key named. */
  config?: Schema<C> | undefined;
  /** Receives the plugin's config table, once, before any hook. A throw refuses it; its message is the operator's reason. */
  configure?(config: C, ctx: ConfigureContext): void | Promise<void>;
  /**
   * The hooks, of those the plugin's methods serve, that it does not serve
   * as configured (a hook only some configs need): asked once, right after
   * `configure` accepts the config, and the host never asks them of this
   * process. Nothing or an empty list: every hook is served. A name that is
   * not a hook, or an answer that is not a list of names, refuses the
   * config, saying so; a hook the plugin has no method for is left out.
   */
  unserved?(): Unserved | Promise<Unserved>;
}

/** What `unserved` answers: hook names, or nothing (every hook served). */
export type Unserved = readonly T.HookName[] | null | undefined | void;

/** The manifest the host reads (Describe). */
export interface Manifest {
  name: string;
  version: string;
  hooks: T.HookName[];
  matchers: string[];
  tools: T.ToolSpec[];
  hookMatchers: Partial<Record<T.ToolHookName, string[]>>;
  hookOptions: Partial<Record<string, T.HookOptions>>;
  /**
   * The top-level keys of the plugin's config table, sorted: those of an
   * s.object `config` schema; none for a plugin with neither a schema nor a
   * `configure`, which takes no config; undefined (undeclared) when
   * `configure` checks the config alone. The host refuses any other key
   * before Configure, naming its file and line.
   */
  config?: string[] | undefined;
}

/**
 * A mistake the SDK found in the plugin's own code while configuring it (an
 * `unserved` that answers no list of hook names): Configure fails with it
 * as PANIC, which the host reports as a fault in the plugin, where a
 * `configure` that throws refuses the config.
 */
export class PluginFault extends Error {}

/** protocol v2's failure kinds, as the Go server maps failures onto them. */
export type FailureKind = "ERROR" | "PANIC" | "DEADLINE_EXCEEDED" | "CANCELLED" | "UNKNOWN_HOOK" | "BAD_REQUEST";

export interface Failure {
  kind: FailureKind;
  message: string;
}

/** One stage's outcome: the answer (null: no opinion) and its response message's bytes, or a failure. */
export type StageOutcome = { ok: true; answer: unknown; bytes: Buffer } | { ok: false; failure: Failure };

/**
 * What cancels a call inside the SDK: an AbortSignal, or a Cancellation.
 * The SDK makes an AbortSignal only for a handler that reads ctx.signal:
 * in Node 20 one costs several microseconds to make, a good part of a
 * whole hook call on the lane.
 */
export interface CallSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/**
 * A CallSignal and what aborts it, as an AbortController's signal behaves:
 * aborted once, with the first reason; each listener called once, in the
 * order added; one added after the abort is never called.
 */
export class Cancellation implements CallSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: (() => void)[] | undefined;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const ls = this.listeners;
    this.listeners = undefined;
    if (ls) for (const l of ls) l();
  }

  /** Every listener is called once at most, so { once } changes nothing. */
  addEventListener(_type: "abort", listener: () => void, _options?: { once?: boolean }): void {
    if (!this.aborted) (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    const i = this.listeners?.indexOf(listener) ?? -1;
    if (i >= 0) this.listeners!.splice(i, 1);
  }
}

/** Why a call's signal was aborted. */
export class DeadlineExceeded extends Error {
  constructor(hook: string) {
    super(`${hook}: context deadline exceeded`);
    this.name = "DeadlineExceeded";
  }
}
export class HostCancelled extends Error {
  constructor() {
    super("the host cancelled the call");
    this.name = "HostCancelled";
  }
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** One stage of a stretch, as the host sends it. */
export interface StretchStage {
  hook: string;
  timeoutMs: number;
}

/** The config keys a plugin declares; see Manifest.config. */
function configKeys(p: Plugin<any>): string[] | undefined {
  if (p.config instanceof ObjectSchema) return Object.keys(p.config._shape).sort();
  if (p.config === undefined && typeof p.configure !== "function") return [];
  return undefined;
}

/** A plugin made ready to answer: see the file's comment. */
export class Runtime {
  readonly manifest: Manifest;
  readonly log: Logger;
  /**
   * The hooks of the manifest the plugin does not serve as configured, in
   * catalogue order: its `unserved` answer, once configure has succeeded.
   */
  unserved: T.HookName[] = [];
  private readonly typed = new Map<string, Tool<any>>();

  constructor(readonly plugin: Plugin<any>) {
    if (plugin === null || typeof plugin !== "object") throw new Error("hookhost: serve() needs a plugin object");
    this.log = newLogger(typeof plugin.name === "string" && plugin.name !== "" ? plugin.name : "plugin");
    this.manifest = this.derive();
  }

  /** Derives the manifest and checks it as the host will; throws with the reason. */
  private derive(): Manifest {
    const p = this.plugin;
    if (typeof p.name !== "string" || p.name === "") throw new Error("the plugin has no name");
    const tools: T.ToolSpec[] = [];
    const seen = new Set<string>();
    for (const t of p.tools ?? []) {
      const spec = t instanceof Tool ? t.spec : t;
      if (!spec || typeof spec.name !== "string" || !TOOL_NAME.test(spec.name)) {
        throw new Error(`tool name ${JSON.stringify(spec?.name)} must match ^[a-zA-Z0-9_-]{1,64}$`);
      }
      if (seen.has(spec.name)) throw new Error(`tool ${JSON.stringify(spec.name)} declared twice`);
      seen.add(spec.name);
      if (spec.inputSchema !== undefined && (typeof spec.inputSchema !== "object" || spec.inputSchema === null || Array.isArray(spec.inputSchema))) {
        throw new Error(`tool ${JSON.stringify(spec.name)}: input schema is not a JSON object`);
      }
      if (t instanceof Tool) this.typed.set(spec.name, t);
      tools.push({ name: spec.name, description: spec.description ?? "", ...(spec.inputSchema ? { inputSchema: spec.inputSchema } : {}) });
    }
    const hooks: T.HookName[] = [];
    for (const row of TABLE) {
      const has = typeof p[row.method] === "function";
      if (has || (row.hook === "pre_tool_call_can_provide_result" && this.typed.size > 0)) hooks.push(row.hook);
    }
    // A typo must not make a hook silently absent: look at the object's
    // own methods and its class's (prototype chain, up to Object).
    for (let o: object | null = p; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
      for (const key of Object.getOwnPropertyNames(o)) {
        if (/^(on|pre|post|transform)[A-Z]/.test(key) && !TABLE.some((r) => r.method === key) && typeof (p as any)[key] === "function") {
          throw new Error(`${key} is not a hook; the hooks are ${TABLE.map((r) => r.method).join(", ")}`);
        }
      }
    }
    const matchers = [...(p.matchers ?? [])];
    const checkGlobs = (where: string, globs: string[]) => {
      for (const g of globs) {
        if (typeof g !== "string" || g === "") throw new Error(`${where}empty tool matcher`);
        try {
          checkGlob(g);
        } catch {
          throw new Error(`${where}tool matcher ${JSON.stringify(g)} is not a valid glob`);
        }
      }
    };
    checkGlobs("", matchers);
    const hookMatchers: Partial<Record<T.ToolHookName, string[]>> = {};
    for (const [h, globs] of Object.entries(p.hookMatchers ?? {})) {
      if (!TOOL_HOOKS.includes(h)) throw new Error(`hook matchers name ${JSON.stringify(h)}, which is not a tool hook`);
      if (!hooks.includes(h as T.HookName)) throw new Error(`hook matchers name ${JSON.stringify(h)}, which the plugin does not serve`);
      checkGlobs(`${h}: `, globs ?? []);
      hookMatchers[h as T.ToolHookName] = [...(globs ?? [])];
    }
    this.provideMatchers(hookMatchers, matchers);
    const hookOptions: Partial<Record<string, T.HookOptions>> = {};
    for (const [h, o] of Object.entries(p.hookOptions ?? {})) {
      if (h !== "transform_llm_output" && h !== "post_llm_call_can_reissue") {
        throw new Error(`hook options name ${JSON.stringify(h)}, which takes none`);
      }
      if (!hooks.includes(h as T.HookName)) throw new Error(`hook options name ${JSON.stringify(h)}, which the plugin does not serve`);
      for (const [k, v] of Object.entries(o ?? {})) {
        if (v !== undefined && (!Number.isSafeInteger(v) || (v as number) < 0)) {
          throw new Error(`hook options ${h}.${k} must be a non-negative integer`);
        }
      }
      hookOptions[h] = { ...o };
    }
    return { name: p.name, version: p.version ?? "", hooks, matchers, tools, hookMatchers, hookOptions, config: configKeys(p) };
  }

  /**
   * Sets pre_tool_call_can_provide_result's matchers for typed tools as
   * sdk.NewTool does: unless the plugin set them, exactly the typed tools'
   * names, plus the plugin's matchers when it answers other tools itself
   * (every tool, when it has none). Matchers the plugin set are kept, with
   * any typed tool they miss added: a tool the host never asks about would
   * always fail.
   */
  private provideMatchers(hm: Partial<Record<T.ToolHookName, string[]>>, matchers: string[]): void {
    if (this.typed.size === 0) return;
    const own = typeof this.plugin.preToolCallCanProvideResult === "function";
    let globs: string[];
    if (hm.pre_tool_call_can_provide_result !== undefined) {
      globs = [...hm.pre_tool_call_can_provide_result];
      if (globs.length === 0) return;
    } else if (own && matchers.length === 0) {
      return;
    } else if (own) {
      globs = [...matchers];
    } else {
      globs = [];
    }
    for (const name of this.typed.keys()) {
      if (!globs.some((g) => matchGlob(g, name))) globs.push(name);
    }
    hm.pre_tool_call_can_provide_result = globs;
  }

  /** Whether the plugin serves the hook. */
  serves(hook: string): boolean {
    return this.manifest.hooks.includes(hook as T.HookName);
  }

  /**
   * Hands the plugin its config (JSON text; empty means {}) and returns the
   * hooks it does not serve as configured, as ConfigureResponse's
   * unserved_hooks carries them. Throws with the operator's reason.
   */
  async configure(configJSON: string): Promise<T.HookName[]> {
    let v: unknown = {};
    if (configJSON.trim() !== "") {
      try {
        v = JSON.parse(configJSON);
      } catch (e) {
        throw new Error(`the host sent a config that is not JSON: ${(e as Error).message}`);
      }
    }
    const schema = this.plugin.config;
    if (schema !== undefined) {
      const d = decodeValue(schema, v, "config");
      if (!d.ok) throw new Error(problemsText(d.problems));
      v = d.value;
    }
    if (typeof this.plugin.configure === "function") {
      await this.plugin.configure.call(this.plugin, v, { log: this.log });
    }
    this.unserved = await this.askUnserved();
    return [...this.unserved];
  }

  /**
   * The plugin's `unserved` answer, checked: a mistake in it stops the
   * plugin starting with the mistake named, as a fault in the plugin
   * (PluginFault: no change to the config cures it), rather than leaving
   * the host to ask hooks the plugin meant to give up, or to skip hooks it
   * meant to serve.
   */
  private async askUnserved(): Promise<T.HookName[]> {
    const fn: unknown = this.plugin.unserved;
    if (fn === undefined || fn === null) return [];
    if (typeof fn !== "function") throw new PluginFault(`unserved must be a method returning hook names, got ${typeName(fn)}`);
    let names: unknown;
    try {
      names = await fn.call(this.plugin);
    } catch (e) {
      const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
      this.log.debug("the plugin's unserved failed", { error: text, stack: e instanceof Error ? e.stack : undefined });
      throw new PluginFault(`unserved() failed: ${text}`);
    }
    if (names === undefined || names === null) return [];
    if (!Array.isArray(names)) throw new PluginFault(`unserved() must return an array of hook names, got ${typeName(names)}`);
    for (const n of names) {
      if (typeof n !== "string") throw new PluginFault(`unserved() must return hook names (strings), got ${typeName(n)} ${JSON.stringify(n) ?? String(n)}`);
      if (!TABLE.some((r) => r.hook === n)) {
        throw new PluginFault(`unserved() names ${JSON.stringify(n)}, which is not a hook (the hooks are ${TABLE.map((r) => r.hook).join(", ")})`);
      }
    }
    // A hook the plugin has no method for is not in its manifest: the host
    // would ignore the name, so it is not sent.
    return this.manifest.hooks.filter((h) => names.includes(h));
  }

  /** Calls the handler of row with payload: the answer, null for no opinion. */
  private async invoke(row: HookRow, payload: unknown, ctx: HookContext): Promise<unknown> {
    if (row.hook === "pre_tool_call_can_provide_result" && this.typed.size > 0) {
      const call = payload as T.ToolCallRequest;
      const t = this.typed.get(call.name);
      if (t) return t.call(call.arguments, ctx);
    }
    const fn = this.plugin[row.method] as ((p: unknown, c: HookContext) => unknown) | undefined;
    if (typeof fn !== "function") return null;
    const v = await fn.call(this.plugin, payload, ctx);
    return v === undefined ? null : v;
  }

  /**
   * Runs one call of row's hook under an optional deadline (ms) and the
   * caller's signal, and encodes its answer. A handler still running when
   * the deadline passes or the call is cancelled is left to finish on its
   * own; its answer is not used.
   */
  async call(
    row: HookRow,
    payload: unknown,
    timeoutMs: number | undefined,
    parent: CallSignal | undefined,
    track?: (handler: Promise<unknown>) => void,
    carrier?: Carrier,
  ): Promise<StageOutcome> {
    type Settled = { done: true; value: unknown } | { done: false; error: unknown };
    let aborted = false;
    let reason: unknown;
    // The handler's AbortController, made when it first reads ctx.signal.
    let ac: AbortController | undefined;
    let wake = (): void => {};
    const abort = (why: unknown): void => {
      if (aborted) return;
      aborted = true;
      reason = why;
      ac?.abort(why);
      wake();
    };
    const onParent = () => abort(parent!.reason);
    if (parent) {
      if (parent.aborted) abort(parent.reason);
      else parent.addEventListener("abort", onParent, { once: true });
    }
    let stopTimer = (): void => {};
    let deadline: number | undefined;
    if (timeoutMs !== undefined && timeoutMs > 0) {
      deadline = Date.now() + timeoutMs;
      stopTimer = after(timeoutMs, () => abort(new DeadlineExceeded(row.hook)));
    }
    const ctx: HookContext = {
      hook: row.hook,
      deadline,
      get signal(): AbortSignal {
        if (!ac) {
          ac = new AbortController();
          if (aborted) ac.abort(reason);
        }
        return ac.signal;
      },
      set signal(s: AbortSignal) {
        Object.defineProperty(this, "signal", { value: s, writable: true, enumerable: true, configurable: true });
      },
      log: this.log,
      carrier,
    };
    const run: Promise<Settled> = (async () => this.invoke(row, payload, ctx))().then(
      (value) => ({ done: true, value }),
      (error) => ({ done: false, error }),
    );
    track?.(run);
    // The handler's outcome, or undefined once the call is aborted (the
    // handler, left running, is not waited for).
    const r = await new Promise<Settled | undefined>((resolve) => {
      wake = () => resolve(undefined);
      if (aborted) resolve(undefined);
      else run.then(resolve);
    });
    stopTimer();
    parent?.removeEventListener("abort", onParent);
    if (r === undefined || aborted) {
      // Late, even if it raced the deadline and won: the host has been
      // told, or will be, that the call ended.
      return { ok: false, failure: contextFailure(reason, row.hook) };
    }
    if (!r.done) return { ok: false, failure: this.handlerFailure(row.hook, r.error) };
    try {
      const bytes = row.response.encode(row.toResponse(r.value ?? null));
      return { ok: true, answer: row.observer ? null : r.value ?? null, bytes };
    } catch (e) {
      const msg = e instanceof MalformedAnswer ? e.message : `the plugin could not encode its ${row.hook} answer: ${(e as Error).message}`;
      // DEBUG, not ERROR: the host warns of the failure once per plugin,
      // hook and kind; a handler wrong on every call must not flood the log.
      this.log.debug("a hook handler answered with a value of the wrong shape", { hook: row.hook, error: msg });
      return { ok: false, failure: { kind: "ERROR", message: msg } };
    }
  }

  private handlerFailure(hook: string, e: unknown): Failure {
    if (!isBug(e)) {
      const err = e as Error;
      // The host logs the failure (once per plugin, hook and kind); the
      // stack is for whoever runs the host verbosely.
      this.log.debug("a hook handler failed", { hook, error: err.message, stack: err.stack });
      return { kind: "ERROR", message: err.message };
    }
    // A bug in the handler (a TypeError and the like) or a throw of a
    // value that is not an Error: what a Go plugin would call a panic.
    const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    this.log.debug("a hook handler failed with a bug", { hook, error: text, stack: e instanceof Error ? e.stack : undefined });
    return { kind: "PANIC", message: `panic in ${hook} handler: ${text}` };
  }

  /**
   * Answers a stretch as hookstretch.Run does: each stage in order under
   * its own deadline, each answer handed to emit as soon as it is known;
   * it stops after a failed stage, a block, an ask, a decision that breaks the
   * rules, a provide that gave nothing, and once signal is aborted (a
   * stage not started then is emitted as a failure, and a provide stage is
   * never started once cancelled).
   */
  async stretch(
    stages: StretchStage[],
    call: T.ToolCallRequest,
    signal: CallSignal,
    emit: (o: StageOutcome) => void,
    track?: (handler: Promise<unknown>) => void,
    carrier?: Carrier,
  ): Promise<void> {
    const start = process.hrtime.bigint();
    const hooks = stages.map((s) => s.hook);
    if (!LEGAL_STRETCHES.some((l) => l.length === hooks.length && l.every((h, i) => h === hooks[i]))) {
      emit({ ok: false, failure: { kind: "ERROR", message: `not a legal stretch: stages [${hooks.join(", ")}]` } });
      return;
    }
    for (const st of stages) {
      if (!(st.timeoutMs > 0)) {
        emit({ ok: false, failure: { kind: "ERROR", message: `not a legal stretch: stage ${st.hook} has timeout ${st.timeoutMs}ms, want a positive one` } });
        return;
      }
    }
    let provided: T.ToolResult | undefined;
    for (const st of stages) {
      if (signal.aborted) {
        const f = contextFailure(signal.reason, st.hook);
        emit({ ok: false, failure: { kind: f.kind, message: `${st.hook} not started: ${f.message}` } });
        return;
      }
      const row = rowOf(st.hook)!;
      if (st.hook === "pre_tool_call") {
        const o = await this.call(row, call, st.timeoutMs, signal, track, carrier);
        emit(o);
        if (!o.ok) return;
        const d = o.answer as T.PreToolCallDecision | null;
        if (d === null) continue;
        if (d.block || d.ask || (d.modifiedArgs !== undefined && d.modifiedArgs !== null && !isJSONObject(d.modifiedArgs))) return;
        if (d.modifiedArgs !== undefined && d.modifiedArgs !== null) {
          const text = JSON.stringify(d.modifiedArgs);
          call = { ...call, arguments: text, args: parseJSON(text) };
        }
      } else if (st.hook === "pre_tool_call_can_provide_result") {
        const o = await this.call(row, call, st.timeoutMs, signal, track, carrier);
        emit(o);
        if (!o.ok || o.answer === null) return;
        provided = o.answer as T.ToolResult;
      } else {
        const ev: T.ToolCallOutcome = {
          sessionId: call.sessionId,
          callId: call.callId,
          name: call.name,
          arguments: call.arguments,
          args: call.args,
          result: asJSON(provided!),
          status: `provided_by:${this.manifest.name}`,
          durationNs: Number(process.hrtime.bigint() - start),
          origin: call.origin,
        };
        emit(await this.call(row, ev, st.timeoutMs, signal, track, carrier));
      }
    }
  }
}

/**
 * Model stages: the hooks of each side of a model call, in firing order. A
 * model stage is two or more hooks of one side, in this order.
 */
export const PRE_CALL_HOOKS: readonly string[] = ["pre_tool_list_finalized", "pre_api_request_mutable", "pre_llm_call_can_provide_response"];
export const POST_CALL_HOOKS: readonly string[] = ["post_llm_call_can_reissue", "transform_llm_output"];
export const MODEL_HOOKS: ReadonlySet<string> = new Set([...PRE_CALL_HOOKS, ...POST_CALL_HOOKS]);

/** Whether hooks is a model stage the host may send. */
export function legalModelStage(hooks: readonly string[]): boolean {
  if (hooks.length < 2) return false;
  for (const side of [PRE_CALL_HOOKS, POST_CALL_HOOKS]) {
    if (hooks.every((h) => side.includes(h))) {
      const at = hooks.map((h) => side.indexOf(h));
      return at.every((a, i) => i === 0 || at[i - 1] < a);
    }
  }
  return false;
}

// RequestPatch's fields, by the names fields_set gives them.
const PATCH_FIELDS: ReadonlyArray<[string, string]> = [
  ["model", "model"],
  ["system", "system"],
  ["maxTokens", "max_tokens"],
  ["temperature", "temperature"],
];

/**
 * Answers a model stage: each hook in order under its own deadline counted
 * from its start (none for a stage whose timeout is 0), each outcome handed
 * to emit, with whether it ends the stage, as soon as known. Each stage's
 * request is built from the ModelStage with the plugin's own earlier
 * answers applied, read back from the bytes the host gets: a tool list it
 * replaced becomes the request's tools, and its patch's fields replace the
 * request's but for those in fields_set (a plugin above set them, and the
 * host ignores this one's writes). It stops after a failure, a response
 * provided, a reissue, the last stage, or once signal is aborted (a stage
 * not started then is emitted as a failure).
 */
export async function runModelStage(
  rt: Runtime,
  stages: StretchStage[],
  ms: ModelStage,
  signal: CallSignal,
  emit: (o: StageOutcome, stop: boolean) => void,
  track?: (handler: Promise<unknown>) => void,
  carrier?: Carrier,
): Promise<void> {
  const call: { [k: string]: any } = ms.call ?? {};
  const req: { [k: string]: any } = { ...(call.request ?? {}) };
  const fieldsSet = new Set(ms.fieldsSet ?? []);
  for (const st of stages) {
    if (signal.aborted) {
      const f = contextFailure(signal.reason, st.hook);
      emit({ ok: false, failure: { kind: f.kind, message: `${st.hook} not started: ${f.message}` } }, true);
      return;
    }
    const row = rowOf(st.hook)!;
    let msg: { [k: string]: any };
    switch (st.hook) {
      case "pre_tool_list_finalized":
        msg = { sessionId: call.sessionId, iteration: call.iteration, tools: req.tools };
        break;
      case "pre_api_request_mutable":
        msg = { sessionId: call.sessionId, iteration: call.iteration, request: req };
        break;
      case "pre_llm_call_can_provide_response":
        msg = { sessionId: call.sessionId, iteration: call.iteration, route: call.route, request: req };
        break;
      case "post_llm_call_can_reissue":
        msg = call;
        break;
      default: // transform_llm_output: the whole answer, never a window
        msg = { sessionId: call.sessionId, text: ms.text ?? "" };
    }
    const o = await rt.call(row, row.payload(msg), st.timeoutMs > 0 ? st.timeoutMs : undefined, signal, track, carrier);
    if (!o.ok) {
      emit(o, true);
      return;
    }
    const res: { [k: string]: any } = row.response.decode(o.bytes);
    const stop = (st.hook === "pre_llm_call_can_provide_response" && !!res.response) || (st.hook === "post_llm_call_can_reissue" && !!res.reissue);
    emit(o, stop);
    if (stop) return;
    if (st.hook === "pre_tool_list_finalized" && res.override) {
      req.tools = res.override.tools ?? [];
    } else if (st.hook === "pre_api_request_mutable" && res.patch) {
      const patch = res.patch;
      for (const [field, name] of PATCH_FIELDS) {
        if (patch[field] !== undefined && patch[field] !== null && !fieldsSet.has(name)) req[field] = patch[field];
      }
      if (patch.messages && !fieldsSet.has("messages")) req.messages = patch.messages.messages ?? [];
      if (patch.tools && !fieldsSet.has("tools")) req.tools = patch.tools.tools ?? [];
    }
  }
}

/** The kind of value v is, for a message about a plugin's mistake. */
function typeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}

function isJSONObject(v: unknown): boolean {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The failure of a call whose signal was aborted for reason. */
export function contextFailure(reason: unknown, hook: string): Failure {
  if (reason instanceof DeadlineExceeded) return { kind: "DEADLINE_EXCEEDED", message: reason.message };
  if (reason instanceof HostCancelled) return { kind: "CANCELLED", message: `${hook}: ${reason.message}` };
  return { kind: "CANCELLED", message: `${hook}: cancelled${reason instanceof Error ? ": " + reason.message : ""}` };
}

/**
 * The one rule for what a tool result holds (hooks.ToolResult.AsJSON):
 * content that is not JSON is taken as text and becomes a JSON string
 * holding it, written as Go writes it. Lone surrogates, which UTF-8
 * cannot carry, first become U+FFFD, as the host repairs the same content,
 * so that a transform sees the same text whichever side made it JSON
 * (JSON.stringify would write them as escape text).
 */
export function asJSON(r: T.ToolResult): T.ToolResult {
  const text = wellFormedText(r.content);
  try {
    JSON.parse(text);
    return text === r.content ? r : { ...r, content: text };
  } catch {
    const content = JSON.stringify(text).replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
    return { ...r, content };
  }
}
