// Unit tests of the SDK, run with node:test (npm test, and make test
// through plugins/typescript/sdk_test.go).

import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { spawnSync } from "node:child_process";
import { asJSON, checkGlob, errorResult, hostGone, matchGlob, mcpServerOf, negotiate, s, tool, type Infer, type Plugin } from "../src/index";
import { formatLine } from "../src/log";
import { handshakeCertField, serverCertificate } from "../src/cert";
import { codec, PROTO_DIR, PROTO_FILES } from "../src/proto";
import { HookStream, manifestMessage } from "../src/server";
import { Cancellation, DeadlineExceeded, HostCancelled, Runtime } from "../src/plugin";
import { encodePluginMessage, HostMessageCodec, ManifestCodec, PluginMessageCodec, rowOf } from "../src/wire";
import { harness, HookFailure } from "../src/testing";

const REPO_PROTO = path.join(__dirname, "..", "..", "..", "proto");

test("the shipped .proto files are the repository's, byte for byte", (t) => {
  if (!fs.existsSync(REPO_PROTO)) {
    t.skip(`${REPO_PROTO} does not exist: the package is installed outside the repository`);
    return;
  }
  const walk = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)).map((f) => path.join(e.name, f)) : e.name.endsWith(".proto") ? [e.name] : []));
  const repo = walk(REPO_PROTO).sort();
  assert.deepEqual(walk(PROTO_DIR).sort(), repo, "proto/ must hold exactly the repository's plugins/proto/**.proto; copy them again");
  for (const f of repo) {
    assert.equal(fs.readFileSync(path.join(PROTO_DIR, f), "utf8"), fs.readFileSync(path.join(REPO_PROTO, f), "utf8"), `proto/${f} differs from plugins/proto/${f}; copy it again`);
  }
  for (const f of PROTO_FILES) assert.ok(repo.includes(f), `${f} is loaded but not published`);
});

test("the app protocol is the highest both sides speak", () => {
  assert.equal(negotiate("1,2"), 2);
  assert.equal(negotiate("2,1"), 2);
  assert.equal(negotiate("1"), 1);
  assert.equal(negotiate("2"), 2);
  assert.equal(negotiate("1,2,3"), 2);
  assert.equal(negotiate(undefined), 1, "a host that offers no list gets go-plugin's lowest");
  assert.equal(negotiate("3,4"), null);
});

test("the server certificate is what go-plugin's AutoMTLS wants", async () => {
  for (let i = 0; i < 8; i++) {
    const c = await serverCertificate("t");
    const field = handshakeCertField(c.der);
    assert.ok(!field.endsWith("="), "the handshake's certificate must be unpadded base64");
    assert.match(field, /^[A-Za-z0-9+/]+$/);
    assert.deepEqual(Buffer.from(field, "base64"), c.der);
    const x = new crypto.X509Certificate(c.der);
    assert.ok(x.ca, "the certificate is the host's root: it must be a CA");
    assert.equal(x.checkHost("localhost"), "localhost");
    assert.match(x.subjectAltName ?? "", /DNS:localhost/);
    assert.ok(x.verify(x.publicKey), "self-signed");
    assert.ok(x.checkPrivateKey(crypto.createPrivateKey(c.keyPem)));
    assert.equal(new crypto.X509Certificate(c.certPem).fingerprint256, x.fingerprint256);
    assert.ok((x.keyUsage ?? []).includes("1.3.6.1.5.5.7.3.1"), "server auth");
  }
});

