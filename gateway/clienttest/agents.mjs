// agents.mjs runs whole conversations through real agent clients (the
// official SDKs, the Vercel AI SDK, LangChain and the OpenAI Agents SDK),
// each the way its own documentation continues a conversation, and prints
// what every model request gave back, for realclients_test.go to assert on.
//
// Input (stdin): a JSON array of cases
//   {"id", "client", "stream": bool, "base": "http://127.0.0.1:port",
//    "key", "model", "task": "plugin" | "client_tool" | "two_turns"}
// Output (the file named by the first argument): a JSON array, one entry per case, in any order:
//   {"id", "turns": [{"text", "calls": [{"id","name","args"}],
//    "in", "out"}], "error": {...} | null, "exchanges": [{"url",
//    "request", "status", "body"}]}
// A turn is one model response as the client saw it (a step, a raw
// response, an accumulated message), so a client tool's round trip is two
// turns whether the client loops by itself or is called twice.
//
// The cases run concurrently in this one process: loading the frameworks
// costs more than running a case, and every case has its own clients,
// fetch capture and history, so nothing is shared between them.
import { writeFileSync } from "node:fs";
import { z } from "zod";

// The AI SDK prints its warnings on stdout; the output goes to a file
// anyway, but the warnings are noise in a test log.
globalThis.AI_SDK_LOG_WARNINGS = false;

// The conversation the tests hold every client to: the texts and the
// client tool are the ones the fake upstreams and the offline model answer.
export const prompts = {
  plugin: "What is the weather in Paris?",
  clientTool: "What time is it in Paris?",
  first: "Hello, my name is Ada.",
  second: "What is my name?",
};
const timeTool = { name: "get_time", description: "Current time in a time zone" };
const timeResult = "12:00";

// capturer makes a fetch that keeps every exchange, the body teed byte for
// byte, so the raw streams can be checked as well as what the client made
// of them.
function capturer() {
  const exchanges = [];
  const pending = [];
  async function fetchAndKeep(url, init) {
    const res = await fetch(url, init);
    const ex = { url: String(url), request: typeof init?.body === "string" ? init.body : null, status: res.status, ctype: res.headers.get("content-type") ?? "", body: "" };
    exchanges.push(ex);
    if (!res.body) return res;
    const [mine, theirs] = res.body.tee();
    pending.push(new Response(theirs).arrayBuffer().then((b) => { ex.body = Buffer.from(b).toString("latin1"); }, () => {}));
    return new Response(mine, { status: res.status, statusText: res.statusText, headers: res.headers });
  }
  return { fetch: fetchAndKeep, exchanges, settle: () => Promise.allSettled(pending) };
}

function describe(err) {
  return {
    class: err?.constructor?.name ?? typeof err,
    status: err?.status ?? err?.statusCode ?? err?.lastError?.statusCode ?? null,
    message: String(err?.message ?? err).slice(0, 2000),
    body: String(err?.responseBody ?? err?.lastError?.responseBody ?? "").slice(0, 2000),
  };
}

const args = (a) => (typeof a === "string" ? a : JSON.stringify(a ?? {}));

