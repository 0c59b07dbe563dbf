// The hook payloads and answers, mirroring the host's Go types (package
// hooks, types.go) with camelCase field names. Tool arguments travel as the
// JSON text the model wrote (`arguments`); where a handler usually wants
// them as a value, the SDK also hands them over parsed (`args`).

/** Who wrote a message. */
export type Role = "system" | "user" | "assistant" | "tool";

/** A tool call an assistant message carries. `arguments` is raw JSON text. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** One provider-neutral conversation message. */
export interface Message {
  role: Role | string;
  content?: string | undefined;
  toolCalls?: ToolCall[] | undefined;
  toolCallId?: string | undefined;
  toolName?: string | undefined;
  isError?: boolean | undefined;
}

/** A JSON object, as tool schemas and tool arguments are. */
export type JsonObject = { [key: string]: unknown };

/** A tool offered to the model. `inputSchema` is a JSON Schema object. */
export interface ToolSpec {
  name: string;
  description: string;
  inputSchema?: JsonObject | undefined;
}

/** Tokens counted for one or more model calls. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

/** The provider-neutral request for one model call. */
export interface ModelRequest {
  model: string;
  system?: string | undefined;
  messages: Message[];
  tools?: ToolSpec[] | undefined;
  maxTokens?: number | undefined;
  temperature?: number | undefined;
}

/** The provider-neutral answer of one model call. */
export interface ModelResponse {
  model: string;
  message: Message;
  usage: Usage;
  stopReason: string;
}

/**
 * What a tool call produced, as the model will see it. `content` is JSON
 * text; text that is not JSON reaches the model as a JSON string holding it.
 */
export interface ToolResult {
  content: string;
  isError?: boolean | undefined;
}

/** The path traffic takes through the host. */
export type Route = "bypass" | "gateway" | string;

/** Why a conversation run ended. */
export type EndReason = "completed" | "max_iterations" | "error" | "cancelled" | string;

/** How a tool call was answered: "ok", "error", "blocked" or "provided_by:<plugin>". */
export type CallStatus = string;

/** Payload of on_session_start. */
export interface SessionStart {
  sessionId: string;
  model: string;
  route: Route;
}

/** Payload of on_session_end. */
export interface SessionEnd {
  sessionId: string;
  model: string;
  route: Route;
  reason: EndReason;
  iterations: number;
  usage: Usage;
  error?: string | undefined;
}

/** Payload of pre_tool_list_finalized. */
export interface ToolListRequest {
  sessionId: string;
  iteration: number;
  tools: ToolSpec[];
}

/** Answer of pre_tool_list_finalized: the tool list for this model call. */
export interface ToolListOverride {
  tools: ToolSpec[];
}

/** Payload of pre_api_request_mutable. */
export interface ApiRequest {
  sessionId: string;
  iteration: number;
  request: ModelRequest;
}

/**
 * Overrides fields of a ModelRequest; a field left undefined is left alone.
 * Messages must keep the shape every provider accepts (see the host's
 * hooks.RequestPatch); a patch that breaks the rules applies nothing.
 */
export interface RequestPatch {
  model?: string | undefined;
  system?: string | undefined;
  messages?: Message[] | undefined;
  tools?: ToolSpec[] | undefined;
  maxTokens?: number | undefined;
  temperature?: number | undefined;
}

/** Payload of post_llm_call_can_reissue: one response and its request. */
export interface LlmCall {
  sessionId: string;
  iteration: number;
  route: Route;
  request: ModelRequest;
  response: ModelResponse;
  /**
   * The response's text is only the opening of a streamed answer (the
   * plugin declared decideAfterBytes); tool calls, usage and stop reason
   * are not known yet.
   */
  partial?: boolean | undefined;
}

/**
 * Payload of pre_llm_call_can_provide_response: the request of one model
 * call as it will go upstream. Answer with a ModelResponse (an assistant
 * message with text or tool calls; model, usage and stopReason may be left
 * empty) to answer instead of the model, or null to let the model answer.
 */
export interface LlmRequest {
  sessionId: string;
  iteration: number;
  route: Route;
  request: ModelRequest;
}

/** Answer of post_llm_call_can_reissue: make the call again, patched. */
export interface Reissue {
  patch: RequestPatch;
  reason: string;
}