test("log lines are hclog JSON the host parses", () => {
  const line = formatLine("warn", "p", "hello", { tag: "x", "@level": "error", err: new Error("boom") });
  assert.ok(line.endsWith("\n"));
  const v = JSON.parse(line);
  assert.equal(v["@level"], "warn");
  assert.equal(v["@message"], "hello");
  assert.equal(v["@module"], "p");
  assert.equal(v.tag, "x");
  assert.equal(v.level, "error", "a field named like hclog's keys is kept without the @");
  assert.equal(v.err, "boom");
  // go-plugin parses 2006-01-02T15:04:05.000000Z07:00 exactly.
  assert.match(v["@timestamp"], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  const cyclic: { [k: string]: unknown } = {};
  cyclic.self = cyclic;
  assert.doesNotThrow(() => JSON.parse(formatLine("info", "p", "m", { cyclic })));
});

test("globs follow Go's path.Match", () => {
  assert.ok(matchGlob("conform__*", "conform__echo"));
  assert.ok(!matchGlob("conform__*", "other"));
  assert.ok(matchGlob("read_?ile", "read_file"));
  assert.ok(matchGlob("[a-c]at", "bat"));
  assert.ok(!matchGlob("[^a-c]at", "bat"));
  assert.ok(matchGlob("*", ""));
  assert.ok(!matchGlob("a*", "a/b"), "* does not cross /");
  assert.ok(matchGlob("a\\*", "a*"));
  assert.throws(() => checkGlob("[abc"));
  assert.throws(() => checkGlob("abc\\"));
});

test("AsJSON keeps JSON and quotes text as Go does", () => {
  assert.deepEqual(asJSON({ content: '{"a":1}' }), { content: '{"a":1}' });
  assert.deepEqual(asJSON({ content: " 12 " }), { content: " 12 " });
  assert.deepEqual(asJSON({ content: "sunny", isError: true }), { content: '"sunny"', isError: true });
  assert.deepEqual(asJSON({ content: "" }), { content: '""' });
  assert.equal(asJSON({ content: "a<b>&\u2028" }).content, '"a<b>&\\u2028"');
  // A lone surrogate is U+FFFD, as the host repairs it, not escape text.
  assert.equal(asJSON({ content: "bad \udcff byte" }).content, '"bad \ufffd byte"');
  assert.equal(asJSON({ content: '{"a":"\ud800"}' }).content, '{"a":"\ufffd"}');
});

test("host death: the named host's pid, else the first parent", () => {
  assert.equal(hostGone({}, 100, 100), false);
  assert.equal(hostGone({}, 100, 1), true, "re-parented: the host is gone");
  assert.equal(hostGone({ HOOKHOST_HOST_PID: String(process.pid) }, 7, 8), false, "a wrapper between host and plugin is no sign");
  assert.equal(hostGone({ HOOKHOST_HOST_PID: "7" }, 7, 1), true, "the host was the parent and the plugin was re-parented");
  assert.equal(hostGone({ HOOKHOST_HOST_PID: "2147483646" }, 5, 5), true, "no process has the host's pid");
  assert.equal(hostGone({ HOOKHOST_HOST_PID: "junk" }, 5, 5), false);
});

// --- schemas and typed tools ------------------------------------------------------

const weatherArgs = s.object({
  city: s.string({ description: "city name" }),
  days: s.integer({ minimum: 1, maximum: 7 }).default(1),
  units: s.enum(["metric", "imperial"]).optional(),
  tags: s.array(s.string()).optional(),
  "content-type": s.string().optional(),
  nested: s.object({ n: s.number() }).optional(),
});

test("the schema builder's JSON Schema", () => {
  assert.deepEqual(weatherArgs.toJSONSchema(), {
    type: "object",
    properties: {
      city: { type: "string", description: "city name" },
      days: { type: "integer", minimum: 1, maximum: 7, default: 1 },
      units: { type: "string", enum: ["metric", "imperial"] },
      tags: { type: "array", items: { type: "string" } },
      "content-type": { type: "string" },
      nested: { type: "object", properties: { n: { type: "number" } }, required: ["n"], additionalProperties: false },
    },
    required: ["city"],
    additionalProperties: false,
  });
  assert.throws(() => s.integer({ minimum: 3, maximum: 1 }), /minimum 3 is greater than maximum 1/);
  assert.throws(() => s.integer({ minimum: 1 }).default(0), /default 0: default: must be >= 1/);
  assert.throws(() => s.enum(["a", "a"]), /twice/);
});

test("typed tools decode strictly and word problems as the Go SDK does", async () => {
  const calls: Infer<typeof weatherArgs>[] = [];
  const t = tool({
    name: "w__weather",
    description: "weather",
    args: weatherArgs,
    run(a) {
      calls.push(a);
      // The inferred type: days is a number (defaulted), units optional.
      const d: number = a.days;
      const u: "metric" | "imperial" | undefined = a.units;
      return { city: a.city, days: d, units: u ?? "metric" };
    },
  });
  const ctx = { hook: "pre_tool_call_can_provide_result" as const, deadline: undefined, signal: new AbortController().signal, log: (await import("../src/log")).log };
  assert.deepEqual(await t.call('{"city":"Oslo"}', ctx), { content: '{"city":"Oslo","days":1,"units":"metric"}' });
  assert.deepEqual(calls[0], { city: "Oslo", days: 1 });
  const bad = async (args: string) => JSON.parse((await t.call(args, ctx)).content).error as string;
  assert.equal(await bad('{"city":5}'), "tool w__weather: arguments: args.city: must be a string, got number 5");
  assert.equal(await bad("{}"), 'tool w__weather: arguments: args: missing required property "city"');
  assert.equal(
    await bad('{"city":"a","zip":1}'),
    'tool w__weather: arguments: args: unexpected property "zip"; allowed properties are "city", "days", "units", "tags", "content-type", "nested"',
  );
  assert.equal(await bad('{"city":"a","days":1.5}'), "tool w__weather: arguments: args.days: must be an integer, got number 1.5");
  assert.equal(await bad('{"city":"a","days":9}'), "tool w__weather: arguments: args.days: must be <= 7, got 9");
  assert.equal(await bad('{"city":"a","units":"kelvin"}'), 'tool w__weather: arguments: args.units: must be one of "metric", "imperial", got string "kelvin"');
  assert.equal(await bad('{"city":"a","tags":["x",2]}'), "tool w__weather: arguments: args.tags[1]: must be a string, got number 2");
  assert.equal(await bad('{"city":"a","content-type":null}'), 'tool w__weather: arguments: args["content-type"]: must be a string, got null');
  assert.equal(await bad('{"city":"a","nested":{}}'), 'tool w__weather: arguments: args.nested: missing required property "n"');
  assert.match(await bad("{"), /^tool w__weather: arguments: args: not valid JSON: /);
  assert.equal(await bad("[1]"), "tool w__weather: arguments: args: must be an object, got array");
  assert.equal(calls.length, 1, "run is never called with bad arguments");
  assert.equal((await t.call('{"city":"a","days":2.0}', ctx)).isError, undefined, "2.0 is an integer");

  const empty = tool({ name: "w__none", description: "", args: s.object({}), run: () => undefined });
  assert.deepEqual(await empty.call("", ctx), { content: "null" }, "empty arguments are {}, undefined is null");
  assert.deepEqual(await empty.call("null", ctx), { content: "null" });
  assert.equal(JSON.parse((await empty.call('{"x":1}', ctx)).content).error, 'tool w__none: arguments: args: unexpected property "x"; this tool takes no arguments, send {}');

  const failing = tool({ name: "w__f", description: "", args: s.object({}), run: async () => { throw new Error("backend down"); } });
  assert.deepEqual(await failing.call("{}", ctx), errorResult("backend down"));
  const big = tool({ name: "w__b", description: "", args: s.object({}), run: () => ({ n: 1n }) });
  const r = await big.call("{}", ctx);
  assert.equal(r.isError, true);
  assert.match(JSON.parse(r.content).error, /^tool w__b: its result cannot be encoded as JSON: /);
  const fn = tool({ name: "w__fn", description: "", args: s.object({}), run: () => () => 1 });
  assert.match(JSON.parse((await fn.call("{}", ctx)).content).error, /cannot be encoded as JSON/);
});

test("many problems are reported together, at most 20", async () => {
  const t = tool({ name: "w__many", description: "", args: s.object({ a: s.array(s.string()) }), run: () => 1 });
  const ctx = { hook: "pre_tool_call_can_provide_result" as const, deadline: undefined, signal: new AbortController().signal, log: (await import("../src/log")).log };
  const msg = JSON.parse((await t.call(JSON.stringify({ a: Array(50).fill(1) }), ctx)).content).error as string;
  assert.equal(msg.split("; ").length, 20);
});

test("the manifest declares the config schema's keys; none without schema or configure; nothing for configure alone", () => {
  const m = (p: Omit<Plugin<any>, "name">) => new Runtime({ name: "p", ...p }).manifest.config;
  const schema = s.object({ deny: s.array(s.string()), message: s.string().optional() });
  assert.deepEqual(m({ config: schema, configure: () => {} }), ["deny", "message"]);
  assert.deepEqual(m({ config: schema }), ["deny", "message"]);
  assert.deepEqual(m({}), []);
  assert.equal(m({ configure: () => {} }), undefined);
  assert.equal(m({ config: s.record(s.string()) }), undefined, "a record takes any key");
  // On the wire: present (even empty) is declared, absent is not.
  const wire = (p: Omit<Plugin<any>, "name">) => ManifestCodec.decode(manifestMessage(new Runtime({ name: "p", ...p }))).config;
  assert.deepEqual(wire({ config: schema })?.keys, ["deny", "message"]);
  const none = wire({});
  assert.ok(none !== null && none !== undefined, "an empty declaration is present on the wire");
  assert.deepEqual(none.keys ?? [], []);
  const undeclared = wire({ configure: () => {} });
  assert.ok(undeclared === null || undeclared === undefined, "no declaration is absent on the wire");
});

test("typed tools set the provide hook's matchers as sdk.NewTool does", () => {
  const t = (name: string) => tool({ name, description: "", args: s.object({}), run: () => 1 });
  const m = (p: Omit<Plugin, "name">) => new Runtime({ name: "p", ...p }).manifest;
  const only = m({ tools: [t("p__a"), t("p__b")] });
  assert.deepEqual(only.hooks, ["pre_tool_call_can_provide_result"]);
  assert.deepEqual(only.hookMatchers, { pre_tool_call_can_provide_result: ["p__a", "p__b"] });
  assert.deepEqual(only.tools.map((x) => x.name), ["p__a", "p__b"]);
  const own = () => null;
  assert.deepEqual(m({ tools: [t("p__a")], preToolCallCanProvideResult: own }).hookMatchers, {}, "its own provider is asked for every tool");
  assert.deepEqual(m({ tools: [t("p__a")], matchers: ["x_*"], preToolCallCanProvideResult: own }).hookMatchers, { pre_tool_call_can_provide_result: ["x_*", "p__a"] });
  assert.deepEqual(m({ tools: [t("p__a")], hookMatchers: { pre_tool_call_can_provide_result: ["p__*"] } }).hookMatchers, { pre_tool_call_can_provide_result: ["p__*"] });
  assert.deepEqual(m({ tools: [t("p__a")], hookMatchers: { pre_tool_call_can_provide_result: [] } }).hookMatchers, { pre_tool_call_can_provide_result: [] });
  assert.throws(() => m({ tools: [t("p__a"), t("p__a")] }), /declared twice/);
  assert.throws(() => m({ tools: [{ name: "bad name", description: "" }] }), /must match/);
  assert.throws(() => m({ hookMatchers: { post_tool_call: ["*"] } }), /does not serve/);
  assert.throws(() => m({ matchers: ["[x"] }), /not a valid glob/);
  assert.throws(() => m({ preToolcall: () => null } as never), /preToolcall is not a hook/);
  assert.throws(() => new Runtime({ name: "" }), /no name/);
});

// --- hooks through the wire -------------------------------------------------------

const everything: Plugin = {
  name: "every",
  version: "2.0.0",
  onSessionStart(e, ctx) {
    ctx.log.info("started", { session: e.sessionId });
  },
  preToolListFinalized: (r) => ({ tools: r.tools.slice(1) }),
  preApiRequestMutable: (r) => (r.request.temperature === 0.25 ? { temperature: 0, maxTokens: 7, messages: [{ role: "user", content: "hi", toolCalls: [] }] } : undefined),
  postLlmCallCanReissue: (c) => (c.response.message.content === "again" ? { patch: { model: "bigger" }, reason: "r" } : null),
  transformLlmOutput: async (o) => ({ text: o.text.toUpperCase() }),
  preToolCall(c) {
    if (c.name === "block") return { block: { message: "no" } };
    if (c.name === "ask") return { ask: { reason: "a person decides" } };
    if (c.name === "modify") return { modifiedArgs: { ...(c.args as object), seen: true } };
    if (c.name === "array") return { modifiedArgs: [1] as never };
    if (c.name === "throw") throw new Error("guard failed");
    if (c.name === "bug") return (undefined as unknown as { x: () => null }).x();
    if (c.name === "shape") return "yes" as never;
  },
  async preToolCallCanProvideResult(c, ctx) {
    if (c.name === "slow") {
      await new Promise((r) => setTimeout(r, 10_000).unref());
      return { content: "late" };
    }
    if (c.name === "cancellable") {
      await new Promise<void>((r) => ctx.signal.addEventListener("abort", () => r()));
      throw new Error("aborted");
    }
    if (c.name === "none" || c.name === "block") return null;
    return { content: JSON.stringify({ args: c.args, deadline: ctx.deadline !== undefined }) };
  },
  transformToolResult: (e) => ({ content: JSON.stringify({ result: e.result.content, status: e.status, args: e.arguments }) }),
};

test("every hook through the encode/decode path", async () => {
  const h = await harness(everything);
  try {
    assert.deepEqual(h.manifest.hooks, [
      "on_session_start", "pre_tool_list_finalized", "pre_api_request_mutable", "post_llm_call_can_reissue", "transform_llm_output",
      "pre_tool_call", "pre_tool_call_can_provide_result", "transform_tool_result",
    ]);
    assert.equal(h.manifest.version, "2.0.0");
    await h.onSessionStart({ sessionId: "s1" });
    assert.deepEqual(h.logged("info").map((l) => [l.message, l.fields.session]), [["started", "s1"]]);
    await h.postToolCall({ name: "x" }); // not served: no opinion, no failure
    const tools = [{ name: "a", description: "A", inputSchema: { type: "object" } }, { name: "b", description: "B" }];
    assert.deepEqual(await h.preToolListFinalized({ tools }), { tools: [{ name: "b", description: "B" }] });
    assert.deepEqual(await h.preApiRequestMutable({ request: { model: "m", messages: [], temperature: 0.25 } }), {
      temperature: 0, maxTokens: 7, messages: [{ role: "user", content: "hi" }],
    });
    assert.equal(await h.preApiRequestMutable({ request: { model: "m", messages: [] } }), null, "undefined is no opinion");
    assert.deepEqual(await h.postLlmCallCanReissue({ response: { model: "m", message: { role: "assistant", content: "again" }, usage: { inputTokens: 1, outputTokens: 1 }, stopReason: "end_turn" } }), {
      patch: { model: "bigger" }, reason: "r",
    });
    assert.equal(await h.postLlmCallCanReissue({}), null);
    assert.deepEqual(await h.transformLlmOutput({ text: "abc" }), { text: "ABC" });
    assert.deepEqual(await h.preToolCall({ name: "block" }), { block: { message: "no" } });
    assert.deepEqual(await h.preToolCall({ name: "modify", args: { a: 1 } }), { modifiedArgs: { a: 1, seen: true } });
    assert.equal(await h.preToolCall({ name: "other" }), null);
    assert.deepEqual(JSON.parse((await h.preToolCallCanProvideResult({ name: "t", arguments: '{"q":"x"}' }))!.content), { args: { q: "x" }, deadline: true });
    await assert.rejects(h.preToolCall({ name: "throw" }), (e: HookFailure) => e.kind === "ERROR" && e.message === "ERROR: guard failed");
    await assert.rejects(h.preToolCall({ name: "bug" }), (e: HookFailure) => e.kind === "PANIC" && /panic in pre_tool_call handler: TypeError/.test(e.message));
    await assert.rejects(h.preToolCall({ name: "shape" }), (e: HookFailure) => e.kind === "ERROR" && /pre_tool_call answered with the string "yes"/.test(e.message));
  } finally {
    h.close();
  }
});

test("a deadline fails the call without holding others up", async () => {
  const h = await harness(everything);
  try {
    const start = Date.now();
    const slow = h.preToolCallCanProvideResult({ name: "slow" }, { timeoutMs: 100 });
    const fast = await h.preToolCallCanProvideResult({ name: "fast" });
    assert.ok(Date.now() - start < 100, "a slow call held up another");
    assert.ok(fast);
    await assert.rejects(slow, (e: HookFailure) => e.kind === "DEADLINE_EXCEEDED");
    assert.ok(Date.now() - start < 1000);
  } finally {
    h.close();
  }
});

test("a cancelled call's handler sees its signal aborted and nothing is answered", async () => {
  let aborted = false;
  const h = await harness({
    name: "c",
    async preToolCallCanProvideResult(_c, ctx) {
      await new Promise<void>((r) => ctx.signal.addEventListener("abort", () => r()));
      aborted = ctx.signal.aborted;
      return { content: "1" };
    },
  });
  try {
    const ac = new AbortController();
    const p = h.preToolCallCanProvideResult({ name: "x" }, { signal: ac.signal });
    setTimeout(() => ac.abort(), 20);
    await assert.rejects(p, (e: HookFailure) => e.kind === "CANCELLED");
    await new Promise((r) => setImmediate(r));
    assert.ok(aborted);
  } finally {
    h.close();
  }
});

test("stretches follow RunStretch", async () => {
  const h = await harness(everything);
  try {
    const three = ["pre_tool_call", "pre_tool_call_can_provide_result", "transform_tool_result"] as const;
    // The later stages see the modified arguments; transform sees the
    // provided result as JSON and provided_by:<name>.
    const r = await h.stretch([...three], { name: "modify", arguments: '{"a":1}' });
    assert.equal(r.length, 3);
    assert.deepEqual(r.map((x) => x.last), [false, false, true]);
    assert.deepEqual((r[0] as { answer: unknown }).answer, { modifiedArgs: { a: 1, seen: true } });
    const provided = (r[1] as { answer: { content: string } }).answer.content;
    assert.deepEqual(JSON.parse(provided).args, { a: 1, seen: true });
    assert.deepEqual(JSON.parse((r[2] as { answer: { content: string } }).answer.content), { result: provided, status: "provided_by:every", args: '{"a":1,"seen":true}' });

    // A block ends it.
    const b = await h.stretch([...three], { name: "block" });
    assert.deepEqual(b, [{ answer: { block: { message: "no" } }, last: true }]);
    // So does an ask: nothing is provided before a person approves.
    const a = await h.stretch([...three], { name: "ask" });
    assert.deepEqual(a, [{ answer: { ask: { reason: "a person decides" } }, last: true }]);
    assert.deepEqual(await h.preToolCall({ name: "ask" }), { ask: { reason: "a person decides" } });
    // A provide that gave nothing ends it.
    const n = await h.stretch(["pre_tool_call_can_provide_result", "transform_tool_result"], { name: "none" });
    assert.deepEqual(n, [{ answer: null, last: true }]);
    // A failure ends it.
    const f = await h.stretch([...three], { name: "throw" });
    assert.deepEqual(f, [{ failure: { kind: "ERROR", message: "guard failed" }, last: true }]);
    // A decision that breaks the rules ends it, and the next stage says so.
    const array = await h.stretch([...three], { name: "array" });
    assert.equal(array.length, 2);
    assert.deepEqual(array[0], { answer: { modifiedArgs: [1] }, last: false });
    assert.deepEqual(array[1], { failure: { kind: "ERROR", message: "the plugin ended the stretch before stage 1" }, last: true });
    // A stage's deadline is its own.
    const slow = await h.stretch(["pre_tool_call", "pre_tool_call_can_provide_result"], { name: "slow" }, { timeoutMs: 50 });
    assert.equal(slow.length, 2);
    assert.deepEqual(slow[0], { answer: null, last: false });
    assert.equal((slow[1] as { failure: { kind: string } }).failure.kind, "DEADLINE_EXCEEDED");
    // Not a legal stretch.
    const bad = await h.stretch(["pre_tool_call", "transform_tool_result"], { name: "x" });
    assert.deepEqual(bad, [{ failure: { kind: "ERROR", message: "not a legal stretch: stages [pre_tool_call, transform_tool_result]" }, last: true }]);
  } finally {
    h.close();
  }
});

test("a cancelled stretch starts no provide stage", async () => {
  let provides = 0;
  const h = await harness({
    name: "c",
    async preToolCall(_c, ctx) {
      await new Promise<void>((r) => ctx.signal.addEventListener("abort", () => r()));
    },
    preToolCallCanProvideResult() {
      provides++;
      return { content: "1" };
    },
  });
  try {
    const ac = new AbortController();
    const p = h.stretch(["pre_tool_call", "pre_tool_call_can_provide_result"], { name: "x" }, { signal: ac.signal });
    setTimeout(() => ac.abort(), 20);
    await p;
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(provides, 0);
  } finally {
    h.close();
  }
});

test("what a hostile host sends gets a clear failure", async () => {
  const rt = new Runtime(everything);
  const out: { id?: string; stage?: number; failure?: { kind?: string; message?: string } | null; last?: boolean }[] = [];
  let resolve: () => void = () => {};
  const stream = new HookStream(rt, (b) => {
    out.push(PluginMessageCodec.decode(b));
    resolve();
  });
  const next = () => new Promise<void>((r) => (resolve = r));
  const send = async (m: object) => {
    const n = next();
    stream.receive(HostMessageCodec.encode(m));
    await n;
    return out[out.length - 1];
  };
  assert.equal((await send({ call: { id: "1", stages: [] } })).failure?.kind, "BAD_REQUEST");
  const unknown = await send({ call: { id: "2", stages: [{ hook: "pre_everything", timeoutNs: "1000000" }] } });
  assert.equal(unknown.failure?.kind, "UNKNOWN_HOOK");
  assert.match(unknown.failure?.message ?? "", /pre_everything/);
  const garbage = await send({ call: { id: "3", stages: [{ hook: "pre_tool_call", timeoutNs: "1000000000" }], payload: Buffer.from([0xff, 0xff, 0xff]) } });
  assert.equal(garbage.failure?.kind, "BAD_REQUEST");
  assert.match(garbage.failure?.message ?? "", /undecodable pre_tool_call request/);
  const badStretch = await send({ call: { id: "4", stages: [{ hook: "pre_tool_call" }, { hook: "nope" }] } });
  assert.equal(badStretch.failure?.kind, "UNKNOWN_HOOK");
  // A duplicate id while the first is in flight.
  const slowPayload = rowOf("pre_tool_call_can_provide_result")!.request.encode({ name: "slow" });
  stream.receive(HostMessageCodec.encode({ call: { id: "9", stages: [{ hook: "pre_tool_call_can_provide_result", timeoutNs: "10000000000" }], payload: slowPayload } }));
  const dup = await send({ call: { id: "9", stages: [{ hook: "pre_tool_call_can_provide_result", timeoutNs: "1000" }], payload: slowPayload } });
  assert.equal(dup.failure?.kind, "BAD_REQUEST");
  assert.match(dup.failure?.message ?? "", /already in flight/);
  assert.equal(stream.receive(Buffer.from([0x0a, 0xff])), false, "bytes that are not a HostMessage end the stream");
  stream.close();
  assert.ok(out.every((m) => m.last));
});

test("config: decoded by its schema, a throw is the operator's reason", async () => {
  const plugin: Plugin<{ ttl: string; max: number }> = {
    name: "cfg",
    config: s.object({ ttl: s.string().default("30s"), max: s.integer({ minimum: 1 }).default(10) }),
    configure(c) {
      if (!/^\d+s$/.test(c.ttl)) throw new Error(`ttl: ${JSON.stringify(c.ttl)} is not a duration`);
    },
  };
  (await harness(plugin)).close();
  await assert.rejects(harness(plugin, { config: { ttl: 5 } }), /^Error: config.ttl: must be a string, got number 5$/);
  await assert.rejects(harness(plugin, { config: { tll: "5s" } }), /config: unexpected property "tll"; allowed properties are "ttl", "max"/);
  await assert.rejects(harness(plugin, { config: { ttl: "soon" } }), /ttl: "soon" is not a duration/);
  let got: unknown;
  (await harness({ name: "raw", configure: (c) => { got = c; } }, { config: { any: [1] } })).close();
  assert.deepEqual(got, { any: [1] });
});

test("started by hand, a plugin says what it is and exits 1", () => {
  const r = spawnSync(process.execPath, ["-e", `require(${JSON.stringify(path.join(__dirname, "..", "src", "index.js"))}).serve({name: "x"})`], {
    env: { PATH: process.env.PATH ?? "" },
    encoding: "utf8",
  });
  assert.equal(r.status, 1);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /This is a hookhost plugin/);
  assert.match(r.stderr, /HOOKHOST_PLUGIN/);
});

