// Protocol version 2's model stages and observer batches, message by
// message: a HookCall fed to the stream, the PluginMessages it sends back.

import { test } from "node:test";
import * as assert from "node:assert/strict";
import type { Plugin } from "../src/index";
import { HookStream, manifestMessage } from "../src/server";
import { Runtime } from "../src/plugin";
import { HostMessageCodec, ManifestCodec, ModelStageCodec, PluginMessageCodec, rowOf } from "../src/wire";
import type * as T from "../src/types";
import type { PluginMessage__Output } from "../src/generated/hookhost/plugin/v2/PluginMessage";
import { setSink } from "../src/log";
import { harness } from "../src/testing";

// The handlers' failures are logged at DEBUG; this file checks messages, not logs.
setSink(() => {});

const PRE3 = ["pre_tool_list_finalized", "pre_api_request_mutable", "pre_llm_call_can_provide_response"];
const POST2 = ["post_llm_call_can_reissue", "transform_llm_output"];
const OBSERVERS4 = ["on_session_start", "post_llm_call", "post_tool_call", "on_session_end"];

type Behaviour = "throw" | "hang" | "wait" | number;

/** Every model-side hook and every observer; what each answers is set per test, what each was asked recorded. */
class Model implements Plugin {
  name = "model";
  version = "1.0.0";
  asked: [string, any][] = [];
  override: T.ToolListOverride | null = null;
  patch: T.RequestPatch | null = null;
  provide: T.ModelResponse | null = null;
  reissue: T.Reissue | null = null;
  behave: Record<string, Behaviour> = {};
  cancelledSeen = false;
  started: Promise<void>;
  private markStarted: () => void = () => {};
  release: () => void = () => {};

  constructor() {
    this.started = new Promise((r) => (this.markStarted = r));
  }

  private async note(hook: string, payload: unknown, ctx: { signal: AbortSignal }): Promise<void> {
    this.asked.push([hook, payload]);
    const b = this.behave[hook];
    if (b === "throw") throw new Error(`${hook} refuses`);
    if (b === "hang") {
      // Ignores its deadline.
      this.markStarted();
      await new Promise<void>((r) => {
        this.release = r;
        setTimeout(r, 10_000).unref();
      });
    }
    if (b === "wait") {
      this.markStarted();
      await new Promise<void>((r) => ctx.signal.addEventListener("abort", () => r(), { once: true }));
      this.cancelledSeen = true;
      throw ctx.signal.reason;
    }
    if (typeof b === "number") await new Promise((r) => setTimeout(r, b));
  }

  hooksAsked(): string[] {
    return this.asked.map(([h]) => h);
  }
  payload(hook: string): any {
    return this.asked.filter(([h]) => h === hook).pop()?.[1];
  }

  async preToolListFinalized(req: T.ToolListRequest, ctx: { signal: AbortSignal }) {
    await this.note("pre_tool_list_finalized", req, ctx);
    return this.override;
  }
  async preApiRequestMutable(req: T.ApiRequest, ctx: { signal: AbortSignal }) {
    await this.note("pre_api_request_mutable", req, ctx);
    return this.patch;
  }
  async preLlmCallCanProvideResponse(req: T.LlmRequest, ctx: { signal: AbortSignal }) {
    await this.note("pre_llm_call_can_provide_response", req, ctx);
    return this.provide;
  }
  async postLlmCallCanReissue(call: T.LlmCall, ctx: { signal: AbortSignal }) {
    await this.note("post_llm_call_can_reissue", call, ctx);
    return this.reissue;
  }
  async transformLlmOutput(out: T.LlmOutput, ctx: { signal: AbortSignal }) {
    await this.note("transform_llm_output", out, ctx);
    return { text: out.text + "!" };
  }
  async onSessionStart(ev: T.SessionStart, ctx: { signal: AbortSignal }) {
    await this.note("on_session_start", ev, ctx);
  }
  async postLlmCall(ev: T.Inference, ctx: { signal: AbortSignal }) {
    await this.note("post_llm_call", ev, ctx);
  }
  async postToolCall(ev: T.ToolCallOutcome, ctx: { signal: AbortSignal }) {
    await this.note("post_tool_call", ev, ctx);
  }
  async onSessionEnd(ev: T.SessionEnd, ctx: { signal: AbortSignal }) {
    await this.note("on_session_end", ev, ctx);
  }
}

