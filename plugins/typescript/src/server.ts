// The gRPC services a plugin process serves: the hook service of protocol
// version 2 (one stream carrying every call) or version 1 (one RPC per
// hook), go-plugin's health service and its controller. Messages are
// encoded and decoded here, by the same code the test harness drives.

import * as grpc from "@grpc/grpc-js";
import { codec } from "./proto";
import { OBSERVERS } from "./generated/catalogue";
import { CallSignal, Cancellation, Carrier, Failure, HostCancelled, PluginFault, legalModelStage, MODEL_HOOKS, POST_CALL_HOOKS, PRE_CALL_HOOKS, runModelStage, Runtime, StageOutcome } from "./plugin";
import type { HookCall__Output } from "./generated/hookhost/plugin/v2/HookCall";
import type { PluginMessage } from "./generated/hookhost/plugin/v2/PluginMessage";
import { ConfigureRequestCodec, HostMessageCodec, ManifestCodec, ModelStageCodec, encodePluginMessage, rowOf, TABLE } from "./wire";
import type { Manifest as PbManifest } from "./generated/hookhost/plugin/v1/Manifest";
import type * as T from "./types";

/**
 * How many hook calls one stream runs at once. Handlers that ignore their
 * signal keep running after the host gave up on them; past this many the
 * plugin answers new calls with a failure rather than holding ever more.
 */
export const MAX_IN_FLIGHT = 4096;

/** The manifest as the Manifest message; lane says the plugin serves the host's lane. */
export function manifestMessage(rt: Runtime, lane = false): Buffer {
  const m = rt.manifest;
  const pb: PbManifest = {
    name: m.name,
    version: m.version,
    hooks: m.hooks,
    matchers: m.matchers,
    tools: m.tools.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(t.inputSchema), "utf8"),
    })),
    hookMatchers: Object.entries(m.hookMatchers).map(([hook, matchers]) => ({ hook, matchers })),
    hookOptions: Object.entries(m.hookOptions ?? {}).map(([hook, o]) => ({
      hook,
      windowBytes: o?.windowBytes ?? 0,
      overlapBytes: o?.overlapBytes ?? 0,
      decideAfterBytes: o?.decideAfterBytes ?? 0,
    })),
    // Present, even with no keys, means declared.
    ...(m.config === undefined ? {} : { config: { keys: m.config } }),
    // HookStream answers both: the host may then ask consecutive
    // model-side hooks, and several observer events, in one exchange each.
    modelStages: true,
    observerBatches: true,
    lane,
  };
  return ManifestCodec.encode(pb);
}

/** Configure's request bytes → the config's JSON text, or a thrown error. */
export function configText(bytes: Buffer): string {
  const req = ConfigureRequestCodec.decode(bytes);
  return req.configJson ? req.configJson.toString("utf8") : "";
}

// --- protocol version 2 ---------------------------------------------------------

/**
 * One Hooks stream, the plugin's side: every call runs concurrently under
 * its own Cancellation, and each answer goes out as soon as it is known.
 * `send` writes one PluginMessage; the stream ends with `close`. carrier
 * is what the handlers' context says the calls came by.
 */
export class HookStream {
  /** MAX_IN_FLIGHT, but tests may lower it. */
  maxInFlight = MAX_IN_FLIGHT;
  private readonly calls = new Map<string, Cancellation>();
  private ended = false;

  constructor(private readonly rt: Runtime, private readonly send: (m: Buffer) => void, private readonly carrier?: Carrier) {}

  /** Handles one HostMessage's bytes. Returns false for bytes that are not one. */
  receive(bytes: Buffer): boolean {
    let m;
    try {
      m = HostMessageCodec.decode(bytes);
    } catch (e) {
      this.rt.log.error("the host sent a message that is not a HostMessage; ending the stream", { error: (e as Error).message });
      return false;
    }
    if (m.call) this.start(m.call);
    else if (m.cancel) this.calls.get(m.cancel.id ?? "0")?.abort(new HostCancelled());
    return true;
  }

  /** The stream is over: every call is cancelled and nothing more is sent. */
  close(): void {
    this.ended = true;
    for (const ac of this.calls.values()) ac.abort(new HostCancelled());
    this.calls.clear();
  }

  private write(m: PluginMessage): void {
    if (this.ended) return;
    this.send(encodePluginMessage(m));
  }

  private fail(id: string, stage: number, f: Failure): void {
    this.write({ id, stage, failure: { kind: f.kind, message: f.message }, last: true });
  }