test("with the cookie, prints go to stderr as log lines and stdout stays clean", () => {
  const index = JSON.stringify(path.join(__dirname, "..", "src", "index.js"));
  const r = spawnSync(process.execPath, ["-e", `const p = require(${index}); console.log("hello", 1); process.stdout.write("raw\\n"); p.log.warn("w", {k: 2}); process.exit(0)`], {
    env: { HOOKHOST_PLUGIN: "d3c1b0a2-hookhost-plugin-v1" },
    encoding: "utf8",
  });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, "");
  const lines = r.stderr.trim().split("\n");
  assert.deepEqual(JSON.parse(lines[0])["@message"], "hello 1");
  assert.deepEqual(JSON.parse(lines[0])["@level"], "info");
  assert.equal(lines[1], "raw");
  assert.deepEqual([JSON.parse(lines[2])["@level"], JSON.parse(lines[2]).k], ["warn", 2]);
});

test("handlers that ignore their deadline stay counted, and the count is bounded", async () => {
  let release: () => void = () => {};
  const released = new Promise<void>((r) => (release = r));
  const rt = new Runtime({ name: "stuck", preToolCall: () => released.then(() => undefined) });
  const out: { id?: string; failure?: { kind?: string; message?: string } | null }[] = [];
  const stream = new HookStream(rt, (b) => out.push(PluginMessageCodec.decode(b)));
  stream.maxInFlight = 2;
  const call = (id: string) =>
    stream.receive(HostMessageCodec.encode({ call: { id, stages: [{ hook: "pre_tool_call", timeoutNs: "10000000" }], payload: rowOf("pre_tool_call")!.request.encode({ name: "t" }) } }));
  call("1");
  call("2");
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(out.map((m) => [m.id, m.failure?.kind]), [["1", "DEADLINE_EXCEEDED"], ["2", "DEADLINE_EXCEEDED"]]);
  call("3");
  assert.equal(out[2].id, "3");
  assert.equal(out[2].failure?.kind, "ERROR");
  assert.match(out[2].failure?.message ?? "", /already running 2 hook calls/);
  release();
  await new Promise((r) => setTimeout(r, 10));
  call("4");
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(out[3].id, "4");
  assert.equal(out[3].failure ?? null, null, "once the handlers returned, calls are taken again");
  stream.close();
});