const spec = (name: string) => ({ name, description: `the ${name} tool`, inputSchema: Buffer.from('{"type":"object"}') });

function modelStage(opts: { fieldsSet?: string[]; text?: string; response?: object } = {}): Buffer {
  return ModelStageCodec.encode({
    call: {
      sessionId: "s1",
      iteration: 2,
      route: "r",
      request: {
        model: "m-1",
        system: "be brief",
        messages: [{ role: "user", content: "hi" }],
        tools: [spec("a"), spec("b")],
        maxTokens: 100,
        temperature: 0.5,
      },
      ...(opts.response ? { response: opts.response } : {}),
    },
    fieldsSet: opts.fieldsSet ?? [],
    text: opts.text ?? "",
  });
}

/** One stream, played as the host plays it. */
class Wire {
  readonly sent: PluginMessage__Output[] = [];
  readonly stream: HookStream;
  private waiters: (() => void)[] = [];

  constructor(readonly plugin: Model) {
    this.stream = new HookStream(new Runtime(plugin), (b) => {
      this.sent.push(PluginMessageCodec.decode(b));
      for (const w of this.waiters.splice(0)) w();
    });
  }

  call(id: number, hooks: string[], opts: { payload?: Buffer; payloads?: Buffer[]; timeoutsMs?: number[] } = {}): void {
    const stages = hooks.map((hook, i) => ({ hook, timeoutNs: String(Math.round((opts.timeoutsMs?.[i] ?? 2000) * 1e6)) }));
    this.stream.receive(HostMessageCodec.encode({ call: { id: String(id), stages, payload: opts.payload ?? Buffer.alloc(0), payloads: opts.payloads ?? [] } }));
  }

  cancel(id: number): void {
    this.stream.receive(HostMessageCodec.encode({ cancel: { id: String(id) } }));
  }

  of(id: number): PluginMessage__Output[] {
    return this.sent.filter((m) => m.id === String(id));
  }

