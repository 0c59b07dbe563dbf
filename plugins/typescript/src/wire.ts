// The protocol as a table, as the Go side has it (internal/wire/table.go):
// one row per hook, tying the hook to its version 1 RPC, its request and
// response messages, and the conversions between those messages and the
// SDK's types, in both directions (the plugin's, and the host's, which the
// test harness plays).

import { codec, Codec } from "./proto";
import type * as T from "./types";
import type { Hooks } from "./generated/hooks";
import type { ToolCall as PbToolCall, ToolCall__Output as PbToolCallOut } from "./generated/hookhost/plugin/v1/ToolCall";
import type { Message as PbMessage, Message__Output as PbMessageOut } from "./generated/hookhost/plugin/v1/Message";
import type { ToolSpec as PbToolSpec, ToolSpec__Output as PbToolSpecOut } from "./generated/hookhost/plugin/v1/ToolSpec";
import type { Usage as PbUsage, Usage__Output as PbUsageOut } from "./generated/hookhost/plugin/v1/Usage";
import type { ModelRequest as PbModelRequest, ModelRequest__Output as PbModelRequestOut } from "./generated/hookhost/plugin/v1/ModelRequest";
import type { ModelResponse as PbModelResponse, ModelResponse__Output as PbModelResponseOut } from "./generated/hookhost/plugin/v1/ModelResponse";
import type { RequestPatch as PbRequestPatch, RequestPatch__Output as PbRequestPatchOut } from "./generated/hookhost/plugin/v1/RequestPatch";
import type { ToolResult as PbToolResult, ToolResult__Output as PbToolResultOut } from "./generated/hookhost/plugin/v1/ToolResult";
import type { Manifest as PbManifest, Manifest__Output as PbManifestOut } from "./generated/hookhost/plugin/v1/Manifest";
import type { HostMessage as PbHostMessage, HostMessage__Output as PbHostMessageOut } from "./generated/hookhost/plugin/v2/HostMessage";
import type { PluginMessage as PbPluginMessage, PluginMessage__Output as PbPluginMessageOut } from "./generated/hookhost/plugin/v2/PluginMessage";
import type { ModelStage as PbModelStage, ModelStage__Output as PbModelStageOut } from "./generated/hookhost/plugin/v2/ModelStage";
import type { ConfigureRequest as PbConfigureRequest, ConfigureRequest__Output as PbConfigureRequestOut } from "./generated/hookhost/plugin/v1/ConfigureRequest";

type AnyObj = { [k: string]: any };

// --- messages ----------------------------------------------------------------

export const ManifestCodec: Codec<PbManifest, PbManifestOut> = codec("hookhost.plugin.v1.Manifest");
export const ConfigureRequestCodec: Codec<PbConfigureRequest, PbConfigureRequestOut> = codec("hookhost.plugin.v1.ConfigureRequest");
export const EmptyCodec: Codec<AnyObj, AnyObj> = codec("hookhost.plugin.v1.Empty");
export const HostMessageCodec: Codec<PbHostMessage, PbHostMessageOut> = codec("hookhost.plugin.v2.HostMessage");
export const PluginMessageCodec: Codec<PbPluginMessage, PbPluginMessageOut> = codec("hookhost.plugin.v2.PluginMessage");
/** The most a uint64 id written as 15 decimal digits can be: exact as a Number. */
const EXACT_ID = /^[0-9]{1,15}$/;

/**
 * A PluginMessage's bytes. An answer (all but a failed call's message) is
 * written here, byte for byte as PluginMessageCodec writes it, at a
 * fraction of its cost: it carries only an id, a stage, the answer's bytes
 * and whether it is the last. Anything else goes through the codec.
 */
