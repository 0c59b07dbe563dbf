#!/usr/bin/node
// The conform plugin (internal/conformance/doc.go) in TypeScript, written
// from the @hookhost/plugin README alone: it checks that the README is
// enough to write a plugin that keeps the whole contract under the host.
import { HOOK_NAMES, OBSERVERS, s, serve } from "@hookhost/plugin";
import type {
  Hooks,
  ApiRequest,
  Inference,
  JsonObject,
  LlmCall,
  LlmOutput,
  SessionEnd,
  SessionStart,
  ToolCallOutcome,
  ToolCallRequest,
  ToolListRequest,
  ToolSpec,
  HookContext,
} from "@hookhost/plugin";

const objectSchema: JsonObject = { type: "object" };

const tools: ToolSpec[] = [
  {
    name: "conform__echo",
    description: "Echoes its text, with the plugin's tag.",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  },
  {
    name: "conform__sleep",
    description: "Sleeps for ms milliseconds, or until the call is cancelled.",
    inputSchema: { type: "object", properties: { ms: { type: "integer" } }, required: ["ms"] },
  },
  { name: "conform__seen", description: "Lists the observer events the plugin has seen.", inputSchema: objectSchema },
  { name: "conform__raise", description: "Always fails, the way a handler fails: by throwing.", inputSchema: objectSchema },
];

let tag = "conform";
// Observer events, one line each, in the order received.
const seen: string[] = [];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// asciiUpper upper-cases ASCII letters only; "ü" stays "ü".
function asciiUpper(text: string): string {
  return text.replace(/[a-z]/g, (c) => c.toUpperCase());
}

// sleep resolves after ms milliseconds, or as soon as signal aborts (the
// host cancelled the call or its deadline passed).
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

// The spec's rule for a hook it does not name: an observer records
// "<hook> <session_id>", an answering hook gives no opinion. The methods
// below override these for the hooks it names.
function defaults(): Hooks {
  const methods: Record<string, (payload: { sessionId?: string }) => void> = {};
  for (const hook of HOOK_NAMES) {
    const method = hook.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    methods[method] = OBSERVERS.includes(hook) ? (p) => void seen.push(`${hook} ${p.sessionId ?? ""}`) : () => undefined;
  }
  return methods as unknown as Hooks;
}

serve({
  ...defaults(),
  name: "conform",
  version: "1.0.0",
  hookMatchers: { pre_tool_call_can_provide_result: ["conform__*"] },
  tools,
  config: s.object({ tag: s.string().default("conform") }),
  configure(config, ctx) {
    tag = config.tag;
    ctx.log.warn("conform configured", { tag });
  },

  onSessionStart(ev: SessionStart) {
    seen.push(`on_session_start ${ev.sessionId}`);
  },
  onSessionEnd(ev: SessionEnd) {
    seen.push(`on_session_end ${ev.sessionId} ${ev.reason}`);
  },
  postLlmCall(ev: Inference) {
    seen.push(`post_llm_call ${ev.sessionId} ${ev.model}`);
  },
  postToolCall(ev: ToolCallOutcome) {
    seen.push(`post_tool_call ${ev.name} ${ev.status}` + (ev.origin ? ` ${ev.origin}` : ""));
  },

  preToolListFinalized(req: ToolListRequest) {
    const hidden = (t: ToolSpec): boolean => t.name.startsWith("hidden_");
    if (!req.tools.some(hidden)) return;
    return { tools: req.tools.filter((t) => !hidden(t)) };
  },

  preApiRequestMutable(req: ApiRequest) {
    if (req.request.model !== "patch-me") return;
    return { system: `patched by ${tag}`, temperature: 0.5 };
  },

  postLlmCallCanReissue(call: LlmCall) {
    if (!(call.response.message.content ?? "").includes("REISSUE")) return;
    return {
      reason: "conform asked again",
      patch: { messages: [...call.request.messages, { role: "user" as const, content: "again" }] },
    };
  },

  transformLlmOutput(out: LlmOutput) {
    if (!out.text) return;
    return { text: `${out.text} -- ${tag}` };
  },

  preToolCall(call: ToolCallRequest) {
    const args = call.args;
    if (!isObject(args) || typeof args.text !== "string") return;
    if (args.text === "forbidden") return { block: { message: "conform blocks forbidden text" } };
    if (args.text.startsWith("shout:")) {
      return { modifiedArgs: { ...(args as JsonObject), text: asciiUpper(args.text.slice("shout:".length)) } };
    }
    return;
  },

  async preToolCallCanProvideResult(call: ToolCallRequest, ctx: HookContext) {
    const args = isObject(call.args) ? call.args : {};
    switch (call.name) {
      case "conform__echo":
        if (args.text === "fail") return { content: "conform refuses to echo fail", isError: true };
        return { content: JSON.stringify(call.origin ? { echo: args.text, tag, origin: call.origin } : { echo: args.text, tag }) };
      case "conform__seen":
        return { content: JSON.stringify(seen) };
      case "conform__sleep":
        await sleep(typeof args.ms === "number" ? args.ms : 0, ctx.signal);
        return { content: "slept" };
      case "conform__raise":
        throw new Error("conform__raise fails, as asked");
      default:
        return;
    }
  },

  transformToolResult(ev: ToolCallOutcome) {
    if (ev.name === "conform__echo" && ev.status.startsWith("provided_by:")) {
      return { content: `${ev.result.content} (transformed)`, isError: ev.result.isError };
    }
    if (ev.name === "native_upper") {
      return { content: asciiUpper(ev.result.content), isError: ev.result.isError };
    }
    return;
  },
});
