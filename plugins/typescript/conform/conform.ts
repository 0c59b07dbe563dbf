#!/usr/bin/node
// The conform plugin in TypeScript, written with @hookhost/plugin, exactly
// as internal/conformance/doc.go specifies it; the conformance harness
// drives it under the real host.

import { HOOK_NAMES, OBSERVERS, serve, s, type Carrier, type HookContext, type Hooks, type JsonObject, type Plugin, type ToolSpec } from "../src/index";

let tag = "conform";
const seen: string[] = [];

const object = (properties: JsonObject, required: string[]): JsonObject => ({ type: "object", properties, required });
const tools: ToolSpec[] = [
  { name: "conform__echo", description: "Echoes its text with the plugin's tag.", inputSchema: object({ text: { type: "string" } }, ["text"]) },
  { name: "conform__sleep", description: "Sleeps ms milliseconds, or until cancelled.", inputSchema: object({ ms: { type: "integer" } }, ["ms"]) },
  { name: "conform__seen", description: "Lists what the observers saw.", inputSchema: { type: "object" } },
  { name: "conform__raise", description: "Always fails.", inputSchema: { type: "object" } },
];

function textArg(args: unknown): string | undefined {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return undefined;
  const t = (args as JsonObject).text;
  return typeof t === "string" ? t : undefined;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal.addEventListener("abort", done, { once: true });
  });
}

// ASCII only, as the spec says: "ß".toUpperCase() would be "SS".
const upperASCII = (t: string): string => t.replace(/[a-z]+/g, (m) => m.toUpperCase());

// The spec's handler of every hook it does not name: an observer records
// "<hook> <session_id>", an answering hook gives no opinion. The plugin's
// own methods below override them.
function defaults(): Hooks {
  const out: Record<string, (payload: { sessionId?: string }) => void> = {};
  for (const hook of HOOK_NAMES) {
    const method = hook.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    out[method] = OBSERVERS.includes(hook) ? (p) => void seen.push(`${hook} ${p.sessionId ?? ""}`) : () => undefined;
  }
  return out as unknown as Hooks;
}

// The carriers hook calls came by so far: "lane" or "grpc".
const carriers = new Set<Carrier | undefined>();

/**
 * Logs, the first time an answering hook's call comes by each carrier,
 * which one it came by; the conformance check of this plugin asserts that
 * over protocol 2 its calls came on the lane.
 */
function arrived(ctx: HookContext): void {
  if (carriers.has(ctx.carrier)) return;
  carriers.add(ctx.carrier);
  ctx.log.info("conform hook calls arrive", { carrier: ctx.carrier ?? "none" });
}

/** plugin with arrived called first in each of its answering hooks. */
function noticingCarriers<C>(plugin: Plugin<C>): Plugin<C> {
  const methods = plugin as unknown as Record<string, unknown>;
  for (const hook of HOOK_NAMES) {
    if (OBSERVERS.includes(hook)) continue;
    const method = hook.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    const fn = methods[method];
    if (typeof fn !== "function") continue;
    methods[method] = function (this: unknown, payload: unknown, ctx: HookContext) {
      arrived(ctx);
      return fn.call(this, payload, ctx);
    };
  }
  return plugin;
}

serve(noticingCarriers({
  ...defaults(),
  name: "conform",
  version: "1.0.0",
  tools,
  hookMatchers: { pre_tool_call_can_provide_result: ["conform__*"] },
  config: s.object({ tag: s.string().optional() }),
  configure(config, { log }) {
    tag = config.tag ?? "conform";
    log.warn("conform configured", { tag });
  },

  onSessionStart(e) {
    seen.push(`on_session_start ${e.sessionId}`);
  },
  onSessionEnd(e) {
    seen.push(`on_session_end ${e.sessionId} ${e.reason}`);
  },
  postLlmCall(e) {
    seen.push(`post_llm_call ${e.sessionId} ${e.model}`);
  },
  postToolCall(e) {
    seen.push(`post_tool_call ${e.name} ${e.status}` + (e.origin ? ` ${e.origin}` : ""));
  },

  preToolListFinalized(req) {
    if (!req.tools.some((t) => t.name.startsWith("hidden_"))) return;
    return { tools: req.tools.filter((t) => !t.name.startsWith("hidden_")) };
  },
  preApiRequestMutable(req) {
    if (req.request.model !== "patch-me") return;
    return { system: `patched by ${tag}`, temperature: 0.5 };
  },
  preLlmCallCanProvideResponse(req) {
    if (req.request.model !== "provide-me") return;
    return {
      model: "",
      message: {
        role: "assistant",
        content: `provided by ${tag}`,
        toolCalls: [{ id: "conform_call", name: "conform__echo", arguments: JSON.stringify({ text: "hi" }) }],
      },
      usage: { inputTokens: 3, outputTokens: 5 },
      stopReason: "",
    };
  },
  postLlmCallCanReissue(call) {
    if (!(call.response.message.content ?? "").includes("REISSUE")) return;
    return { reason: "conform asked again", patch: { messages: [...call.request.messages, { role: "user", content: "again" }] } };
  },
  transformLlmOutput(out) {
    if (out.text === "") return;
    return { text: `${out.text} -- ${tag}` };
  },
  preToolCall(call) {
    const text = textArg(call.args);
    if (text === undefined) return;
    if (text === "forbidden") return { block: { message: "conform blocks forbidden text" } };
    if (text.startsWith("ask:")) return { ask: { reason: text.slice("ask:".length) } };
    if (text.startsWith("shout:")) return { modifiedArgs: { ...(call.args as JsonObject), text: upperASCII(text.slice("shout:".length)) } };
  },
  async preToolCallCanProvideResult(call, ctx) {
    switch (call.name) {
      case "conform__echo": {
        const text = textArg(call.args);
        if (text === "fail") return { content: "conform refuses to echo fail", isError: true };
        return { content: JSON.stringify(call.origin ? { echo: text, tag, origin: call.origin } : { echo: text, tag }) };
      }
      case "conform__seen":
        return { content: JSON.stringify(seen) };
      case "conform__sleep": {
        const ms = (call.args as JsonObject | undefined)?.ms;
        await sleep(typeof ms === "number" ? ms : 0, ctx.signal);
        return { content: "slept" };
      }
      case "conform__raise":
        throw new Error("conform__raise raises, as asked");
    }
  },
  transformToolResult(e) {
    if (e.name === "conform__echo" && e.status.startsWith("provided_by:")) {
      return { content: `${e.result.content} (transformed)`, isError: e.result.isError };
    }
    if (e.name === "native_upper") return { content: upperASCII(e.result.content) };
  },
  onUserMessage(m) {
    if (m.text === "forbidden") return { block: { message: "conform blocks forbidden text" } };
    if (m.text.startsWith("context:")) return { additionalContext: `${m.text.slice("context:".length)} -- ${tag}` };
  },
  postToolCallCanAddContext(e) {
    if (e.name === "conform__echo" && e.status.startsWith("provided_by:")) return { additionalContext: `echo checked by ${tag}` };
  },
}));
