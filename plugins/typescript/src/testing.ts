// @hookhost/plugin/testing: call a plugin's hooks in-process, through the
// same encoding, decoding and dispatch as the wire (protocol version 2's
// stream, stretches, model stages and observer batches included), with no
// host and no process. Works with
// node:test or any other runner.

import { Fields, Level, setPluginLogger, setSink, Sink } from "./log";
import { FailureKind, Manifest, Plugin, Runtime } from "./plugin";
import { configText, HookStream, manifestMessage } from "./server";
import type * as T from "./types";
import { matchGlob } from "./glob";
import { TOOL_HOOKS } from "./generated/catalogue";
import { HarnessHooks } from "./generated/harness";
import { checkAnswer, DEFAULT_MAX_RESULT_SIZE } from "./validate";
import { ConfigureRequestCodec, HostMessageCodec, ManifestCodec, ModelStageCodec, parseJSON, PluginMessageCodec, rowOf } from "./wire";


/** A hook call that failed, as the host would see it. */
export class HookFailure extends Error {
  /**
   * The protocol's failure kind, or MALFORMED for an answer the host
   * refuses by its rules (it then counts a failure and takes no opinion).
   */
  constructor(readonly kind: FailureKind | "MALFORMED", message: string) {
    super(`${kind}: ${message}`);
    this.name = "HookFailure";
  }
}

/** One log line the plugin wrote. */
export interface LogLine {
  level: Level;
  message: string;
  fields: Fields;
}

/** One stage's answer in a stretch, a model stage or an observer batch: the answer (null: no opinion) or the failure. */
export type StageResult = { answer: unknown; last: boolean } | { failure: { kind: FailureKind; message: string }; last: boolean };

export interface CallOptions {
  /** The stage's deadline in milliseconds (default 5000). */
  timeoutMs?: number | undefined;
  /** Aborting it cancels the call, as the host's Cancel does. */
  signal?: AbortSignal | undefined;
}

export interface HarnessOptions<C> {
  /** The config table, as the host would pass it (default {}). */
  config?: C | T.JsonObject | undefined;
  /** Also write the plugin's log lines to stderr. */
  echoLogs?: boolean | undefined;
  /** Accept tools outside the plugin's namespace, as plugins.entries.<name>.allow_tool_override does. */
  allowToolOverride?: boolean | undefined;
  /** The host's max_result_size for the plugin (default 4 MiB). */
  maxResultSize?: number | undefined;
}

type Pending = {
  resolve: (r: StageResult[]) => void;
  results: StageResult[];
  /** Decodes stage i's answer bytes as the host does. */
  decode: (b: Buffer, i: number) => unknown;
};

/**
 * A plugin under test. Create it with harness(). Its per-hook methods
 * (preToolCall, ...) are HarnessHooks's, written from the hook catalogue;
 * a tool hook's payload takes the arguments as `args` (a value) or
 * `arguments` (JSON text).
 */
export class Harness extends HarnessHooks {
  readonly logs: LogLine[] = [];
  private readonly stream: HookStream;
  private readonly pending = new Map<string, Pending>();
  private nextId = 1;
  private restoreSink: Sink | undefined;

  /** @internal */
  constructor(readonly runtime: Runtime, readonly manifest: Manifest, echo: boolean, private readonly maxResultSize: number) {
    super();
    const previous = setSink((line, level, message, fields) => {
      this.logs.push({ level, message, fields });
      if (echo) previous(line, level, message, fields);
    });
    this.restoreSink = previous;
    this.stream = new HookStream(runtime, (bytes) => this.onMessage(bytes));
  }

  private onMessage(bytes: Buffer): void {
    const m = PluginMessageCodec.decode(bytes);
    const p = this.pending.get(m.id ?? "0");
    if (!p) throw new Error(`the plugin answered call ${m.id}, which is not in flight`);
    const stage = m.stage ?? 0;
    if (stage !== p.results.length) throw new Error(`the plugin answered stage ${stage} of call ${m.id}, want stage ${p.results.length}`);
    const last = m.last === true;
    if (m.failure) {
      p.results.push({ failure: { kind: (m.failure.kind ?? "KIND_UNSPECIFIED") as FailureKind, message: m.failure.message ?? "" }, last });
    } else {
      p.results.push({ answer: p.decode(m.answer ?? Buffer.alloc(0), stage), last });
    }
    if (last) {
      this.pending.delete(m.id ?? "0");
      p.resolve(p.results);
    }
  }