// clients maps a client's name to a function that runs one task with it:
// c carries the case (base URL, key, model, stream, extra request fields)
// and collects the turns in c.turns. One function per client rather than
// one interface for all, since the frameworks differ in who loops over
// tool calls and in how a conversation is continued.
const clients = {
  // The official openai client, Chat Completions: history is the messages
  // array with the assistant message appended as returned.
  async "openai/chat"(c, task) {
    const { default: OpenAI } = await import("openai");
    const client = new OpenAI({ baseURL: c.base + "/v1", apiKey: c.key, maxRetries: 0, fetch: c.fetch });
    const tools = [{ type: "function", function: { ...timeTool, parameters: { type: "object", properties: { zone: { type: "string" } }, required: ["zone"] } } }];
    const ask = async (messages) => {
      const params = { model: c.model, messages, tools, ...c.extra };
      let r;
      if (c.stream) r = await client.chat.completions.stream({ ...params, stream_options: { include_usage: true } }).finalChatCompletion();
      else r = await client.chat.completions.create(params);
      const m = r.choices[0].message;
      c.turns.push({ text: m.content ?? "", calls: (m.tool_calls ?? []).map((t) => ({ id: t.id, name: t.function.name, args: t.function.arguments })), in: r.usage?.prompt_tokens ?? 0, out: r.usage?.completion_tokens ?? 0 });
      messages.push(m);
      return m;
    };
    const messages = [{ role: "user", content: firstText(task) }];
    const m = await ask(messages);
    if (task === "client_tool") for (const t of m.tool_calls ?? []) messages.push({ role: "tool", tool_call_id: t.id, content: timeResult });
    if (task === "two_turns") messages.push({ role: "user", content: prompts.second });
    if (task !== "plugin") await ask(messages);
  },

  // The official openai client, Responses: history is the input list with
  // the response's output items appended, as the SDK's docs do.
  async "openai/responses"(c, task) {
    const { default: OpenAI } = await import("openai");
    const client = new OpenAI({ baseURL: c.base + "/v1", apiKey: c.key, maxRetries: 0, fetch: c.fetch });
    const tools = [{ type: "function", ...timeTool, parameters: { type: "object", properties: { zone: { type: "string" } }, required: ["zone"] }, strict: false }];
    const input = [{ role: "user", content: firstText(task) }];
    const ask = async () => {
      const params = { model: c.model, input, tools, ...c.extra };
      const r = c.stream ? await client.responses.stream(params).finalResponse() : await client.responses.create(params);
      c.turns.push(fromResponseOutput(r.output, r.usage?.input_tokens, r.usage?.output_tokens));
      input.push(...r.output);
      return r;
    };
    const r = await ask();
    if (task === "client_tool") for (const it of r.output) if (it.type === "function_call") input.push({ type: "function_call_output", call_id: it.call_id, output: timeResult });
    if (task === "two_turns") input.push({ role: "user", content: prompts.second });
    if (task !== "plugin") await ask();
  },

  // The official @anthropic-ai/sdk client: the assistant's content echoed,
  // then one user message with the tool results.
  async "anthropic/messages"(c, task) {
    const { default: Anthropic } = await import("@anthropic-ai/sdk");
    const client = new Anthropic({ baseURL: c.base, apiKey: c.key, maxRetries: 0, fetch: c.fetch });
    const tools = [{ ...timeTool, input_schema: { type: "object", properties: { zone: { type: "string" } }, required: ["zone"] } }];
    const messages = [{ role: "user", content: firstText(task) }];
    const ask = async () => {
      const params = { model: c.model, max_tokens: 1024, messages, tools, ...c.extra };
      const m = c.stream ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
      c.turns.push({
        text: m.content.filter((b) => b.type === "text").map((b) => b.text).join(""),
        calls: m.content.filter((b) => b.type === "tool_use").map((b) => ({ id: b.id, name: b.name, args: args(b.input) })),
        in: m.usage?.input_tokens ?? 0, out: m.usage?.output_tokens ?? 0,
      });
      messages.push({ role: "assistant", content: m.content });
      return m;
    };
    const m = await ask();
    if (task === "client_tool") messages.push({ role: "user", content: m.content.filter((b) => b.type === "tool_use").map((b) => ({ type: "tool_result", tool_use_id: b.id, content: timeResult })) });
    if (task === "two_turns") messages.push({ role: "user", content: prompts.second });
    if (task !== "plugin") await ask();
  },

  // The Vercel AI SDK: @ai-sdk/openai's default provider (Responses), its
  // chat provider, and @ai-sdk/anthropic; tools with execute, so the SDK
  // runs the client tool itself; the next turn's history is
  // response.messages.
  "ai/openai-responses": (c, task) => aiSDK(c, task, async () => (await import("@ai-sdk/openai")).createOpenAI({ baseURL: c.base + "/v1", apiKey: c.key, fetch: c.fetch })(c.model)),
  "ai/openai-chat": (c, task) => aiSDK(c, task, async () => (await import("@ai-sdk/openai")).createOpenAI({ baseURL: c.base + "/v1", apiKey: c.key, fetch: c.fetch }).chat(c.model)),
  "ai/anthropic": (c, task) => aiSDK(c, task, async () => (await import("@ai-sdk/anthropic")).createAnthropic({ baseURL: c.base + "/v1", apiKey: c.key, fetch: c.fetch })(c.model)),

  // LangChain: a message array, the model's AIMessage appended, the client
  // tool run by LangGraph's ToolNode (which names the tool on its
  // ToolMessage); streamed, the chunks are concatenated as LangChain does.
  "langchain/openai": (c, task) => langchain(c, task, async () => {
    const { ChatOpenAI } = await import("@langchain/openai");
    return new ChatOpenAI({ model: c.model, apiKey: c.key, maxRetries: 0, configuration: { baseURL: c.base + "/v1", fetch: c.fetch } });
  }),
  "langchain/anthropic": (c, task) => langchain(c, task, async () => {
    const { ChatAnthropic } = await import("@langchain/anthropic");
    return new ChatAnthropic({ model: c.model, apiKey: c.key, maxRetries: 0, anthropicApiUrl: c.base, clientOptions: { fetch: c.fetch } });
  }),

  // The OpenAI Agents SDK with its Responses model and its Chat
  // Completions model, a default (strict) zod tool; the next turn is
  // result.history plus the new message, or previousResponseId.
  "agents/responses": (c, task) => agents(c, task, "responses", false),
  "agents/responses-chained": (c, task) => agents(c, task, "responses", true),
  "agents/chat": (c, task) => agents(c, task, "chat", false),
};