test("a lone surrogate in an answer reaches the host as U+FFFD, not as bytes that are not UTF-8", async () => {
  const h = await harness({ name: "u", transformLlmOutput: () => ({ text: "a\ud800b\udc00c\ud83d\ude00" }) });
  try {
    assert.deepEqual(await h.transformLlmOutput({ text: "x" }), { text: "a\ufffdb\ufffdc\ud83d\ude00" });
  } finally {
    h.close();
  }
});

test("a deadline past 2^31 ms (24.8 days) is honoured, not taken as passed", async () => {
  const h = await harness({ name: "p", preToolCall: async () => { await new Promise((r) => setTimeout(r, 20)); return { block: { message: "no" } }; } });
  try {
    assert.deepEqual(await h.preToolCall({ name: "x" }, { timeoutMs: 30 * 24 * 3600 * 1000 }), { block: { message: "no" } });
  } finally {
    h.close();
  }
});

test("typed tools: an overflowing number is refused; a bug in run is named and logged", async () => {
  let ran = false;
  const num = tool({ name: "p__n", description: "", args: s.object({ x: s.number() }), run: () => { ran = true; return 1; } });
  const bug = tool({ name: "p__bug", description: "", args: s.object({}), run: () => (undefined as unknown as { f: string }).f });
  const h = await harness({ name: "p", tools: [num, bug] });
  try {
    const r = await h.preToolCallCanProvideResult({ name: "p__n", arguments: '{"x":1e400}' });
    assert.equal(ran, false);
    assert.match(JSON.parse(r!.content).error, /^tool p__n: arguments: args.x: the number is out of range/);
    const b = await h.preToolCallCanProvideResult({ name: "p__bug", arguments: "{}" });
    assert.equal(b?.isError, true);
    assert.match(JSON.parse(b!.content).error, /^tool p__bug failed: it panicked: TypeError: /);
    assert.equal(h.logged("error").length, 1);
    assert.equal(h.logged("error")[0].fields.tool, "p__bug");
  } finally {
    h.close();
  }
});