  private answer(id: string, stage: number, o: StageOutcome, last: boolean): void {
    if (o.ok) this.write({ id, stage, answer: o.bytes, last });
    else this.fail(id, stage, o.failure);
  }

  private start(call: HookCall__Output): void {
    const id = call.id ?? "0";
    const stages = call.stages ?? [];
    if (stages.length === 0) {
      this.fail(id, 0, { kind: "BAD_REQUEST", message: "a hook call with no stages" });
      return;
    }
    if (this.calls.has(id)) {
      this.fail(id, 0, { kind: "BAD_REQUEST", message: `call id ${id} is already in flight` });
      return;
    }
    if (this.calls.size >= this.maxInFlight) {
      this.fail(id, 0, { kind: "ERROR", message: `the plugin is already running ${this.maxInFlight} hook calls; it answers no more until some finish` });
      return;
    }
    const ac = new Cancellation();
    this.calls.set(id, ac);
    // A handler that ignores its signal keeps running after its answer (a
    // deadline failure) went out: the call stays counted until it returns.
    // Counted rather than awaited together: a call's answer costs a few
    // promises fewer.
    let pending = 1; // the call's run, and each handler it started
    const release = () => {
      if (--pending === 0 && this.calls.get(id) === ac) this.calls.delete(id);
    };
    const track = (h: Promise<unknown>) => {
      pending++;
      h.then(release, release);
    };
    const payload = call.payload ?? Buffer.alloc(0);
    const payloads = call.payloads ?? [];
    let run: Promise<void>;
    if (payloads.length > 0 || (stages.length > 1 && stages.every((s) => OBSERVERS.includes(s.hook ?? "")))) {
      run = this.batch(id, stages, payloads, payload, ac, track);
    } else if (stages.length === 1) {
      run = this.one(id, stages[0].hook ?? "", Number(stages[0].timeoutNs ?? 0), payload, ac, track);
    } else if (stages.some((s) => MODEL_HOOKS.has(s.hook ?? ""))) {
      run = this.modelStage(id, stages, payload, ac, track);
    } else {
      run = this.stretch(id, stages, payload, ac, track);
    }
    run.then(release, (e) => {
      try {
        // Guards the SDK itself: one bad call never takes the process down.
        this.rt.log.error("the SDK failed answering a hook call", { error: (e as Error)?.stack ?? String(e) });
        if (!cancelledByHost(ac)) this.fail(id, 0, { kind: "PANIC", message: `the SDK failed answering the call: ${String(e)}` });
      } finally {
        release();
      }
    });
  }

  private async one(id: string, hook: string, timeoutNs: number, payload: Buffer, signal: CallSignal, track: (h: Promise<unknown>) => void): Promise<void> {
    const row = rowOf(hook);
    if (!row) {
      this.fail(id, 0, { kind: "UNKNOWN_HOOK", message: `the plugin does not know hook ${JSON.stringify(hook)}` });
      return;
    }
    let req;
    try {
      req = row.request.decode(payload);
    } catch (e) {
      this.fail(id, 0, { kind: "BAD_REQUEST", message: `undecodable ${hook} request: ${(e as Error).message}` });
      return;
    }
    // A host with no deadline of its own sends none (0).
    const o = await this.rt.call(row, row.payload(req), timeoutNs > 0 ? timeoutNs / 1e6 : undefined, signal, track, this.carrier);
    if (cancelledByHost(signal)) return; // no one waits for it
    this.answer(id, 0, o, true);
  }

  private async stretch(
    id: string,
    stages: NonNullable<HookCall__Output["stages"]>,
    payload: Buffer,
    signal: CallSignal,
    track: (h: Promise<unknown>) => void,
  ): Promise<void> {
    const hooks: string[] = [];
    for (let i = 0; i < stages.length; i++) {
      const h = stages[i].hook ?? "";
      if (!rowOf(h)) {
        // Answered as stage 0: no stage of the call has run.
        this.fail(id, 0, { kind: "UNKNOWN_HOOK", message: `the plugin does not know hook ${JSON.stringify(h)} (stage ${i} of the call)` });
        return;
      }
      hooks.push(h);
    }
    const row = rowOf("pre_tool_call")!;
    let call: T.ToolCallRequest;
    try {
      call = row.payload(row.request.decode(payload)) as T.ToolCallRequest;
    } catch (e) {
      this.fail(id, 0, { kind: "BAD_REQUEST", message: `undecodable stretch request: ${(e as Error).message}` });
      return;
    }
    let next = 0;
    let over = false;
    await this.rt.stretch(
      stages.map((s, i) => ({ hook: hooks[i], timeoutMs: Number(s.timeoutNs ?? 0) / 1e6 })),
      call,
      signal,
      (o) => {
        if (over || next >= hooks.length) return;
        const i = next++;
        over = !o.ok || i === hooks.length - 1 || stops(hooks[i], o.answer);
        if (!cancelledByHost(signal)) this.answer(id, i, o, over);
      },
      track,
      this.carrier,
    );
    if (!over && !cancelledByHost(signal)) {
      // The stretch stopped where the rules do not end it (a decision that
      // breaks them, which the host refuses as malformed): say no more comes.
      this.fail(id, next, { kind: "ERROR", message: `the plugin ended the stretch before stage ${next}` });
    }
  }