export function encodePluginMessage(m: PbPluginMessage): Buffer {
  const { id, stage, answer, last } = m;
  if (
    m.failure != null ||
    typeof id !== "string" || !EXACT_ID.test(id) ||
    typeof stage !== "number" || !(stage >= 0 && stage <= 0xffffffff && Number.isInteger(stage)) ||
    !(answer instanceof Uint8Array) ||
    typeof last !== "boolean"
  ) {
    return PluginMessageCodec.encode(m);
  }
  const idn = Number(id);
  const out = Buffer.allocUnsafe(1 + varintSize(idn) + 1 + varintSize(stage) + 1 + varintSize(answer.length) + answer.length + 2);
  let at = 0;
  out[at++] = 0x08; // 1: id, varint
  at = putVarint(out, at, idn);
  out[at++] = 0x10; // 2: stage, varint
  at = putVarint(out, at, stage);
  out[at++] = 0x1a; // 3: answer, length-delimited
  at = putVarint(out, at, answer.length);
  out.set(answer, at);
  at += answer.length;
  out[at++] = 0x28; // 5: last, varint
  out[at++] = last ? 1 : 0;
  return out;
}

/** The bytes of v (a non-negative integer below 2^53) as a varint. */
function varintSize(v: number): number {
  let n = 1;
  while (v >= 128) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

function putVarint(b: Buffer, at: number, v: number): number {
  while (v >= 128) {
    b[at++] = (v % 128) | 0x80;
    v = Math.floor(v / 128);
  }
  b[at++] = v;
  return at;
}

export const ModelStageCodec: Codec<PbModelStage, PbModelStageOut> = codec("hookhost.plugin.v2.ModelStage");

// --- field conversions ------------------------------------------------------------

const str = (v: string | undefined | null): string => v ?? "";
const num = (v: string | number | undefined | null): number => (v === undefined || v === null ? 0 : Number(v));
const text = (b: Buffer | undefined | null): string => (b ? b.toString("utf8") : "");

/** JSON text parsed, or undefined when it is not JSON. */
export function parseJSON(s: string): unknown {
  if (s === "") return undefined;
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

function isObject(v: unknown): v is T.JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function schemaFrom(b: Buffer | undefined): T.JsonObject | undefined {
  const v = parseJSON(text(b));
  return isObject(v) ? v : undefined;
}

function toolCallFrom(c: PbToolCallOut): T.ToolCall {
  return { id: str(c.id), name: str(c.name), arguments: text(c.arguments) };
}
function toolCallTo(c: T.ToolCall): PbToolCall {
  return { id: c.id, name: c.name, arguments: Buffer.from(c.arguments ?? "", "utf8") };
}

function messageFrom(m: PbMessageOut): T.Message {
  const out: T.Message = { role: str(m.role) };
  if (m.content) out.content = m.content;
  if (m.toolCalls?.length) out.toolCalls = m.toolCalls.map(toolCallFrom);
  if (m.toolCallId) out.toolCallId = m.toolCallId;
  if (m.toolName) out.toolName = m.toolName;
  if (m.isError) out.isError = true;
  return out;
}
function messageTo(m: T.Message): PbMessage {
  return {
    role: m.role,
    content: m.content ?? "",
    toolCalls: (m.toolCalls ?? []).map(toolCallTo),
    toolCallId: m.toolCallId ?? "",
    toolName: m.toolName ?? "",
    isError: m.isError ?? false,
  };
}

function toolSpecFrom(t: PbToolSpecOut): T.ToolSpec {
  const out: T.ToolSpec = { name: str(t.name), description: str(t.description) };
  const schema = schemaFrom(t.inputSchema);
  if (schema) out.inputSchema = schema;
  return out;
}
function toolSpecTo(t: T.ToolSpec): PbToolSpec {
  return {
    name: t.name,
    description: t.description ?? "",
    inputSchema: t.inputSchema === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(t.inputSchema), "utf8"),
  };
}

function usageFrom(u: PbUsageOut | null | undefined): T.Usage {
  return { inputTokens: num(u?.inputTokens), outputTokens: num(u?.outputTokens) };
}
function usageTo(u: T.Usage | undefined): PbUsage {
  return { inputTokens: u?.inputTokens ?? 0, outputTokens: u?.outputTokens ?? 0 };
}

function modelRequestFrom(r: PbModelRequestOut | null | undefined): T.ModelRequest {
  const out: T.ModelRequest = { model: str(r?.model), messages: (r?.messages ?? []).map(messageFrom) };
  if (r?.system) out.system = r.system;
  if (r?.tools?.length) out.tools = r.tools.map(toolSpecFrom);
  if (r?.maxTokens && num(r.maxTokens) !== 0) out.maxTokens = num(r.maxTokens);
  if (r?.temperature !== undefined && r?.temperature !== null) out.temperature = r.temperature;
  return out;
}
function modelRequestTo(r: T.ModelRequest): PbModelRequest {
  const out: PbModelRequest = {
    model: r.model,
    system: r.system ?? "",
    messages: (r.messages ?? []).map(messageTo),
    tools: (r.tools ?? []).map(toolSpecTo),
    maxTokens: r.maxTokens ?? 0,
  };
  if (r.temperature !== undefined) out.temperature = r.temperature;
  return out;
}

function modelResponseFrom(r: PbModelResponseOut | null | undefined): T.ModelResponse {
  return {
    model: str(r?.model),
    message: r?.message ? messageFrom(r.message) : { role: "assistant" },
    usage: usageFrom(r?.usage),
    stopReason: str(r?.stopReason),
  };
}
function modelResponseTo(r: T.ModelResponse): PbModelResponse {
  return { model: r.model, message: messageTo(r.message), usage: usageTo(r.usage), stopReason: r.stopReason };
}

function patchFrom(p: PbRequestPatchOut): T.RequestPatch {
  const out: T.RequestPatch = {};
  if (p.model !== undefined && p.model !== null) out.model = p.model;
  if (p.system !== undefined && p.system !== null) out.system = p.system;
  if (p.messages) out.messages = (p.messages.messages ?? []).map(messageFrom);
  if (p.tools) out.tools = (p.tools.tools ?? []).map(toolSpecFrom);
  if (p.maxTokens !== undefined && p.maxTokens !== null) out.maxTokens = num(p.maxTokens);
  if (p.temperature !== undefined && p.temperature !== null) out.temperature = p.temperature;
  return out;
}
function patchTo(p: T.RequestPatch): PbRequestPatch {
  const out: PbRequestPatch = {};
  if (p.model !== undefined) out.model = expectString(p.model, "patch.model");
  if (p.system !== undefined) out.system = expectString(p.system, "patch.system");
  if (p.messages !== undefined) out.messages = { messages: expectArray(p.messages, "patch.messages").map(messageTo) };
  if (p.tools !== undefined) out.tools = { tools: expectArray(p.tools, "patch.tools").map(toolSpecTo) };
  if (p.maxTokens !== undefined) out.maxTokens = expectNumber(p.maxTokens, "patch.maxTokens");
  if (p.temperature !== undefined) out.temperature = expectNumber(p.temperature, "patch.temperature");
  return out;
}

function toolResultFrom(r: PbToolResultOut | null | undefined): T.ToolResult {
  const out: T.ToolResult = { content: str(r?.content) };
  if (r?.isError) out.isError = true;
  return out;
}
function toolResultTo(r: T.ToolResult, hook: string): PbToolResult {
  if (!isObject(r) || typeof r.content !== "string") {
    throw new MalformedAnswer(`${hook} answered with ${describeValue(r)}, want a ToolResult {content: string, isError?: boolean}`);
  }
  return { content: r.content, isError: r.isError === true };
}

function toolCallRequestFrom(m: AnyObj): T.ToolCallRequest {
  const args = text(m.arguments);
  return { sessionId: str(m.sessionId), callId: str(m.callId), name: str(m.name), arguments: args, args: parseJSON(args), origin: str(m.origin) as T.Origin };
}
export function toolCallRequestTo(r: Partial<T.ToolCallRequest>): AnyObj {
  return {
    sessionId: r.sessionId ?? "",
    callId: r.callId ?? "",
    name: r.name ?? "",
    arguments: Buffer.from(argumentsText(r), "utf8"),
    origin: r.origin ?? "",
  };
}

function outcomeFrom(m: AnyObj): T.ToolCallOutcome {
  const args = text(m.arguments);
  return {
    sessionId: str(m.sessionId),
    callId: str(m.callId),
    name: str(m.name),
    arguments: args,
    args: parseJSON(args),
    result: toolResultFrom(m.result),
    status: str(m.status),
    durationNs: num(m.durationNs),
    origin: str(m.origin) as T.Origin,
  };
}
function outcomeTo(o: Partial<T.ToolCallOutcome>): AnyObj {
  return {
    sessionId: o.sessionId ?? "",
    callId: o.callId ?? "",
    name: o.name ?? "",
    arguments: Buffer.from(argumentsText(o), "utf8"),
    result: o.result ? { content: o.result.content, isError: o.result.isError ?? false } : undefined,
    status: o.status ?? "",
    durationNs: o.durationNs ?? 0,
    origin: o.origin ?? "",
  };
}

/** The arguments' JSON text: `arguments` if given, else `args` encoded. */
function argumentsText(r: { arguments?: string; args?: unknown }): string {
  if (r.arguments !== undefined) return r.arguments;
  if (r.args !== undefined) return JSON.stringify(r.args);
  return "";
}

// --- answers' shape checks ---------------------------------------------------------

/**
 * An answer of the wrong shape: the plugin's own mistake, reported to the
 * host as the call's failure (the Go side's hooks.ErrMalformed).
 */
export class MalformedAnswer extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MalformedAnswer";
  }
}