  private send(hooks: string[], timeoutMs: number, payload: Buffer, signal: AbortSignal | undefined, payloads: Buffer[] = []): Promise<StageResult[]> {
    const id = String(this.nextId++);
    const rows = hooks.map((h) => rowOf(h));
    return new Promise<StageResult[]>((resolve) => {
      const decode = (b: Buffer, i: number) => {
        const row = rows[i];
        return row ? row.fromResponse(row.response.decode(b)) : null;
      };
      this.pending.set(id, { resolve, results: [], decode });
      const cancel = () => {
        this.stream.receive(HostMessageCodec.encode({ cancel: { id } }));
        // The plugin sends nothing for a cancelled call: neither does the host wait.
        const p = this.pending.get(id);
        if (p) {
          this.pending.delete(id);
          resolve([...p.results, { failure: { kind: "CANCELLED", message: "the call was cancelled" }, last: true }]);
        }
      };
      if (signal?.aborted) setImmediate(cancel);
      else signal?.addEventListener("abort", cancel, { once: true });
      this.stream.receive(
        HostMessageCodec.encode({ call: { id, stages: hooks.map((hook) => ({ hook, timeoutNs: String(Math.round(timeoutMs * 1e6)) })), payload, payloads } }),
      );
    });
  }

  /**
   * Calls one hook with a payload (fields left out take their zero
   * values) and returns its answer, null for no opinion. A failure is
   * thrown as a HookFailure.
   */
  async call(hook: T.HookName, payload: object, opts: CallOptions = {}): Promise<unknown> {
    if (!this.asked(hook, payload)) return null;
    const row = rowOf(hook);
    const bytes = row ? row.request.encode(row.toRequest(payload)) : Buffer.alloc(0);
    const [r] = await this.send([hook], opts.timeoutMs ?? 5000, bytes, opts.signal);
    if ("failure" in r) throw new HookFailure(r.failure.kind, r.failure.message);
    const problem = checkAnswer(hook, r.answer, this.maxResultSize);
    if (problem !== undefined) throw new HookFailure("MALFORMED", `plugin ${JSON.stringify(this.manifest.name)}: ${hook}: malformed answer: ${problem}`);
    return r.answer;
  }

  /**
   * The hooks the plugin does not serve as configured (its `unserved`), as
   * the host reads them from Configure's answer: call() does not ask them.
   */
  get unserved(): T.HookName[] {
    return [...this.runtime.unserved];
  }

  /**
   * Whether the host would ask the plugin this hook for this payload: it
   * serves the hook, as configured, and for a tool hook its matchers cover
   * the tool.
   */
  private asked(hook: T.HookName, payload: object): boolean {
    if (!this.manifest.hooks.includes(hook) || this.runtime.unserved.includes(hook)) return false;
    if (!TOOL_HOOKS.includes(hook)) return true;
    const globs = (this.manifest.hookMatchers as Record<string, string[] | undefined>)[hook] ?? this.manifest.matchers;
    const name = (payload as { name?: string }).name ?? "";
    return globs.length === 0 || globs.some((g) => matchGlob(g, name));
  }

  /**
   * Asks a stretch (consecutive stages of the tool pipeline for one call)
   * and returns every stage's result as the plugin sent it.
   */
  async stretch(hooks: T.ToolHookName[], call: Partial<T.ToolCallRequest>, opts: CallOptions = {}): Promise<StageResult[]> {
    const row = rowOf("pre_tool_call")!;
    return this.send(hooks, opts.timeoutMs ?? 5000, row.request.encode(row.toRequest(call)), opts.signal);
  }