/** Payload of post_llm_call, the observer of every inference. */
export interface Inference {
  sessionId: string;
  iteration: number;
  route: Route;
  model: string;
  usage: Usage;
  stopReason: string;
  escalated?: boolean | undefined;
  reason?: string | undefined;
  /** How long the call took, in nanoseconds. */
  durationNs: number;
  error?: string | undefined;
  /** The plugin that answered instead of the model (pre_llm_call_can_provide_response). */
  providedBy?: string | undefined;
}

/**
 * Payload of transform_llm_output: the final answer text, or one window of
 * a streamed answer (`windowed`; the plugin declared windowBytes in
 * hookOptions). None of a window's text has reached the client: its first
 * `overlap` bytes repeat the previous window's held-back end, `offset` is
 * where it starts in the answer as released, `last` says the answer ends
 * with it. A replacement replaces the whole window.
 */
export interface LlmOutput {
  sessionId: string;
  text: string;
  windowed?: boolean | undefined;
  offset?: number | undefined;
  overlap?: number | undefined;
  last?: boolean | undefined;
}

/**
 * Answer of transform_llm_output: the replacement text, or `stop`, which
 * ends the answer with the protocol's refusal form, its message shown
 * instead of what was not released yet (then `text` must be empty).
 */
export interface TextReplacement {
  text: string;
  stop?: { message: string } | undefined;
}

/** A plugin's options for one hook (see PROTOCOL.md, Describe). */
export interface HookOptions {
  /** transform_llm_output: window size and the bytes each window repeats. */
  windowBytes?: number | undefined;
  overlapBytes?: number | undefined;
  /** post_llm_call_can_reissue: decide on the streamed answer's first bytes. */
  decideAfterBytes?: number | undefined;
}

/**
 * Where a tool call goes: `"native"` (a native tool of the host),
 * `"plugin"` (a plugin's tool), `"client"` (a tool the gateway's client
 * runs itself) or `"mcp:NAME"` (a tool of the configured MCP server NAME).
 * Matchers still match the tool's name.
 */
export type Origin = "native" | "plugin" | "client" | `mcp:${string}`;

/** The MCP server of an `"mcp:NAME"` origin, else undefined. */
export function mcpServerOf(origin: string): string | undefined {
  return origin.startsWith("mcp:") && origin.length > 4 ? origin.slice(4) : undefined;
}

/** Payload of pre_tool_call and pre_tool_call_can_provide_result. */
export interface ToolCallRequest {
  sessionId: string;
  callId: string;
  name: string;
  /** The arguments as the JSON text the model produced (it may be invalid). */
  arguments: string;
  /** `arguments` parsed, or undefined when it is not JSON. */
  args: unknown;
  /** Where the call goes. */
  origin: Origin;
}

/** Stops a tool call; `message` tells the model why. */
export interface Block {
  message: string;
}

/**
 * Holds a tool call until a person approves it; `reason` tells them why.
 * Denied, or with no one to ask, the call is blocked with the reason.
 */
export interface Ask {
  reason: string;
}

/**
 * Answer of pre_tool_call: a block, an ask, or replacement arguments (a
 * JSON object); at most one of the three.
 */
export interface PreToolCallDecision {
  block?: Block | undefined;
  ask?: Ask | undefined;
  modifiedArgs?: JsonObject | undefined;
}

/**
 * Payload of on_user_message: a new user message, before the first model
 * call of its turn. `index` is its place in the conversation's messages.
 */
export interface UserMessage {
  sessionId: string;
  route: Route;
  index: number;
  text: string;
}

/**
 * Answer of on_user_message: a block (its message is the turn's answer,
 * and the model is not called), or context the model sees beside the
 * user's message, never both.
 */
export interface UserMessageDecision {
  block?: Block | undefined;
  additionalContext?: string | undefined;
}

/** Answer of post_tool_call_can_add_context: text the model sees after the tool's result. */
export interface AddedContext {
  additionalContext: string;
}

/** Payload of post_tool_call, transform_tool_result and post_tool_call_can_add_context. */
export interface ToolCallOutcome {
  sessionId: string;
  callId: string;
  name: string;
  arguments: string;
  args: unknown;
  result: ToolResult;
  status: CallStatus;
  /** How long the call took, in nanoseconds. */
  durationNs: number;
  /** Where the call went. */
  origin: Origin;
}

export type { HookName, ToolHookName } from "./generated/catalogue";