export function describeValue(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return "an object";
  if (typeof v === "string") return `the string ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + "..." : v)}`;
  return `a ${typeof v} (${String(v)})`;
}
function expectString(v: unknown, what: string): string {
  if (typeof v !== "string") throw new MalformedAnswer(`${what} is ${describeValue(v)}, want a string`);
  return v;
}
function expectNumber(v: unknown, what: string): number {
  if (typeof v !== "number" || !Number.isFinite(v)) throw new MalformedAnswer(`${what} is ${describeValue(v)}, want a number`);
  return v;
}
function expectArray<E>(v: E[] | undefined, what: string): E[] {
  if (!Array.isArray(v)) throw new MalformedAnswer(`${what} is ${describeValue(v)}, want an array`);
  return v as E[];
}
function expectObject(v: unknown, hook: string, want: string): AnyObj {
  if (!isObject(v)) throw new MalformedAnswer(`${hook} answered with ${describeValue(v)}, want ${want}`);
  return v;
}

// --- the table ---------------------------------------------------------------------

/** A handler method's name on a plugin object, for each hook. */
export type MethodName = keyof Hooks;

/** One hook as the wire carries it. */
export interface HookRow {
  hook: T.HookName;
  method: MethodName;
  /** The version 1 RPC method, e.g. "PreToolCall". */
  rpc: string;
  request: Codec<AnyObj, AnyObj>;
  response: Codec<AnyObj, AnyObj>;
  observer: boolean;
  /** The request message as the handler's payload. */
  payload(m: AnyObj): unknown;
  /** A payload as the request message (the host's side). */
  toRequest(p: any): AnyObj;
  /** A handler's answer (null: no opinion) as the response message. */
  toResponse(answer: unknown): AnyObj;
  /** The response message as an answer, null for no opinion (the host's side). */
  fromResponse(m: AnyObj): unknown;
}