  /**
   * Asks a model stage (several model-side hooks of one model call in one
   * exchange) and returns every stage's result as the plugin sent it. For
   * the pre-call hooks (pre_tool_list_finalized, pre_api_request_mutable,
   * pre_llm_call_can_provide_response), `call.request` is the request as
   * the plugins above left it and `fieldsSet` the patch fields they set;
   * for post_llm_call_can_reissue and transform_llm_output, `call.response`
   * is the model's answer and `text` the answer's text as left above.
   */
  async modelStage(
    hooks: T.HookName[],
    call: Partial<T.LlmCall>,
    opts: CallOptions & { fieldsSet?: string[] | undefined; text?: string | undefined } = {},
  ): Promise<StageResult[]> {
    const row = rowOf("post_llm_call_can_reissue")!;
    const payload = ModelStageCodec.encode({ call: row.toRequest(call), fieldsSet: opts.fieldsSet ?? [], text: opts.text ?? "" });
    return this.send(hooks, opts.timeoutMs ?? 5000, payload, opts.signal);
  }

  /**
   * Sends observer events in one call, as the host does when several are
   * queued for the plugin, and returns every event's result (answer null
   * when handled, else the failure).
   */
  async observerBatch(events: [T.HookName, object][], opts: CallOptions = {}): Promise<StageResult[]> {
    const payloads = events.map(([hook, ev]) => {
      const row = rowOf(hook);
      if (!row) throw new Error(`no hook is named ${JSON.stringify(hook)}`);
      return row.request.encode(row.toRequest(ev));
    });
    return this.send(events.map(([hook]) => hook), opts.timeoutMs ?? 5000, Buffer.alloc(0), opts.signal, payloads);
  }

  /** Lines logged at `level`, or at every level. */
  logged(level?: Level): LogLine[] {
    return level ? this.logs.filter((l) => l.level === level) : this.logs;
  }

  /** Ends the stream (cancelling calls in flight) and stops capturing the log. */
  close(): void {
    this.stream.close();
    if (this.restoreSink) setSink(this.restoreSink);
    this.restoreSink = undefined;
  }
}

/**
 * Loads a plugin as the host would: derives and checks its manifest
 * (Describe), and hands it its config (Configure). A bad manifest or a
 * refused config rejects with the reason the host would report.
 */
export async function harness<C>(plugin: Plugin<C>, opts: HarnessOptions<C> = {}): Promise<Harness> {
  const rt = new Runtime(plugin as Plugin<any>);
  const m = ManifestCodec.decode(manifestMessage(rt));
  const manifest: Manifest = {
    name: m.name ?? "",
    version: m.version ?? "",
    hooks: (m.hooks ?? []) as T.HookName[],
    matchers: m.matchers ?? [],
    tools: (m.tools ?? []).map((t) => {
      const schema = parseJSON(t.inputSchema?.toString("utf8") ?? "");
      return { name: t.name ?? "", description: t.description ?? "", ...(schema !== undefined ? { inputSchema: schema as T.JsonObject } : {}) };
    }),
    hookMatchers: Object.fromEntries((m.hookMatchers ?? []).map((h) => [h.hook ?? "", h.matchers ?? []])),
    hookOptions: Object.fromEntries((m.hookOptions ?? []).map((h) => [h.hook ?? "", {
      windowBytes: Number(h.windowBytes ?? 0), overlapBytes: Number(h.overlapBytes ?? 0), decideAfterBytes: Number(h.decideAfterBytes ?? 0),
    }])),
  };
  if (!opts.allowToolOverride) {
    for (const t of manifest.tools) {
      if (!t.name.startsWith(manifest.name + "__")) {
        throw new Error(
          `tool ${JSON.stringify(t.name)} is outside the plugin's namespace ${JSON.stringify(manifest.name + "__")}: the host refuses it ` +
            `unless plugins.entries.${manifest.name}.allow_tool_override is set (pass {allowToolOverride: true} to test it so)`,
        );
      }
    }
  }
  const h = new Harness(rt, manifest, opts.echoLogs ?? false, opts.maxResultSize ?? DEFAULT_MAX_RESULT_SIZE);
  // The package's `log` is the plugin's logger, as under serve().
  setPluginLogger(rt.log);
  try {
    await rt.configure(configText(ConfigureRequestCodec.encode({ configJson: Buffer.from(JSON.stringify(opts.config ?? {}), "utf8") })));
  } catch (e) {
    h.close();
    throw e;
  }
  return h;
}