  /** Fails the call at stage 0 when a stage names a hook this SDK does not know; returns the hooks otherwise. */
  private known(id: string, stages: NonNullable<HookCall__Output["stages"]>): string[] | undefined {
    const hooks = stages.map((s) => s.hook ?? "");
    const i = hooks.findIndex((h) => !rowOf(h));
    if (i < 0) return hooks;
    this.fail(id, 0, { kind: "UNKNOWN_HOOK", message: `the plugin does not know hook ${JSON.stringify(hooks[i])} (stage ${i} of the call)` });
    return undefined;
  }

  private async modelStage(
    id: string,
    stages: NonNullable<HookCall__Output["stages"]>,
    payload: Buffer,
    signal: CallSignal,
    track: (h: Promise<unknown>) => void,
  ): Promise<void> {
    const hooks = this.known(id, stages);
    if (!hooks) return;
    if (!legalModelStage(hooks)) {
      this.fail(id, 0, {
        kind: "BAD_REQUEST",
        message: `not a legal model stage: stages [${hooks.join(", ")}] (want two or more of ${PRE_CALL_HOOKS.join(", ")} in this order, or ${POST_CALL_HOOKS.join(", ")})`,
      });
      return;
    }
    let ms;
    try {
      ms = ModelStageCodec.decode(payload);
    } catch (e) {
      this.fail(id, 0, { kind: "BAD_REQUEST", message: `undecodable model stage: ${(e as Error).message}` });
      return;
    }
    let next = 0;
    let over = false;
    try {
      await runModelStage(
        this.rt,
        stages.map((s, i) => ({ hook: hooks[i], timeoutMs: Number(s.timeoutNs ?? 0) / 1e6 })),
        ms,
        signal,
        (o, stop) => {
          if (over || next >= hooks.length) return;
          const i = next++;
          over = !o.ok || stop || i === hooks.length - 1;
          if (!cancelledByHost(signal)) this.answer(id, i, o, over);
        },
        track,
        this.carrier,
      );
    } catch (e) {
      this.rt.log.error("the SDK failed answering a model stage", { error: (e as Error)?.stack ?? String(e) });
      if (!over && !cancelledByHost(signal)) {
        over = true;
        this.fail(id, next, { kind: "PANIC", message: `the SDK failed answering the model stage: ${String(e)}` });
      }
      return;
    }
    if (!over && !cancelledByHost(signal)) {
      this.fail(id, next, { kind: "ERROR", message: `the plugin ended the model stage before stage ${next}` });
    }
  }

  /**
   * An observer batch: stage i's event is payloads[i]. Every stage is
   * answered, in order, a failed one too (an event of a hook that is no
   * observer this SDK knows: UNKNOWN_HOOK); the final answer is last. Once
   * the call is cancelled nothing more is sent.
   */
  private async batch(
    id: string,
    stages: NonNullable<HookCall__Output["stages"]>,
    payloads: Buffer[],
    payload: Buffer,
    signal: CallSignal,
    track: (h: Promise<unknown>) => void,
  ): Promise<void> {
    const hooks = stages.map((s) => s.hook ?? "");
    if (hooks.length === 0 || payloads.length !== hooks.length || payload.length > 0) {
      this.fail(id, 0, {
        kind: "BAD_REQUEST",
        message: `a malformed observer batch: ${hooks.length} stages, ${payloads.length} payloads, payload set: ${payload.length > 0}`,
      });
      return;
    }
    let answered = 0;
    try {
      for (let i = 0; i < hooks.length; i++) {
        if (signal.aborted) return; // cancelled, or the stream ended: no one reads more
        const o = await this.observe(hooks[i], payloads[i], Number(stages[i].timeoutNs ?? 0), signal, track);
        if (cancelledByHost(signal)) return;
        const last = i === hooks.length - 1;
        if (o.ok) this.write({ id, stage: i, answer: Buffer.alloc(0), last });
        else this.write({ id, stage: i, failure: { kind: o.failure.kind, message: o.failure.message }, last });
        answered = i + 1;
      }
    } catch (e) {
      this.rt.log.error("the SDK failed answering an observer batch", { error: (e as Error)?.stack ?? String(e) });
      if (answered < hooks.length && !cancelledByHost(signal)) {
        this.fail(id, answered, { kind: "PANIC", message: `the SDK failed answering the observer batch: ${String(e)}` });
      }
    }
  }