function row(
  hook: T.HookName,
  method: MethodName,
  rpc: string,
  req: string,
  res: string,
  payload: (m: AnyObj) => unknown,
  toRequest: (p: any) => AnyObj,
  toResponse: ((a: any) => AnyObj) | null,
  fromResponse: ((m: AnyObj) => unknown) | null,
): HookRow {
  return {
    hook,
    method,
    rpc,
    request: codec("hookhost.plugin.v1." + req),
    response: codec("hookhost.plugin.v1." + res),
    observer: toResponse === null,
    payload,
    toRequest,
    toResponse: toResponse ?? (() => ({})),
    fromResponse: fromResponse ?? (() => null),
  };
}

export const TABLE: readonly HookRow[] = [
  row("on_session_start", "onSessionStart", "OnSessionStart", "SessionStart", "Empty",
    (m) => ({ sessionId: str(m.sessionId), model: str(m.model), route: str(m.route) }) satisfies T.SessionStart,
    (p: Partial<T.SessionStart>) => ({ sessionId: p.sessionId ?? "", model: p.model ?? "", route: p.route ?? "" }),
    null, null),
  row("on_session_end", "onSessionEnd", "OnSessionEnd", "SessionEnd", "Empty",
    (m) => {
      const out: T.SessionEnd = {
        sessionId: str(m.sessionId), model: str(m.model), route: str(m.route), reason: str(m.reason),
        iterations: num(m.iterations), usage: usageFrom(m.usage),
      };
      if (m.error) out.error = m.error;
      return out;
    },
    (p: Partial<T.SessionEnd>) => ({
      sessionId: p.sessionId ?? "", model: p.model ?? "", route: p.route ?? "", reason: p.reason ?? "",
      iterations: p.iterations ?? 0, usage: usageTo(p.usage), error: p.error ?? "",
    }),
    null, null),
  row("pre_tool_list_finalized", "preToolListFinalized", "PreToolListFinalized", "ToolListRequest", "ToolListResponse",
    (m) => ({ sessionId: str(m.sessionId), iteration: num(m.iteration), tools: (m.tools ?? []).map(toolSpecFrom) }) satisfies T.ToolListRequest,
    (p: Partial<T.ToolListRequest>) => ({ sessionId: p.sessionId ?? "", iteration: p.iteration ?? 0, tools: (p.tools ?? []).map(toolSpecTo) }),
    (a: T.ToolListOverride | null) => {
      if (a === null) return {};
      const o = expectObject(a, "pre_tool_list_finalized", "a ToolListOverride {tools: ToolSpec[]}");
      return { override: { tools: expectArray<T.ToolSpec>(o.tools, "override.tools").map(toolSpecTo) } };
    },
    (m) => (m.override ? ({ tools: (m.override.tools ?? []).map(toolSpecFrom) } satisfies T.ToolListOverride) : null)),
  row("pre_api_request_mutable", "preApiRequestMutable", "PreApiRequestMutable", "ApiRequest", "RequestPatchResponse",
    (m) => ({ sessionId: str(m.sessionId), iteration: num(m.iteration), request: modelRequestFrom(m.request) }) satisfies T.ApiRequest,
    (p: Partial<T.ApiRequest>) => ({ sessionId: p.sessionId ?? "", iteration: p.iteration ?? 0, request: modelRequestTo(p.request ?? { model: "", messages: [] }) }),
    (a: T.RequestPatch | null) => (a === null ? {} : { patch: patchTo(expectObject(a, "pre_api_request_mutable", "a RequestPatch")) }),
    (m) => (m.patch ? patchFrom(m.patch) : null)),
  row("pre_llm_call_can_provide_response", "preLlmCallCanProvideResponse", "PreLlmCallCanProvideResponse", "LlmRequest", "ModelResponseResponse",
    (m) => ({ sessionId: str(m.sessionId), iteration: num(m.iteration), route: str(m.route), request: modelRequestFrom(m.request) }) satisfies T.LlmRequest,
    (p: Partial<T.LlmRequest>) => ({ sessionId: p.sessionId ?? "", iteration: p.iteration ?? 0, route: p.route ?? "", request: modelRequestTo(p.request ?? { model: "", messages: [] }) }),
    (a: T.ModelResponse | null) => {
      if (a === null) return {};
      const o = expectObject(a, "pre_llm_call_can_provide_response", "a ModelResponse {message: {content, toolCalls}}");
      const m = expectObject(o.message ?? {}, "pre_llm_call_can_provide_response", "a Message {content, toolCalls}");
      return {
        response: {
          model: expectString(o.model ?? "", "model"),
          message: messageTo({ ...(m as T.Message), role: (m.role as T.Role | undefined) ?? "assistant" }),
          usage: usageTo(o.usage as T.Usage | undefined),
          stopReason: expectString(o.stopReason ?? "", "stopReason"),
        },
      };
    },
    (m) => (m.response ? modelResponseFrom(m.response) : null)),
  row("post_llm_call_can_reissue", "postLlmCallCanReissue", "PostLlmCallCanReissue", "LlmCall", "ReissueResponse",
    (m) => {
      const out: T.LlmCall = {
        sessionId: str(m.sessionId), iteration: num(m.iteration), route: str(m.route),
        request: modelRequestFrom(m.request), response: modelResponseFrom(m.response),
      };
      if (m.partial) out.partial = true;
      return out;
    },
    (p: Partial<T.LlmCall>) => ({
      sessionId: p.sessionId ?? "", iteration: p.iteration ?? 0, route: p.route ?? "",
      request: modelRequestTo(p.request ?? { model: "", messages: [] }),
      response: modelResponseTo(p.response ?? { model: "", message: { role: "assistant" }, usage: { inputTokens: 0, outputTokens: 0 }, stopReason: "" }),
      partial: p.partial ?? false,
    }),
    (a: T.Reissue | null) => {
      if (a === null) return {};
      const o = expectObject(a, "post_llm_call_can_reissue", "a Reissue {patch, reason}");
      return { reissue: { patch: patchTo(expectObject(o.patch ?? {}, "post_llm_call_can_reissue", "a RequestPatch")), reason: expectString(o.reason ?? "", "reissue.reason") } };
    },
    (m) => (m.reissue ? ({ patch: patchFrom(m.reissue.patch ?? {}), reason: str(m.reissue.reason) } satisfies T.Reissue) : null)),
  row("post_llm_call", "postLlmCall", "PostLlmCall", "Inference", "Empty",
    (m) => {
      const out: T.Inference = {
        sessionId: str(m.sessionId), iteration: num(m.iteration), route: str(m.route), model: str(m.model),
        usage: usageFrom(m.usage), stopReason: str(m.stopReason), durationNs: num(m.durationNs),
      };
      if (m.escalated) out.escalated = true;
      if (m.reason) out.reason = m.reason;
      if (m.error) out.error = m.error;
      if (m.providedBy) out.providedBy = m.providedBy;
      return out;
    },
    (p: Partial<T.Inference>) => ({
      sessionId: p.sessionId ?? "", iteration: p.iteration ?? 0, route: p.route ?? "", model: p.model ?? "",
      usage: usageTo(p.usage), stopReason: p.stopReason ?? "", escalated: p.escalated ?? false,
      reason: p.reason ?? "", durationNs: p.durationNs ?? 0, error: p.error ?? "", providedBy: p.providedBy ?? "",
    }),
    null, null),
  row("transform_llm_output", "transformLlmOutput", "TransformLlmOutput", "LlmOutput", "TextResponse",
    (m) => {
      const out: T.LlmOutput = { sessionId: str(m.sessionId), text: str(m.text) };
      if (m.windowed) {
        out.windowed = true;
        out.offset = num(m.offset);
        out.overlap = num(m.overlap);
        out.last = m.last ?? false;
      }
      return out;
    },
    (p: Partial<T.LlmOutput>) => ({
      sessionId: p.sessionId ?? "", text: p.text ?? "", windowed: p.windowed ?? false,
      offset: p.offset ?? 0, overlap: p.overlap ?? 0, last: p.last ?? false,
    }),
    (a: T.TextReplacement | null) => {
      if (a === null) return {};
      const o = expectObject(a, "transform_llm_output", "a TextReplacement {text: string} or {text: \"\", stop: {message}}");
      if (o.stop !== undefined && o.stop !== null) {
        const st = expectObject(o.stop, "transform_llm_output", "a stop {message: string}");
        return { stop: { message: expectString(st.message ?? "", "stop.message") } };
      }
      return { text: expectString(o.text, "text") };
    },
    (m) => {
      if (m.stop) return { text: str(m.text), stop: { message: str(m.stop.message) } } satisfies T.TextReplacement;
      return m.text !== undefined && m.text !== null ? ({ text: m.text } satisfies T.TextReplacement) : null;
    }),
  row("pre_tool_call", "preToolCall", "PreToolCall", "ToolCallRequest", "PreToolCallResponse",
    toolCallRequestFrom, toolCallRequestTo,
    (a: T.PreToolCallDecision | null) => {
      if (a === null) return {};
      const o = expectObject(a, "pre_tool_call", "a PreToolCallDecision {block}, {ask} or {modifiedArgs}");
      const out: AnyObj = {};
      if (o.block !== undefined && o.block !== null) {
        out.block = { message: expectString(expectObject(o.block, "pre_tool_call", "a Block {message}").message, "block.message") };
      }
      if (o.ask !== undefined && o.ask !== null) {
        out.ask = { reason: expectString(expectObject(o.ask, "pre_tool_call", "an Ask {reason}").reason, "ask.reason") };
      }
      if (o.modifiedArgs !== undefined && o.modifiedArgs !== null) {
        const s = JSON.stringify(o.modifiedArgs);
        if (typeof s !== "string") throw new MalformedAnswer(`pre_tool_call: modifiedArgs is ${describeValue(o.modifiedArgs)}, want a JSON object`);
        out.modifiedArgs = Buffer.from(s, "utf8");
      }
      return out;
    },
    (m) => {
      if (!m.block && !m.ask && (m.modifiedArgs === undefined || m.modifiedArgs === null)) return null;
      const d: T.PreToolCallDecision = {};
      if (m.block) d.block = { message: str(m.block.message) };
      if (m.ask) d.ask = { reason: str(m.ask.reason) };
      if (m.modifiedArgs !== undefined && m.modifiedArgs !== null) d.modifiedArgs = parseJSON(text(m.modifiedArgs)) as T.JsonObject;
      return d;
    }),
  row("pre_tool_call_can_provide_result", "preToolCallCanProvideResult", "PreToolCallCanProvideResult", "ToolCallRequest", "ToolResultResponse",
    toolCallRequestFrom, toolCallRequestTo,
    (a: T.ToolResult | null) => (a === null ? {} : { result: toolResultTo(a, "pre_tool_call_can_provide_result") }),
    (m) => (m.result ? toolResultFrom(m.result) : null)),
  row("post_tool_call", "postToolCall", "PostToolCall", "ToolCallOutcome", "Empty",
    outcomeFrom, outcomeTo, null, null),
  row("transform_tool_result", "transformToolResult", "TransformToolResult", "ToolCallOutcome", "ToolResultResponse",
    outcomeFrom, outcomeTo,
    (a: T.ToolResult | null) => (a === null ? {} : { result: toolResultTo(a, "transform_tool_result") }),
    (m) => (m.result ? toolResultFrom(m.result) : null)),
  row("on_user_message", "onUserMessage", "OnUserMessage", "UserMessage", "UserMessageResponse",
    (m) => ({ sessionId: str(m.sessionId), route: str(m.route), index: num(m.index), text: str(m.text) }) satisfies T.UserMessage,
    (p: Partial<T.UserMessage>) => ({ sessionId: p.sessionId ?? "", route: p.route ?? "", index: p.index ?? 0, text: p.text ?? "" }),
    (a: T.UserMessageDecision | null) => {
      if (a === null) return {};
      const o = expectObject(a, "on_user_message", "a UserMessageDecision {block} or {additionalContext}");
      const out: AnyObj = {};
      if (o.block !== undefined && o.block !== null) {
        out.block = { message: expectString(expectObject(o.block, "on_user_message", "a Block {message}").message, "block.message") };
      }
      if (o.additionalContext !== undefined && o.additionalContext !== null && o.additionalContext !== "") {
        out.additionalContext = expectString(o.additionalContext, "additionalContext");
      }
      return out;
    },
    (m) => {
      if (!m.block && !m.additionalContext) return null;
      const d: T.UserMessageDecision = {};
      if (m.block) d.block = { message: str(m.block.message) };
      if (m.additionalContext) d.additionalContext = str(m.additionalContext);
      return d;
    }),
  row("post_tool_call_can_add_context", "postToolCallCanAddContext", "PostToolCallCanAddContext", "ToolCallOutcome", "AddedContextResponse",
    outcomeFrom, outcomeTo,
    (a: T.AddedContext | null) => {
      if (a === null) return {};
      const o = expectObject(a, "post_tool_call_can_add_context", "an AddedContext {additionalContext: string}");
      return { additionalContext: expectString(o.additionalContext, "additionalContext") };
    },
    (m) => (m.additionalContext !== undefined && m.additionalContext !== null ? ({ additionalContext: m.additionalContext } satisfies T.AddedContext) : null)),
];

const byName = new Map(TABLE.map((r) => [r.hook as string, r]));

/** The row of a hook, or undefined for a hook this SDK does not know. */
export function rowOf(hook: string): HookRow | undefined {
  return byName.get(hook);
}