// The sampling and identity fields agents commonly set, sent by the
// official clients: none of them changes what the fakes or the offline
// model answer (no stop sequence occurs in an answer).
const sampling = {
  "openai/chat": { top_p: 0.9, seed: 7, stop: ["\n\nEND"], user: "user-1" },
  "openai/responses": { top_p: 0.9, user: "user-1" },
  "anthropic/messages": { top_p: 0.9, stop_sequences: ["\n\nEND"], metadata: { user_id: "user-1" } },
};
for (const [name, extra] of Object.entries(sampling)) {
  clients[name + "+sampling"] = (c, task) => clients[name]({ ...c, extra }, task);
}

function firstText(task) {
  return { plugin: prompts.plugin, client_tool: prompts.clientTool, two_turns: prompts.first }[task];
}

function fromResponseOutput(output, inTokens, outTokens) {
  let text = "";
  const calls = [];
  for (const it of output ?? []) {
    if (it.type === "message") for (const p of it.content ?? []) if (p.type === "output_text") text += p.text;
    if (it.type === "function_call") calls.push({ id: it.call_id ?? it.callId, name: it.name, args: it.arguments });
  }
  return { text, calls, in: inTokens ?? 0, out: outTokens ?? 0 };
}

async function aiSDK(c, task, makeModel) {
  const { generateText, streamText, tool, stepCountIs } = await import("ai");
  const model = await makeModel();
  const tools = { get_time: tool({ description: timeTool.description, inputSchema: z.object({ zone: z.string() }), execute: async () => timeResult }) };
  const messages = [{ role: "user", content: firstText(task) }];
  const ask = async () => {
    const params = { model, messages, tools, maxRetries: 0, stopWhen: stepCountIs(task === "client_tool" ? 2 : 1) };
    let steps, response;
    if (c.stream) {
      let failed;
      const s = streamText({ ...params, onError: ({ error }) => { failed ??= error; } });
      await s.consumeStream();
      if (failed) throw failed;
      [steps, response] = await Promise.all([s.steps, s.response]);
    } else {
      const r = await generateText(params);
      [steps, response] = [r.steps, r.response];
    }
    for (const st of steps) {
      c.turns.push({ text: st.text ?? "", calls: (st.toolCalls ?? []).map((t) => ({ id: t.toolCallId, name: t.toolName, args: args(t.input) })), in: st.usage?.inputTokens ?? 0, out: st.usage?.outputTokens ?? 0 });
    }
    messages.push(...response.messages);
  };
  await ask();
  if (task === "two_turns") {
    messages.push({ role: "user", content: prompts.second });
    await ask();
  }
}