  /** One event of an observer batch, under its own deadline (none for 0). */
  private async observe(hook: string, payload: Buffer, timeoutNs: number, signal: CallSignal, track: (h: Promise<unknown>) => void): Promise<StageOutcome> {
    const row = rowOf(hook);
    if (!row || !OBSERVERS.includes(hook)) return { ok: false, failure: { kind: "UNKNOWN_HOOK", message: `the plugin does not know observer hook ${JSON.stringify(hook)}` } };
    let event: unknown;
    try {
      event = row.payload(row.request.decode(payload));
    } catch (e) {
      return { ok: false, failure: { kind: "BAD_REQUEST", message: `undecodable ${hook} request: ${(e as Error).message}` } };
    }
    return this.rt.call(row, event, timeoutNs > 0 ? timeoutNs / 1e6 : undefined, signal, track, this.carrier);
  }
}

/** Whether the rules end a stretch after hook answered a: a block, an ask, or a provide that gave nothing. */
function stops(hook: string, a: unknown): boolean {
  if (hook === "pre_tool_call") return a !== null && typeof a === "object" && (!!(a as T.PreToolCallDecision).block || !!(a as T.PreToolCallDecision).ask);
  if (hook === "pre_tool_call_can_provide_result") return a === null;
  return false;
}

function cancelledByHost(signal: CallSignal): boolean {
  return signal.aborted && signal.reason instanceof HostCancelled;
}

// --- gRPC service definitions ------------------------------------------------------

const raw = (b: Buffer): Buffer => b;

function method(path: string, requestStream = false, responseStream = false): grpc.MethodDefinition<Buffer, Buffer> {
  return { path, requestStream, responseStream, requestSerialize: raw, requestDeserialize: raw, responseSerialize: raw, responseDeserialize: raw };
}

/** A failure as a gRPC status, as the Go server's failureCode maps it. */
function statusOf(f: Failure): grpc.ServiceError {
  const codes: Record<string, grpc.status> = {
    PANIC: grpc.status.INTERNAL,
    DEADLINE_EXCEEDED: grpc.status.DEADLINE_EXCEEDED,
    CANCELLED: grpc.status.CANCELLED,
    UNKNOWN_HOOK: grpc.status.UNIMPLEMENTED,
    BAD_REQUEST: grpc.status.INVALID_ARGUMENT,
  };
  const metadata = new grpc.Metadata();
  // codes.Internal is also gRPC's own: the trailer tells the host it was
  // the handler's panic.
  if (f.kind === "PANIC") metadata.set("hookhost-failure", "panic");
  return Object.assign(new Error(f.message), { code: codes[f.kind] ?? grpc.status.UNKNOWN, details: f.message, metadata });
}

type Unary = grpc.handleUnaryCall<Buffer, Buffer>;

/** Describe and Configure, the same in both protocol versions. */
export function describeAndConfigure(rt: Runtime, lane = false): { Describe: Unary; Configure: Unary } {
  return {
    Describe: (_call, cb) => cb(null, manifestMessage(rt, lane)),
    Configure: (call, cb) => {
      let text: string;
      try {
        text = configText(call.request);
      } catch (e) {
        cb(statusOf({ kind: "BAD_REQUEST", message: `undecodable ConfigureRequest: ${(e as Error).message}` }));
        return;
      }
      rt.configure(text).then(
        (unserved) => cb(null, codec<object, object>("hookhost.plugin.v1.ConfigureResponse").encode({ unservedHooks: unserved })),
        (e) => cb(statusOf({ kind: e instanceof PluginFault ? "PANIC" : "ERROR", message: e instanceof Error ? e.message : String(e) })),
      );
    },
  };
}