test("a handler wrong on every call does not flood the log at ERROR", async () => {
  const h = await harness({ name: "m", transformLlmOutput: () => "text" as never });
  try {
    for (let i = 0; i < 3; i++) await assert.rejects(h.transformLlmOutput({ text: "a" }), /want a TextReplacement/);
    assert.equal(h.logged("error").length, 0);
    assert.equal(h.logged("debug").length, 3);
  } finally {
    h.close();
  }
});

test("the harness holds answers, matchers and the manifest to the host's rules", async () => {
  let asked = 0;
  const h = await harness({
    name: "p",
    matchers: ["read_*"],
    hookMatchers: { transform_tool_result: [] },
    preToolCall: (c) => {
      asked++;
      return c.name === "read_both" ? { block: { message: "no" }, modifiedArgs: { a: 1 } } : undefined;
    },
    preApiRequestMutable: () => ({ temperature: 5 }),
    transformToolResult: () => ({ content: "x".repeat(10) }),
  }, { maxResultSize: 5 });
  try {
    assert.equal(await h.preToolCall({ name: "write_file" }), null);
    assert.equal(asked, 0, "the host never asks about a tool the matchers exclude");
    await assert.rejects(h.preToolCall({ name: "read_both" }), (e: HookFailure) => e.kind === "MALFORMED" && /more than one of block, ask and modified_args set/.test(e.message));
    await assert.rejects(h.preApiRequestMutable({}), /temperature 5 is outside \[0, 2\]/);
    await assert.rejects(h.transformToolResult({ name: "any" }), /carries 10 bytes, over max_result_size \(5 bytes\)/);
  } finally {
    h.close();
  }
  const t = tool({ name: "forecast", description: "", args: s.object({}), run: () => 1 });
  await assert.rejects(harness({ name: "wx", tools: [t] }), /outside the plugin's namespace "wx__".*allow_tool_override/);
  (await harness({ name: "wx", tools: [t] }, { allowToolOverride: true })).close();
});

test("a misspelt hook on a class instance stops the plugin too", () => {
  class Guard {
    name = "guard";
    preToolcall() {
      return null;
    }
  }
  assert.throws(() => new Runtime(new Guard() as never), /preToolcall is not a hook/);
  class Good {
    name = "good";
    preToolCall() {
      return null;
    }
  }
  assert.deepEqual(new Runtime(new Good()).manifest.hooks, ["pre_tool_call"]);
});

test("globs refuse what Go's path.Match refuses", () => {
  for (const p of ["[-]", "[]a]", "a[-b]", "[a-]", "[^]", "[", "a\\"]) assert.throws(() => checkGlob(p), /syntax error in pattern/, p);
  for (const p of ["a*", "[a-c]x", "[\\]]", "\\*"]) assert.doesNotThrow(() => checkGlob(p), p);
  assert.ok(matchGlob("[\\]]", "]"));
  assert.ok(matchGlob("*_file", "read_file"));
  assert.ok(!matchGlob("*_file", "a/read_file"));
  assert.ok(matchGlob("a*b*c", "axxbyyc"));
});

test("hook options reach the manifest; windows, stops and openings travel", async () => {
  const p: Plugin = {
    name: "w",
    hookOptions: {
      transform_llm_output: { windowBytes: 4096, overlapBytes: 256 },
      post_llm_call_can_reissue: { decideAfterBytes: 512 },
    },
    transformLlmOutput(out) {
      if (out.text.includes("FORBIDDEN")) return { text: "", stop: { message: "withheld" } };
      if (out.windowed && out.offset === 10 && out.overlap === 3 && out.last) return { text: out.text.toUpperCase() };
      return null;
    },
    postLlmCallCanReissue(call) {
      return call.partial ? { patch: {}, reason: `opening of ${call.response.message.content?.length} bytes` } : null;
    },
  };
  const pb = ManifestCodec.decode(manifestMessage(new Runtime(p)));
  assert.deepEqual(
    (pb.hookOptions ?? []).map((o) => [o.hook, Number(o.windowBytes), Number(o.overlapBytes), Number(o.decideAfterBytes)]).sort(),
    [["post_llm_call_can_reissue", 0, 0, 512], ["transform_llm_output", 4096, 256, 0]],
  );
  assert.throws(() => new Runtime({ name: "w", hookOptions: { transform_llm_output: { windowBytes: 64 } } }).manifest, /does not serve/);
  const h = await harness(p);
  try {
    assert.deepEqual(await h.call("transform_llm_output", { sessionId: "s", text: "abcdef", windowed: true, offset: 10, overlap: 3, last: true }), { text: "ABCDEF" });
    assert.deepEqual(await h.call("transform_llm_output", { sessionId: "s", text: "a FORBIDDEN word", windowed: true }), { text: "", stop: { message: "withheld" } });
    assert.equal(await h.call("transform_llm_output", { sessionId: "s", text: "abcdef" }), null);
    const r = (await h.call("post_llm_call_can_reissue", {
      sessionId: "s", partial: true,
      response: { model: "m", message: { role: "assistant", content: "x".repeat(512) }, usage: { inputTokens: 0, outputTokens: 0 }, stopReason: "" },
    })) as { reason: string };
    assert.equal(r.reason, "opening of 512 bytes");
  } finally {
    h.close();
  }
});

test("tool hooks get the call's origin, through a stretch too", async () => {
  const seen: string[] = [];
  const h = await harness({
    name: "origins",
    preToolCall(c) {
      seen.push(`pre ${c.origin}`);
    },
    preToolCallCanProvideResult(c) {
      seen.push(`provide ${c.origin}`);
      return { content: "1" };
    },
    transformToolResult(o) {
      seen.push(`transform ${o.origin} ${mcpServerOf(o.origin)}`);
    },
    postToolCall(o) {
      seen.push(`post ${o.origin}`);
    },
  });
  try {
    await h.preToolCall({ name: "read_file", origin: "client" });
    await h.postToolCall({ name: "kora__burn", origin: "plugin" });
    await h.stretch(["pre_tool_call", "pre_tool_call_can_provide_result", "transform_tool_result"], { name: "fs__read", origin: "mcp:fs" });
    assert.deepEqual(seen, ["pre client", "post plugin", "pre mcp:fs", "provide mcp:fs", "transform mcp:fs fs"]);
    assert.equal(mcpServerOf("native"), undefined);
  } finally {
    h.close();
  }
});

test("a provided model response crosses the wire and is held to the host's rules", async () => {
  const h = await harness({
    name: "p",
    preLlmCallCanProvideResponse(req) {
      const last = req.request.messages[req.request.messages.length - 1]?.content ?? "";
      if (last === "text") return { model: "", message: { role: "assistant", content: "from the plugin" }, usage: { inputTokens: 1, outputTokens: 2 }, stopReason: "" };
      if (last === "call") {
        return { model: "own", message: { role: "assistant", toolCalls: [{ id: "c1", name: "notify", arguments: JSON.stringify({ a: 1 }) }] }, usage: { inputTokens: 0, outputTokens: 0 }, stopReason: "tool_use" };
      }
      if (last === "user role") return { model: "", message: { role: "user", content: "x" }, usage: { inputTokens: 0, outputTokens: 0 }, stopReason: "" };
      if (last === "bad args") return { model: "", message: { role: "assistant", toolCalls: [{ id: "c1", name: "notify", arguments: "[1]" }] }, usage: { inputTokens: 0, outputTokens: 0 }, stopReason: "" };
      return null;
    },
  });
  try {
    const ask = (content: string) =>
      h.preLlmCallCanProvideResponse({ sessionId: "s", iteration: 1, route: "gateway", request: { model: "m", messages: [{ role: "user", content }] } });
    const text = await ask("text");
    assert.equal(text?.message.content, "from the plugin");
    assert.deepEqual(text?.usage, { inputTokens: 1, outputTokens: 2 });
    const call = await ask("call");
    assert.equal(call?.model, "own");
    assert.equal(call?.stopReason, "tool_use");
    assert.deepEqual(call?.message.toolCalls?.map((c) => [c.id, c.name, JSON.parse(c.arguments)]), [["c1", "notify", { a: 1 }]]);
    assert.equal(await ask("nothing"), null);
    await assert.rejects(ask("user role"), (e: HookFailure) => e.kind === "MALFORMED" && e.message.includes('role "user"'));
    await assert.rejects(ask("bad args"), (e: HookFailure) => e.kind === "MALFORMED" && e.message.includes("not a JSON object"));
  } finally {
    h.close();
  }
});

test("on_user_message and post_tool_call_can_add_context answer in shape", async () => {
  const h = await harness({
    name: "ctx",
    onUserMessage(m) {
      if (m.text === "forbidden") return { block: { message: "not here" } };
      return { additionalContext: `context for ${m.text}` };
    },
    postToolCallCanAddContext(e) {
      return { additionalContext: `seen ${e.name}` };
    },
  });
  try {
    assert.deepEqual(await h.onUserMessage({ text: "forbidden", index: 2 }), { block: { message: "not here" } });
    assert.deepEqual(await h.onUserMessage({ text: "hello" }), { additionalContext: "context for hello" });
    assert.deepEqual(await h.postToolCallCanAddContext({ name: "now" }), { additionalContext: "seen now" });
  } finally {
    h.close();
  }
});

test("a Cancellation aborts once, with its first reason, calling each listener once in order", () => {
  const c = new Cancellation();
  const seen: string[] = [];
  const removed = () => seen.push("removed");
  c.addEventListener("abort", () => seen.push("a"), { once: true });
  c.addEventListener("abort", removed);
  c.addEventListener("abort", () => seen.push("b"));
  c.removeEventListener("abort", removed);
  assert.equal(c.aborted, false);
  assert.equal(c.reason, undefined);
  const first = new Error("first");
  c.abort(first);
  c.abort(new Error("second"));
  c.addEventListener("abort", () => seen.push("late"));
  assert.equal(c.aborted, true);
  assert.equal(c.reason, first);
  assert.deepEqual(seen, ["a", "b"]);
});

test("a handler that first reads ctx.signal after its deadline finds it aborted by the deadline", async () => {
  let read: { aborted: boolean; reason: unknown } | undefined;
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const h = await harness({
    name: "p",
    async preToolCall(_c, ctx) {
      await new Promise((r) => setTimeout(r, 100));
      read = { aborted: ctx.signal.aborted, reason: ctx.signal.reason };
      done();
      return null;
    },
  });
  try {
    await assert.rejects(h.call("pre_tool_call", { name: "x" }, { timeoutMs: 10 }), (e: HookFailure) => e.kind === "DEADLINE_EXCEEDED");
    await finished;
    assert.equal(read!.aborted, true);
    assert.ok(read!.reason instanceof DeadlineExceeded, `reason: ${String(read!.reason)}`);
  } finally {
    h.close();
  }
});

test("a handler that first reads ctx.signal after the host cancelled finds it aborted by the host", async () => {
  let read: { aborted: boolean; reason: unknown } | undefined;
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const h = await harness({
    name: "p",
    async preToolCall(_c, ctx) {
      started();
      await new Promise((r) => setTimeout(r, 100));
      read = { aborted: ctx.signal.aborted, reason: ctx.signal.reason };
      done();
      return null;
    },
  });
  try {
    const ac = new AbortController();
    const p = h.call("pre_tool_call", { name: "x" }, { signal: ac.signal });
    p.catch(() => {});
    await running;
    ac.abort();
    await finished;
    assert.equal(read!.aborted, true);
    assert.ok(read!.reason instanceof HostCancelled, `reason: ${String(read!.reason)}`);
  } finally {
    h.close();
  }
});

test("a handler's ctx.signal is one AbortSignal for the whole call, and ctx.signal may be replaced", async () => {
  const h = await harness({
    name: "p",
    preToolCall(_c, ctx) {
      assert.ok(ctx.signal instanceof AbortSignal);
      assert.equal(ctx.signal, ctx.signal);
      assert.equal(ctx.signal.aborted, false);
      const mine = new AbortController().signal;
      ctx.signal = mine;
      assert.equal(ctx.signal, mine);
      return { block: { message: "seen" } };
    },
  });
  try {
    assert.deepEqual(await h.preToolCall({ name: "x" }), { block: { message: "seen" } });
  } finally {
    h.close();
  }
});

test("encoding repairs lone surrogates in arrays, nested messages and objects of no prototype, and changes nothing else", () => {
  const m = codec<object, { name?: string; hooks?: string[]; tools?: { name?: string; description?: string }[] }>("hookhost.plugin.v1.Manifest");
  const tool = Object.assign(Object.create(null) as object, { name: "t", description: "d\ud800" });
  const sparse: string[] = ["a\udc00"];
  sparse[2] = "c";
  assert.deepEqual(m.decode(m.encode({ name: "n\ud800", hooks: ["h\udc00", "ok\ud83d\ude00"], tools: [tool, { name: "u", description: "fine" }] })), {
    name: "n\ufffd",
    hooks: ["h\ufffd", "ok\ud83d\ude00"],
    tools: [{ name: "t", description: "d\ufffd" }, { name: "u", description: "fine" }],
  });
  const clean = { name: "n", hooks: ["a", "b"], tools: [{ name: "t", description: "d" }] };
  const before = JSON.stringify(clean);
  assert.deepEqual(m.decode(m.encode(clean)), clean);
  assert.equal(JSON.stringify(clean), before, "encoding leaves its input as it was");
  // A hole is encoded as it always was: the text "undefined".
  assert.deepEqual(m.decode(m.encode({ hooks: sparse })), { hooks: ["a\ufffd", "undefined", "c"] });
});

test("encodePluginMessage writes every PluginMessage byte for byte as the codec does", () => {
  const ids = ["0", "1", "127", "128", "300", "16383", "16384", "2097151", "999999999999999", "1000000000000000", "4294967296", "18446744073709551615"];
  const answers = [Buffer.alloc(0), Buffer.from("x"), Buffer.alloc(200, 7), new Uint8Array([1, 2, 3])];
  let cases = 0;
  for (const id of ids) {
    for (const stage of [0, 1, 127, 128, 4294967295]) {
      for (const answer of answers) {
        for (const last of [true, false]) {
          const m = { id, stage, answer, last };
          assert.deepEqual(encodePluginMessage(m), PluginMessageCodec.encode(m), JSON.stringify({ id, stage, answer: answer.length, last }));
          cases++;
        }
      }
    }
  }
  for (const m of [
    { id: "7", stage: 2, failure: { kind: "ERROR" as const, message: "no" }, last: true },
    { id: "7", stage: 0, last: true },
    { id: 7, stage: 0, answer: Buffer.from("a"), last: true },
    { id: "7", answer: Buffer.from("a") },
  ]) {
    assert.deepEqual(encodePluginMessage(m), PluginMessageCodec.encode(m), JSON.stringify(m));
    cases++;
  }
  assert.equal(cases, ids.length * 5 * answers.length * 2 + 4);
  const back = PluginMessageCodec.decode(encodePluginMessage({ id: "18446744073709551615", stage: 3, answer: Buffer.from("hi"), last: false }));
  assert.deepEqual(back, { id: "18446744073709551615", stage: 3, answer: Buffer.from("hi"), last: false });
});
