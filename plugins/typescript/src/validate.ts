// The rules the host applies to every answer (hooks/validate.go), for the
// test harness: an answer that breaks them is malformed, and the host takes
// it as no opinion and counts a failure. serve() does not check them: the
// host does, whatever the plugin's language.

import type * as T from "./types";
import { ANSWER_TYPES } from "./generated/catalogue";

/** What one answer may carry at most by default (hooks.DefaultMaxResultSize). */
export const DEFAULT_MAX_RESULT_SIZE = 4 << 20;

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const bytes = (s: string | undefined): number => (s === undefined ? 0 : Buffer.byteLength(s, "utf8"));

function checkToolList(tools: T.ToolSpec[]): string | undefined {
  const seen = new Set<string>();
  for (const t of tools) {
    if (!TOOL_NAME.test(t.name)) return `tool name ${JSON.stringify(t.name)} must match ^[a-zA-Z0-9_-]{1,64}$`;
    if (seen.has(t.name)) return `tool ${JSON.stringify(t.name)} listed twice`;
    seen.add(t.name);
  }
  return undefined;
}

function toolsSize(tools: T.ToolSpec[] | undefined): number {
  return (tools ?? []).reduce((n, t) => n + bytes(t.name) + bytes(t.description) + (t.inputSchema ? bytes(JSON.stringify(t.inputSchema)) : 0), 0);
}

function checkMessages(msgs: T.Message[]): string | undefined {
  for (const [i, m] of msgs.entries()) {
    if (!["system", "user", "assistant", "tool"].includes(m.role)) return `message ${i} has role ${JSON.stringify(m.role)}, want system, user, assistant or tool`;
    const calls = m.toolCalls ?? [];
    if (calls.length > 0 && m.role !== "assistant") return `message ${i} has role ${JSON.stringify(m.role)} and tool calls; only assistant messages carry tool calls`;
    const ids = new Set<string>();
    for (const [j, c] of calls.entries()) {
      if (c.id === "") return `message ${i}: tool call ${j} has no id`;
      if (c.name === "") return `message ${i}: tool call ${JSON.stringify(c.id)} has no tool name`;
      if (ids.has(c.id)) return `message ${i}: tool call id ${JSON.stringify(c.id)} used twice`;
      ids.add(c.id);
    }
    if (m.role === "tool" && !m.toolCallId) return `message ${i} is a tool result without tool_call_id`;
  }
  return undefined;
}

function messagesSize(msgs: T.Message[] | undefined): number {
  return (msgs ?? []).reduce(
    (n, m) => n + bytes(m.content) + bytes(m.toolCallId) + bytes(m.toolName) + (m.toolCalls ?? []).reduce((k, c) => k + bytes(c.id) + bytes(c.name) + bytes(c.arguments), 0),
    0,
  );
}

function checkPatch(p: T.RequestPatch): string | undefined {
  if (p.model === "") return "model set to the empty string";
  if (p.messages !== undefined && p.messages.length === 0) return "messages set to an empty list";
  const m = checkMessages(p.messages ?? []);
  if (m) return m;
  if (p.maxTokens !== undefined && p.maxTokens < 0) return `max_tokens ${p.maxTokens} is negative`;
  if (p.temperature !== undefined && !Number.isFinite(p.temperature)) return `temperature ${p.temperature} is not a finite number`;
  if (p.temperature !== undefined && (p.temperature < 0 || p.temperature > 2)) return `temperature ${p.temperature} is outside [0, 2], the range the upstream takes`;
  if (p.tools !== undefined) return checkToolList(p.tools);
  return undefined;
}

const STOP_REASONS = ["", "end_turn", "tool_use", "max_tokens", "refusal", "other"];