/**
 * Protocol version 2: Describe, Configure and the Hooks stream; lane says
 * the plugin serves the host's lane too (Describe tells the host so).
 */
export function addV2(server: grpc.Server, rt: Runtime, lane = false): void {
  const svc = "/hookhost.plugin.v2.Plugin/";
  const def: grpc.ServiceDefinition = {
    Describe: method(svc + "Describe"),
    Configure: method(svc + "Configure"),
    Hooks: method(svc + "Hooks", true, true),
  };
  const hooks: grpc.handleBidiStreamingCall<Buffer, Buffer> = (call) => {
    let paused = false;
    const send = (m: Buffer) => {
      if (!call.write(m) && !paused) {
        // The host stopped reading: stop reading its calls too, until what
        // was written drains, so that answers do not pile up in memory and
        // the host's own sends block instead (HTTP/2 flow control).
        paused = true;
        call.pause();
        call.once("drain", () => {
          paused = false;
          call.resume();
        });
      }
    };
    const hs = new HookStream(rt, send, "grpc");
    const end = () => hs.close();
    call.on("data", (b: Buffer) => {
      if (!hs.receive(b)) {
        hs.close();
        call.end();
      }
    });
    call.on("end", () => {
      end();
      call.end();
    });
    call.on("cancelled", end);
    call.on("error", end);
    call.on("close", end);
  };
  server.addService(def, { ...describeAndConfigure(rt, lane), Hooks: hooks });
}

/** Protocol version 1: one unary RPC per hook. */
export function addV1(server: grpc.Server, rt: Runtime): void {
  const svc = "/hookhost.plugin.v1.Plugin/";
  const def: { [name: string]: grpc.MethodDefinition<Buffer, Buffer> } = { Describe: method(svc + "Describe"), Configure: method(svc + "Configure") };
  const impl: grpc.UntypedServiceImplementation = { ...describeAndConfigure(rt) };
  for (const row of TABLE) {
    def[row.rpc] = method(svc + row.rpc);
    const handler: Unary = (call, cb) => {
      let req;
      try {
        req = row.request.decode(call.request);
      } catch (e) {
        cb(statusOf({ kind: "BAD_REQUEST", message: `undecodable ${row.hook} request: ${(e as Error).message}` }));
        return;
      }
      const ac = new Cancellation();
      call.on("cancelled", () => ac.abort(new HostCancelled()));
      const d = call.getDeadline();
      const at = d instanceof Date ? d.getTime() : d;
      const timeout = Number.isFinite(at) ? Math.max(1, at - Date.now()) : undefined;
      rt.call(row, row.payload(req), timeout, ac, undefined, "grpc").then(
        (o) => (o.ok ? cb(null, o.bytes) : cb(statusOf(o.failure))),
        (e) => cb(statusOf({ kind: "PANIC", message: `the SDK failed answering the call: ${String(e)}` })),
      );
    };
    impl[row.rpc] = handler;
  }
  server.addService(def, impl);
}

/** grpc.health.v1.Health/Check: SERVING for "plugin" and for the server as a whole (""). */
export function addHealth(server: grpc.Server): void {
  const req = codec<{ service?: string }, { service?: string }>("grpc.health.v1.HealthCheckRequest");
  const res = codec<{ status: string }, { status?: string }>("grpc.health.v1.HealthCheckResponse");
  const serving = res.encode({ status: "SERVING" });
  server.addService({ Check: method("/grpc.health.v1.Health/Check") }, {
    Check: ((call, cb) => {
      let service = "";
      try {
        service = req.decode(call.request).service ?? "";
      } catch (e) {
        cb(Object.assign(new Error("bad request"), { code: grpc.status.INVALID_ARGUMENT, details: `undecodable HealthCheckRequest: ${(e as Error).message}` }));
        return;
      }
      if (service !== "" && service !== "plugin") {
        cb(Object.assign(new Error("unknown service"), { code: grpc.status.NOT_FOUND, details: `unknown service ${JSON.stringify(service)}` }));
        return;
      }
      cb(null, serving);
    }) as Unary,
  });
}

/** plugin.GRPCController/Shutdown: answer first, then stop (the host waits for the reply). */
export function addController(server: grpc.Server, shutdown: () => void): void {
  const empty = codec<object, object>("plugin.Empty").encode({});
  server.addService({ Shutdown: method("/plugin.GRPCController/Shutdown") }, {
    Shutdown: ((_call, cb) => {
      cb(null, empty);
      setImmediate(shutdown);
    }) as Unary,
  });
}
