// The plugins README.md shows, kept working: if this file changes, the
// README's code must change with it.

import { test } from "node:test";
import * as assert from "node:assert/strict";
import { s, tool, type Plugin } from "../src/index";
import { harness } from "../src/testing";

const email = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;

// "A plugin in 20 lines", without its serve() call.
const redact: Plugin = {
  name: "redact",
  version: "1.0.0",
  transformToolResult(ev, { log }) {
    const masked = ev.result.content.replace(email, "[email]");
    if (masked === ev.result.content) return; // nothing returned: no opinion
    log.info("masked e-mail addresses", { tool: ev.name });
    return { content: masked, isError: ev.result.isError };
  },
};

test("README: the redactor, as its test shows it", async () => {
  const h = await harness(redact, { config: { level: "strict" } });
  try {
    const r = await h.transformToolResult({ name: "read_file", result: { content: '"a@b.io"' } });
    assert.deepEqual(r, { content: '"[email]"' });
    assert.equal(await h.transformToolResult({ name: "read_file", result: { content: '"nothing"' } }), null);
    assert.equal(await h.preToolCall({ name: "read_file", args: { path: "x" } }), null);
    assert.equal(h.logged("info")[0].message, "masked e-mail addresses");
    assert.deepEqual(h.manifest.hooks, ["transform_tool_result"]);
  } finally {
    h.close();
  }
});

test("README: a typed tool", async () => {
  const weather = tool({
    name: "wx__forecast",
    description: "The forecast for a city",
    args: s.object({
      city: s.string({ description: "city name" }),
      days: s.integer({ minimum: 1, maximum: 7 }).default(1),
      units: s.enum(["metric", "imperial"]).optional(),
    }),
    async run({ city, days, units }) {
      const c: string = city;
      const d: number = days;
      const u: "metric" | "imperial" | undefined = units;
      return { c, d, u: u ?? null };
    },
  });
  const h = await harness({ name: "wx", version: "1.0.0", tools: [weather] });
  try {
    assert.deepEqual(h.manifest.hookMatchers, { pre_tool_call_can_provide_result: ["wx__forecast"] });
    assert.deepEqual(await h.preToolCallCanProvideResult({ name: "wx__forecast", args: { city: "Oslo" } }), { content: '{"c":"Oslo","d":1,"u":null}' });
    assert.deepEqual(await h.preToolCallCanProvideResult({ name: "wx__forecast", args: { city: "Oslo", days: 9 } }), {
      content: '{"error":"tool wx__forecast: arguments: args.days: must be <= 7, got 9"}',
      isError: true,
    });
    assert.deepEqual(await h.preToolCallCanProvideResult({ name: "wx__forecast", args: { city: "Oslo", zip: 1 } }), {
      content: JSON.stringify({ error: 'tool wx__forecast: arguments: args: unexpected property "zip"; allowed properties are "city", "days", "units"' }),
      isError: true,
    });
  } finally {
    h.close();
  }
});

test("README: config refused with the key named", async () => {
  const p: Plugin<{ tools: string[]; ttl: string }> = {
    name: "tscache",
    config: s.object({ tools: s.array(s.string()), ttl: s.string().default("30s") }),
    configure(config) {
      if (config.tools.length === 0) throw new Error('tools: list the tools to cache, such as tools = ["read_file"]');
    },
  };
  await assert.rejects(harness(p, { config: { tools: ["a"], ttl: 30 } }), /config.ttl: must be a string, got number 30/);
  await assert.rejects(harness(p, { config: { tools: ["a"], tll: "1s" } }), /config: unexpected property "tll"; allowed properties are "tools", "ttl"/);
  await assert.rejects(harness(p, { config: { tools: [] } }), /tools: list the tools to cache/);
});

test("README: hooks only some configs need", async () => {
  // The plugin of "Hooks only some configs need", without its serve() call.
  let answers: Record<string, string> = {};
  const canned: Plugin<{ answers: Record<string, string> }> = {
    name: "canned",
    config: s.object({ answers: s.record(s.string()).default({}) }), // question -> answer
    configure(config) {
      answers = config.answers;
    },
    unserved() {
      // No canned answers: no model call waits for this plugin.
      return Object.keys(answers).length > 0 ? [] : ["pre_llm_call_can_provide_response"];
    },
    preLlmCallCanProvideResponse(req) {
      const text = answers[req.request.messages.at(-1)?.content ?? ""];
      if (text) return { model: req.request.model, message: { role: "assistant", content: text }, usage: { inputTokens: 0, outputTokens: 0 }, stopReason: "end_turn" };
    },
  };
  const ask = { request: { model: "m", messages: [{ role: "user" as const, content: "hours?" }] } };
  const off = await harness(canned);
  try {
    assert.deepEqual(off.manifest.hooks, ["pre_llm_call_can_provide_response"]);
    assert.deepEqual(off.unserved, ["pre_llm_call_can_provide_response"]);
    assert.equal(await off.preLlmCallCanProvideResponse(ask), null);
  } finally {
    off.close();
  }
  const on = await harness(canned, { config: { answers: { "hours?": "9 to 5" } } });
  try {
    assert.deepEqual(on.unserved, []);
    assert.equal((await on.preLlmCallCanProvideResponse(ask))?.message.content, "9 to 5");
  } finally {
    on.close();
  }
});