// A response given instead of the model's (hooks.ModelResponse.checkProvided).
function checkProvided(r: T.ModelResponse): string | undefined {
  const m = r.message;
  if (m.role && m.role !== "assistant") return `the message has role ${JSON.stringify(m.role)}; a provided response is an assistant message`;
  if (m.toolCallId || m.toolName || m.isError) return "the message carries tool-result fields (tool_call_id, tool_name, is_error); a provided response is an assistant message";
  const calls = m.toolCalls ?? [];
  if (!m.content && calls.length === 0) return "the message has neither text nor tool calls";
  const ids = new Set<string>();
  for (const [j, c] of calls.entries()) {
    if (c.id === "") return `tool call ${j} has no id`;
    if (!TOOL_NAME.test(c.name)) return `tool call ${JSON.stringify(c.id)}: tool name ${JSON.stringify(c.name)} must match ^[a-zA-Z0-9_-]{1,64}$`;
    if (ids.has(c.id)) return `tool call id ${JSON.stringify(c.id)} used twice`;
    if (c.arguments) {
      let v: unknown;
      try {
        v = JSON.parse(c.arguments);
      } catch {
        v = undefined;
      }
      if (typeof v !== "object" || v === null || Array.isArray(v)) return `tool call ${JSON.stringify(c.id)}: arguments are not a JSON object`;
    }
    ids.add(c.id);
  }
  if (!STOP_REASONS.includes(r.stopReason ?? "")) return `stop reason ${JSON.stringify(r.stopReason)}, want end_turn, tool_use, max_tokens, refusal or other`;
  if (r.stopReason === "tool_use" && calls.length === 0) return "stop reason tool_use without tool calls";
  if ((r.usage?.inputTokens ?? 0) < 0 || (r.usage?.outputTokens ?? 0) < 0) return "negative token counts in usage";
  return undefined;
}

const patchSize = (p: T.RequestPatch): number => messagesSize(p.messages) + toolsSize(p.tools) + bytes(p.model) + bytes(p.system);

/**
 * What is wrong with hook's answer (as the host decoded it), or undefined
 * when the host takes it. null, no opinion, is always legal.
 */
export function checkAnswer(hook: T.HookName, answer: unknown, maxSize = DEFAULT_MAX_RESULT_SIZE): string | undefined {
  if (answer === null || answer === undefined) return undefined;
  let size = 0;
  let problem: string | undefined;
  // By the answer's type (the catalogue's, generated/catalogue.ts): the
  // rules are the type's, whichever hook answers with it.
  switch (ANSWER_TYPES[hook]) {
    case "ToolListOverride": {
      const a = answer as T.ToolListOverride;
      problem = checkToolList(a.tools);
      size = toolsSize(a.tools);
      break;
    }
    case "RequestPatch": {
      const a = answer as T.RequestPatch;
      problem = checkPatch(a);
      size = patchSize(a);
      break;
    }
    case "Reissue": {
      const a = answer as T.Reissue;
      problem = checkPatch(a.patch);
      size = patchSize(a.patch) + bytes(a.reason);
      break;
    }
    case "TextReplacement": {
      const a = answer as T.TextReplacement;
      if (a.stop) {
        if (a.text) problem = "an answer both replaces the text and stops it; give one";
        size = bytes(a.stop.message);
      } else {
        size = bytes(a.text);
      }
      break;
    }
    case "PreToolCallDecision": {
      const a = answer as T.PreToolCallDecision;
      if ([!!a.block, !!a.ask, a.modifiedArgs !== undefined].filter(Boolean).length > 1) problem = "more than one of block, ask and modified_args set";
      else if (a.modifiedArgs !== undefined && (typeof a.modifiedArgs !== "object" || a.modifiedArgs === null || Array.isArray(a.modifiedArgs))) {
        problem = "modified_args is not a JSON object";
      }
      size = (a.modifiedArgs !== undefined ? bytes(JSON.stringify(a.modifiedArgs)) : 0) + bytes(a.block?.message) + bytes(a.ask?.reason);
      break;
    }
    case "ToolResult":
      size = bytes((answer as T.ToolResult).content);
      break;
    case "ModelResponse": {
      const a = answer as T.ModelResponse;
      problem = checkProvided(a);
      size = messagesSize([a.message]) + bytes(a.model);
      break;
    }
    case "UserMessageDecision": {
      const a = answer as T.UserMessageDecision;
      if (a.block && a.additionalContext) problem = "both block and additional_context set";
      size = bytes(a.additionalContext) + bytes(a.block?.message);
      break;
    }
    case "AddedContext":
      size = bytes((answer as T.AddedContext).additionalContext);
      break;
  }
  if (problem) return problem;
  if (size > maxSize) return `the answer carries ${size} bytes, over max_result_size (${maxSize} bytes)`;
  return undefined;
}