async function langchain(c, task, makeModel) {
  const { HumanMessage } = await import("@langchain/core/messages");
  const { tool } = await import("@langchain/core/tools");
  const { ToolNode } = await import("@langchain/langgraph/prebuilt");
  const getTime = tool(async () => timeResult, { name: timeTool.name, description: timeTool.description, schema: z.object({ zone: z.string() }) });
  const model = (await makeModel()).bindTools([getTime]);
  const history = [new HumanMessage(firstText(task))];
  const ask = async () => {
    let msg;
    if (c.stream) {
      for await (const chunk of await model.stream(history)) msg = msg ? msg.concat(chunk) : chunk;
    } else {
      msg = await model.invoke(history);
    }
    const text = typeof msg.content === "string" ? msg.content : msg.content.filter((p) => p.type === "text").map((p) => p.text).join("");
    c.turns.push({ text, calls: (msg.tool_calls ?? []).map((t) => ({ id: t.id, name: t.name, args: args(t.args) })), in: msg.usage_metadata?.input_tokens ?? 0, out: msg.usage_metadata?.output_tokens ?? 0 });
    history.push(msg);
    return msg;
  };
  const msg = await ask();
  if (task === "client_tool") {
    const out = await new ToolNode([getTime]).invoke({ messages: [...history] });
    history.push(...out.messages);
  }
  if (task === "two_turns") history.push(new HumanMessage(prompts.second));
  if (task !== "plugin") await ask();
  return msg;
}

async function agents(c, task, api, chained) {
  const sdk = await import("@openai/agents");
  const { default: OpenAI } = await import("openai");
  sdk.setTracingDisabled(true);
  const client = new OpenAI({ baseURL: c.base + "/v1", apiKey: c.key, maxRetries: 0, fetch: c.fetch });
  const model = api === "chat" ? new sdk.OpenAIChatCompletionsModel(client, c.model) : new sdk.OpenAIResponsesModel(client, c.model);
  const getTime = sdk.tool({ name: timeTool.name, description: timeTool.description, parameters: z.object({ zone: z.string() }), execute: async () => timeResult });
  const agent = new sdk.Agent({ name: "assistant", instructions: "You are a helpful assistant.", model, tools: [getTime] });
  const go = async (input, opts) => {
    const result = await sdk.run(agent, input, { stream: c.stream, ...opts });
    if (c.stream) {
      await result.completed;
      if (result.error) throw result.error;
    }
    for (const r of result.rawResponses) {
      const t = fromResponseOutput(r.output.map((it) => (it.type === "function_call" ? { ...it, call_id: it.callId } : it)), r.usage?.inputTokens, r.usage?.outputTokens);
      c.turns.push(t);
    }
    return result;
  };
  const first = await go(firstText(task));
  if (task !== "two_turns") return;
  if (chained) await go(prompts.second, { previousResponseId: first.lastResponseId });
  else await go([...first.history, { role: "user", content: prompts.second }]);
}

async function runCase(spec) {
  const cap = capturer();
  const c = { ...spec, fetch: cap.fetch, turns: [] };
  const out = { id: spec.id, turns: c.turns, error: null, exchanges: cap.exchanges };
  try {
    const fn = clients[spec.client];
    if (!fn) throw new Error(`agents.mjs: unknown client ${JSON.stringify(spec.client)}`);
    await fn(c, spec.task);
  } catch (err) {
    out.error = describe(err);
  }
  await cap.settle();
  if (process.env.AGENTS_TRACE) process.stderr.write(`done ${spec.id}\n`);
  return out;
}

// At most this many cases at once: enough to overlap the gateway's work
// with the frameworks', few enough for a small CI machine.
const parallel = Number(process.env.PARALLEL ?? 8);

let raw = "";
for await (const chunk of process.stdin) raw += chunk;
const cases = JSON.parse(raw);
const results = [];
let next = 0;
await Promise.all(Array.from({ length: Math.min(parallel, cases.length) }, async () => {
  while (next < cases.length) results.push(await runCase(cases[next++]));
}));
writeFileSync(process.argv[2], JSON.stringify(results));
