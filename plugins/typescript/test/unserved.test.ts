// A plugin's `unserved`: the hooks it does not serve as configured, asked
// once after a successful configure and sent in Configure's answer; a
// plugin's mistake in it stops the plugin starting, as its own fault, with
// the mistake named.

import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as grpc from "@grpc/grpc-js";
import type { Plugin, Unserved } from "../src/index";
import { PluginFault, Runtime } from "../src/plugin";
import { describeAndConfigure } from "../src/server";
import { codec } from "../src/proto";
import { ConfigureRequestCodec } from "../src/wire";
import { harness } from "../src/testing";

const PROVIDE = "pre_llm_call_can_provide_response";

/** Provides a model answer only when its config turns it on; its handler answers whenever it is asked. */
function optional(events: string[]): Plugin<{ on?: unknown; bad?: unknown }> {
  let on = false;
  return {
    name: "optional",
    version: "1.0.0",
    configure(config) {
      events.push("configure");
      if (config.bad !== undefined) throw new Error("bad: not a key");
      on = config.on === true;
    },
    unserved() {
      events.push("unserved");
      return on ? [] : [PROVIDE];
    },
    preToolCall: (call) => ({ block: { message: `optional blocks ${call.name}` } }),
    preLlmCallCanProvideResponse() {
      events.push("asked");
      return { model: "m", message: { role: "assistant", content: "here" }, usage: { inputTokens: 0, outputTokens: 0 }, stopReason: "end_turn" };
    },
  };
}

/** A plugin serving pre_tool_call and PROVIDE whose unserved is fn. */
function answering(fn: () => unknown): Plugin {
  return {
    name: "p",
    unserved: fn as () => Unserved,
    preToolCall: () => undefined,
    preLlmCallCanProvideResponse: () => undefined,
  };
}

test("unserved: a hook the plugin does not serve as configured is not asked", async () => {
  for (const on of [false, true]) {
    const events: string[] = [];
    const h = await harness(optional(events), { config: { on } });
    try {
      assert.ok(h.manifest.hooks.includes(PROVIDE), "the manifest, read before the config, lists it");
      assert.deepEqual(h.unserved, on ? [] : [PROVIDE]);
      const got = await h.preLlmCallCanProvideResponse({});
      assert.equal(got?.message.content, on ? "here" : undefined, `on ${on}: ${JSON.stringify(got)}`);
      assert.deepEqual(await h.preToolCall({ name: "x" }), { block: { message: "optional blocks x" } });
    } finally {
      h.close();
    }
    assert.deepEqual(events, ["configure", "unserved", ...(on ? ["asked"] : [])]);
  }
});

test("unserved: asked once after configure, and not after a refusal", async () => {
  const events: string[] = [];
  await assert.rejects(harness(optional(events), { config: { bad: 1 } }), /^Error: bad: not a key$/);
  assert.deepEqual(events, ["configure"]);
});

test("unserved: Configure's answer carries them", async () => {
  const configure = (plugin: Plugin<any>, config: object) =>
    new Promise<{ err: grpc.ServiceError | null; unserved?: string[] }>((resolve) => {
      const req = ConfigureRequestCodec.encode({ configJson: Buffer.from(JSON.stringify(config), "utf8") });
      describeAndConfigure(new Runtime(plugin)).Configure({ request: req } as any, (err: any, res?: Buffer | null) => {
        const r = res ? codec<object, { unservedHooks?: string[] }>("hookhost.plugin.v1.ConfigureResponse").decode(res) : undefined;
        resolve({ err, unserved: r?.unservedHooks ?? [] });
      });
    });
  assert.deepEqual(await configure(optional([]), {}), { err: null, unserved: [PROVIDE] });
  assert.deepEqual(await configure(optional([]), { on: true }), { err: null, unserved: [] });
  const bad = await configure(answering(() => [3]), {});
  // A fault in the plugin, not a refusal of its config.
  assert.equal(bad.err?.code, grpc.status.INTERNAL);
  assert.equal(bad.err?.details, "unserved() must return hook names (strings), got number 3");
});

test("unserved: names in catalogue order, once, and only the manifest's", async () => {
  const rt = (fn: () => unknown) => new Runtime(answering(fn)).configure("{}");
  // post_llm_call is a hook, but the plugin has no method for it: not in
  // its manifest, so the host would ignore it; it is not sent.
  assert.deepEqual(await rt(() => ["pre_tool_call", "post_llm_call", PROVIDE, "pre_tool_call"]), [PROVIDE, "pre_tool_call"]);
  assert.deepEqual(await rt(async () => [PROVIDE]), [PROVIDE], "a promise of names");
  assert.deepEqual(await rt(() => undefined), []);
  assert.deepEqual(await rt(() => null), []);
  assert.deepEqual(await new Runtime({ name: "plain", preToolCall: () => undefined }).configure("{}"), [], "no unserved: every hook served");
});

test("unserved: a mistake stops the plugin as its own fault, saying so", async () => {
  const cases: Array<[() => unknown, string | RegExp]> = [
    [() => { throw new Error("lost the list"); }, "unserved() failed: Error: lost the list"],
    [() => (undefined as any).x, /^unserved\(\) failed: TypeError: Cannot read properties of undefined/],
    [async () => { throw new RangeError("late"); }, "unserved() failed: RangeError: late"],
    [() => { throw "text"; }, "unserved() failed: text"],
    [() => PROVIDE, "unserved() must return an array of hook names, got string"],
    [() => new Set([PROVIDE]), "unserved() must return an array of hook names, got object"],
    [() => [PROVIDE, 3], "unserved() must return hook names (strings), got number 3"],
    [() => [null], "unserved() must return hook names (strings), got null null"],
    [() => ["preToolCall"], /^unserved\(\) names "preToolCall", which is not a hook \(the hooks are on_session_start, /],
  ];
  for (const [fn, want] of cases) {
    await assert.rejects(new Runtime(answering(fn)).configure("{}"), (e: Error) => {
      if (typeof want === "string") assert.equal(e.message, want);
      else assert.match(e.message, want);
      assert.ok(e instanceof PluginFault, `${e.name}, want a PluginFault`);
      return true;
    });
    await assert.rejects(harness(answering(fn)), (e: Error) => (typeof want === "string" ? e.message === want : want.test(e.message)));
  }
  const listed = { name: "listed", unserved: ["pre_tool_call"], preToolCall: () => undefined } as unknown as Plugin;
  await assert.rejects(new Runtime(listed).configure("{}"), /unserved must be a method returning hook names, got array$/);
});