  /** The messages of call id, once its last one came. */
  async messages(id: number): Promise<PluginMessage__Output[]> {
    const deadline = Date.now() + 10_000;
    while (!this.of(id).some((m) => m.last)) {
      if (Date.now() > deadline) assert.fail(`no last message for call ${id}: ${JSON.stringify(this.sent)}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 100).unref();
      });
    }
    return this.of(id);
  }
}

/** Each message as [stage, "answer" or the failure kind, last]. */
function shape(msgs: PluginMessage__Output[]): [number, string, boolean][] {
  return msgs.map((m) => [m.stage ?? 0, m.failure ? String(m.failure.kind) : "answer", m.last === true]);
}

function answer(hook: string, m: PluginMessage__Output): unknown {
  const row = rowOf(hook)!;
  return row.fromResponse(row.response.decode(m.answer ?? Buffer.alloc(0)));
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("the manifest says the SDK serves model stages and observer batches", () => {
  const m = ManifestCodec.decode(manifestMessage(new Runtime(new Model())));
  assert.equal(m.modelStages, true);
  assert.equal(m.observerBatches, true);
});

test("model stage: pre-call stages in order, each seeing the plugin's own earlier answers", async () => {
  const p = new Model();
  p.override = { tools: [{ name: "only", description: "the only tool" }] };
  p.patch = { model: "m-2", system: "be long", maxTokens: 7 };
  const w = new Wire(p);
  w.call(1, PRE3, { payload: modelStage() });
  const msgs = await w.messages(1);
  assert.deepEqual(shape(msgs), [[0, "answer", false], [1, "answer", false], [2, "answer", true]]);
  assert.deepEqual(p.hooksAsked(), PRE3);
  assert.deepEqual(answer(PRE3[0], msgs[0]), { tools: [{ name: "only", description: "the only tool" }] });
  assert.equal((answer(PRE3[1], msgs[1]) as T.RequestPatch).model, "m-2");
  assert.equal(answer(PRE3[2], msgs[2]), null);
  const tl = p.payload("pre_tool_list_finalized") as T.ToolListRequest;
  assert.deepEqual([tl.sessionId, tl.iteration, tl.tools.map((t) => t.name)], ["s1", 2, ["a", "b"]]);
  const api = (p.payload("pre_api_request_mutable") as T.ApiRequest).request;
  // The override already applies to the next stage's request.
  assert.deepEqual(api.tools?.map((t) => t.name), ["only"]);
  assert.deepEqual([api.model, api.system], ["m-1", "be brief"]);
  const llm = p.payload("pre_llm_call_can_provide_response") as T.LlmRequest;
  assert.deepEqual([llm.sessionId, llm.iteration, llm.route], ["s1", 2, "r"]);
  assert.deepEqual([llm.request.model, llm.request.system, llm.request.maxTokens, llm.request.temperature], ["m-2", "be long", 7, 0.5]);
  assert.deepEqual(llm.request.tools?.map((t) => t.name), ["only"]);
  assert.deepEqual(llm.request.messages.map((m) => m.content), ["hi"]);
});

test("model stage: patch fields a plugin above set are not applied", async () => {
  const p = new Model();
  p.patch = { model: "m-2", system: "be long", messages: [{ role: "user", content: "replaced" }], tools: [{ name: "patched", description: "" }], temperature: 0.9 };
  const w = new Wire(p);
  w.call(1, PRE3.slice(1), { payload: modelStage({ fieldsSet: ["model", "messages", "temperature"] }) });
  assert.deepEqual(shape(await w.messages(1)), [[0, "answer", false], [1, "answer", true]]);
  const req = (p.payload("pre_llm_call_can_provide_response") as T.LlmRequest).request;
  assert.deepEqual([req.model, req.system, req.temperature], ["m-1", "be long", 0.5]);
  assert.deepEqual(req.messages.map((m) => m.content), ["hi"]);
  assert.deepEqual(req.tools?.map((t) => t.name), ["patched"]);

  // tools set above: this plugin's patch of them is ignored, its override (no patch) is not.
  const q = new Model();
  q.override = { tools: [{ name: "over", description: "" }] };
  q.patch = { tools: [{ name: "patched", description: "" }] };
  const w2 = new Wire(q);
  w2.call(1, PRE3, { payload: modelStage({ fieldsSet: ["tools"] }) });
  await w2.messages(1);
  assert.deepEqual((q.payload("pre_llm_call_can_provide_response") as T.LlmRequest).request.tools?.map((t) => t.name), ["over"]);
});

test("model stage: no opinion changes nothing; a provided response is the last answer", async () => {
  const p = new Model();
  const w = new Wire(p);
  w.call(1, ["pre_tool_list_finalized", "pre_llm_call_can_provide_response"], { payload: modelStage() });
  assert.deepEqual(shape(await w.messages(1)), [[0, "answer", false], [1, "answer", true]]);
  const req = (p.payload("pre_llm_call_can_provide_response") as T.LlmRequest).request;
  assert.deepEqual([req.model, req.system, req.maxTokens, req.temperature, req.tools?.map((t) => t.name)], ["m-1", "be brief", 100, 0.5, ["a", "b"]]);

  p.provide = { model: "m-1", message: { role: "assistant", content: "from the plugin" }, usage: { inputTokens: 0, outputTokens: 0 }, stopReason: "end_turn" };
  w.call(2, PRE3.slice(1), { payload: modelStage() });
  const msgs = await w.messages(2);
  assert.deepEqual(shape(msgs), [[0, "answer", false], [1, "answer", true]]);
  assert.equal((answer(PRE3[2], msgs[1]) as T.ModelResponse).message.content, "from the plugin");
});

test("model stage: a reissue ends the post-call stage before the transform", async () => {
  const p = new Model();
  p.reissue = { patch: { model: "bigger" }, reason: "too short" };
  const w = new Wire(p);
  const response = { model: "m-1", message: { role: "assistant", content: "the model's" } };
  w.call(1, POST2, { payload: modelStage({ text: "as left above", response }) });
  const msgs = await w.messages(1);
  assert.deepEqual(shape(msgs), [[0, "answer", true]]);
  assert.equal((answer(POST2[0], msgs[0]) as T.Reissue).reason, "too short");
  await pause(50);
  assert.deepEqual(p.hooksAsked(), ["post_llm_call_can_reissue"]);
  const call = p.payload("post_llm_call_can_reissue") as T.LlmCall;
  assert.deepEqual([call.sessionId, call.iteration, call.route, call.response.message.content, call.request.model], ["s1", 2, "r", "the model's", "m-1"]);
});

test("model stage: the transform gets the text as the plugins above left it", async () => {
  const p = new Model();
  const w = new Wire(p);
  w.call(1, POST2, { payload: modelStage({ text: "as left above", response: { message: { role: "assistant", content: "the model's" } } }) });
  const msgs = await w.messages(1);
  assert.deepEqual(shape(msgs), [[0, "answer", false], [1, "answer", true]]);
  assert.equal(answer(POST2[0], msgs[0]), null);
  assert.deepEqual(answer(POST2[1], msgs[1]), { text: "as left above!" });
  const out = p.payload("transform_llm_output") as T.LlmOutput;
  assert.deepEqual([out.sessionId, out.windowed ?? false], ["s1", false]);
});

test("model stage: a failed stage is the last, and an answer that cannot be sent is a failure", async () => {
  const p = new Model();
  p.behave.pre_api_request_mutable = "throw";
  const w = new Wire(p);
  w.call(1, PRE3, { payload: modelStage() });
  const msgs = await w.messages(1);
  assert.deepEqual(shape(msgs), [[0, "answer", false], [1, "ERROR", true]]);
  assert.match(msgs[1].failure?.message ?? "", /pre_api_request_mutable refuses/);
  await pause(50);
  assert.deepEqual(p.hooksAsked(), PRE3.slice(0, 2));

  const q = new Model();
  q.override = "not a tool list" as unknown as T.ToolListOverride;
  const w2 = new Wire(q);
  w2.call(1, PRE3, { payload: modelStage() });
  assert.deepEqual(shape(await w2.messages(1)), [[0, "ERROR", true]]);
});

test("model stage: each stage has its own deadline", async () => {
  const p = new Model();
  // Together longer than one stage's deadline, each well within its own.
  p.behave.pre_api_request_mutable = 600;
  p.behave.pre_llm_call_can_provide_response = 600;
  const w = new Wire(p);
  w.call(1, PRE3.slice(1), { payload: modelStage(), timeoutsMs: [1000, 1000] });
  assert.deepEqual(shape(await w.messages(1)), [[0, "answer", false], [1, "answer", true]]);

  const q = new Model();
  q.behave.pre_api_request_mutable = "hang";
  const w2 = new Wire(q);
  w2.call(1, PRE3, { payload: modelStage(), timeoutsMs: [2000, 100, 2000] });
  assert.deepEqual(shape(await w2.messages(1)), [[0, "answer", false], [1, "DEADLINE_EXCEEDED", true]]);
  q.release();
  await pause(50);
  assert.deepEqual(q.hooksAsked(), PRE3.slice(0, 2));
});

test("model stage: after a cancel nothing is sent and no later stage starts", async () => {
  const p = new Model();
  p.behave.pre_api_request_mutable = "wait";
  const w = new Wire(p);
  w.call(1, PRE3, { payload: modelStage() });
  await p.started;
  w.cancel(1);
  await pause(100);
  assert.ok(p.cancelledSeen);
  assert.deepEqual(shape(w.of(1)), [[0, "answer", false]]);
  assert.deepEqual(p.hooksAsked(), PRE3.slice(0, 2));
});

test("model stage: stage lists that are not model stages get one failure", async () => {
  const p = new Model();
  const w = new Wire(p);
  const bad = [
    ["pre_api_request_mutable", "pre_tool_list_finalized"],
    ["pre_tool_list_finalized", "pre_tool_list_finalized"],
    ["pre_llm_call_can_provide_response", "post_llm_call_can_reissue"],
    ["transform_llm_output", "post_llm_call_can_reissue"],
    ["pre_tool_call", "pre_api_request_mutable"],
    [...PRE3, "post_llm_call_can_reissue"],
  ];
  for (const [i, hooks] of bad.entries()) {
    w.call(i + 1, hooks, { payload: modelStage() });
    const msgs = await w.messages(i + 1);
    assert.deepEqual(shape(msgs), [[0, "BAD_REQUEST", true]], hooks.join(","));
    assert.match(msgs[0].failure?.message ?? "", /not a legal model stage/);
  }
  w.call(50, ["pre_tool_list_finalized", "no_such_hook"], { payload: modelStage() });
  assert.deepEqual(shape(await w.messages(50)), [[0, "UNKNOWN_HOOK", true]]);
  w.call(51, PRE3, { payload: Buffer.from([0xff, 0xff]) });
  assert.deepEqual(shape(await w.messages(51)), [[0, "BAD_REQUEST", true]]);
  assert.deepEqual(p.hooksAsked(), []);
});

function events(): Buffer[] {
  return [
    rowOf("on_session_start")!.request.encode({ sessionId: "s1", model: "m", route: "r" }),
    rowOf("post_llm_call")!.request.encode({ sessionId: "s1", iteration: 1, model: "m", stopReason: "end_turn" }),
    rowOf("post_tool_call")!.request.encode({ sessionId: "s1", callId: "c1", name: "read", status: "ok" }),
    rowOf("on_session_end")!.request.encode({ sessionId: "s1", reason: "done", iterations: 1 }),
  ];
}

test("observer batch: every event in order, each answered, the final one last", async () => {
  const p = new Model();
  const w = new Wire(p);
  w.call(1, OBSERVERS4, { payloads: events() });
  const msgs = await w.messages(1);
  assert.deepEqual(shape(msgs), [[0, "answer", false], [1, "answer", false], [2, "answer", false], [3, "answer", true]]);
  assert.ok(msgs.every((m) => (m.answer ?? Buffer.alloc(0)).length === 0));
  assert.deepEqual(p.hooksAsked(), OBSERVERS4);
  assert.deepEqual(p.payload("on_session_start"), { sessionId: "s1", model: "m", route: "r" });
  assert.equal((p.payload("post_llm_call") as T.Inference).stopReason, "end_turn");
  assert.equal((p.payload("post_tool_call") as T.ToolCallOutcome).callId, "c1");
  assert.equal((p.payload("on_session_end") as T.SessionEnd).reason, "done");

  w.call(2, ["post_llm_call"], { payloads: events().slice(1, 2) });
  assert.deepEqual(shape(await w.messages(2)), [[0, "answer", true]]);
});

test("observer batch: a failed event does not stop the batch", async () => {
  const p = new Model();
  p.behave.post_llm_call = "throw";
  const w = new Wire(p);
  const pl = events();
  pl[3] = Buffer.from([0xff, 0xff]);
  w.call(1, OBSERVERS4, { payloads: pl });
  const msgs = await w.messages(1);
  assert.deepEqual(shape(msgs), [[0, "answer", false], [1, "ERROR", false], [2, "answer", false], [3, "BAD_REQUEST", true]]);
  assert.match(msgs[1].failure?.message ?? "", /post_llm_call refuses/);
  assert.deepEqual(p.hooksAsked(), OBSERVERS4.slice(0, 3));
});

test("observer batch: each event has its own deadline", async () => {
  const p = new Model();
  p.behave.on_session_start = "hang";
  const w = new Wire(p);
  w.call(1, OBSERVERS4.slice(0, 2), { payloads: events().slice(0, 2), timeoutsMs: [100, 2000] });
  assert.deepEqual(shape(await w.messages(1)), [[0, "DEADLINE_EXCEEDED", false], [1, "answer", true]]);
  p.release();
});

test("observer batch: after a cancel nothing more is sent or started", async () => {
  const p = new Model();
  p.behave.post_llm_call = "wait";
  const w = new Wire(p);
  w.call(1, OBSERVERS4, { payloads: events() });
  await p.started;
  w.cancel(1);
  await pause(100);
  assert.ok(p.cancelledSeen);
  assert.deepEqual(shape(w.of(1)), [[0, "answer", false]]);
  assert.deepEqual(p.hooksAsked(), OBSERVERS4.slice(0, 2));
});

test("observer batch: an event of no observer hook fails alone", async () => {
  const p = new Model();
  const w = new Wire(p);
  w.call(1, ["pre_tool_call", "post_llm_call", "no_such_hook"], { payloads: events().slice(0, 3) });
  const msgs = await w.messages(1);
  assert.deepEqual(shape(msgs), [[0, "UNKNOWN_HOOK", false], [1, "answer", false], [2, "UNKNOWN_HOOK", true]]);
  assert.match(msgs[2].failure?.message ?? "", /"no_such_hook"/);
  assert.deepEqual(p.hooksAsked(), ["post_llm_call"]);
});

test("observer batch: a malformed batch gets one failure", async () => {
  const p = new Model();
  const w = new Wire(p);
  w.call(1, OBSERVERS4, { payloads: events().slice(0, 3) });
  w.call(2, OBSERVERS4.slice(0, 2), { payload: events()[0], payloads: events().slice(0, 2) });
  // Observers only, but no payloads: not a plain call either.
  w.call(3, OBSERVERS4.slice(0, 2), { payload: events()[0] });
  for (const id of [1, 2, 3]) {
    const msgs = await w.messages(id);
    assert.deepEqual(shape(msgs), [[0, "BAD_REQUEST", true]], String(id));
    assert.match(msgs[0].failure?.message ?? "", /a malformed observer batch/);
  }
  assert.deepEqual(p.hooksAsked(), []);
});

test("the harness asks model stages and observer batches as the host does", async () => {
  const p = new Model();
  const h = await harness(p);
  try {
    p.patch = { system: "be long", model: "m-2" };
    const call = { sessionId: "s1", iteration: 2, route: "r", request: { model: "m-1", system: "be brief", messages: [{ role: "user", content: "hi" }] } };
    const out = await h.modelStage(["pre_api_request_mutable", "pre_llm_call_can_provide_response"], call, { fieldsSet: ["model"] });
    assert.deepEqual(out, [{ answer: { system: "be long", model: "m-2" }, last: false }, { answer: null, last: true }]);
    const seen = (p.payload("pre_llm_call_can_provide_response") as T.LlmRequest).request;
    assert.deepEqual([seen.model, seen.system], ["m-1", "be long"]);
    const post = await h.modelStage(["post_llm_call_can_reissue", "transform_llm_output"], call, { text: "t" });
    assert.deepEqual(post, [{ answer: null, last: false }, { answer: { text: "t!" }, last: true }]);

    p.behave.post_llm_call = "throw";
    const b = await h.observerBatch([
      ["on_session_start", { sessionId: "s1", model: "m", route: "r" }],
      ["post_llm_call", { sessionId: "s1" }],
      ["on_session_end", { sessionId: "s1", reason: "done" }],
    ]);
    assert.deepEqual(b, [
      { answer: null, last: false },
      { failure: { kind: "ERROR", message: "post_llm_call refuses" }, last: false },
      { answer: null, last: true },
    ]);
    assert.equal((p.payload("on_session_end") as T.SessionEnd).reason, "done");
  } finally {
    h.close();
  }
});
