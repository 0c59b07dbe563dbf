// tscache's unit tests, through @hookhost/plugin/testing: the hooks are
// called through the same encoding and dispatch as under the host.

import { test } from "node:test";
import * as assert from "node:assert/strict";
import { harness } from "@hookhost/plugin/testing";
import { key, parseDuration, Store } from "../src/cache";
import { tscache } from "../src/plugin";

const config = { tools: ["read_*", "calculate"], ttl: "30s", max_entries: 2 };
const ok = { content: '{"value":42}' };

test("a repeated call is served from the cache", async () => {
  const h = await harness(tscache(), { config });
  try {
    assert.equal(await h.preToolCallCanProvideResult({ name: "calculate", arguments: '{"expression":"6*7"}' }), null, "an empty cache serves nothing");
    await h.postToolCall({ name: "calculate", arguments: '{"expression":"6*7"}', result: ok, status: "ok" });
    assert.deepEqual(await h.preToolCallCanProvideResult({ name: "calculate", arguments: '{ "expression" : "6*7" }' }), ok);
    assert.equal(await h.preToolCallCanProvideResult({ name: "calculate", arguments: '{"expression":"6*8"}' }), null);
  } finally {
    h.close();
  }
});

test("only configured tools and clean native results are cached", async () => {
  const h = await harness(tscache(), { config: { tools: ["read_*"] } });
  try {
    await h.postToolCall({ name: "now", arguments: "{}", result: ok, status: "ok" });
    await h.postToolCall({ name: "read_file", arguments: '{"path":"a"}', result: ok, status: "ok" });
    await h.postToolCall({ name: "read_file", arguments: '{"path":"b"}', result: ok, status: "error" });
    await h.postToolCall({ name: "read_file", arguments: '{"path":"c"}', result: { content: "{}", isError: true }, status: "ok" });
    await h.postToolCall({ name: "read_file", arguments: '{"path":"d"}', result: ok, status: "provided_by:other" });
    await h.postToolCall({ name: "read_file", arguments: '{"path":"e"}', result: ok, status: "blocked" });
    assert.equal(await h.preToolCallCanProvideResult({ name: "now", arguments: "{}" }), null);
    assert.deepEqual(await h.preToolCallCanProvideResult({ name: "read_file", arguments: '{"path":"a"}' }), ok);
    for (const p of ["b", "c", "d", "e"]) {
      assert.equal(await h.preToolCallCanProvideResult({ name: "read_file", arguments: `{"path":"${p}"}` }), null, p);
    }
  } finally {
    h.close();
  }
});

test("entries expire ttl after the tool ran, however often they are served", async () => {
  let now = 1_000_000;
  const h = await harness(tscache(() => now), { config: { tools: ["calculate"], ttl: "30s" } });
  try {
    await h.postToolCall({ name: "calculate", arguments: "{}", result: ok, status: "ok" });
    now += 20_000;
    assert.ok(await h.preToolCallCanProvideResult({ name: "calculate", arguments: "{}" }));
    await h.postToolCall({ name: "calculate", arguments: "{}", result: ok, status: "provided_by:tscache" });
    now += 15_000;
    assert.equal(await h.preToolCallCanProvideResult({ name: "calculate", arguments: "{}" }), null);
  } finally {
    h.close();
  }
});

test("a bad config is refused with the key named", async () => {
  await assert.rejects(harness(tscache(), { config: {} }), /config: missing required property "tools"/);
  await assert.rejects(harness(tscache(), { config: { tools: [] } }), /^Error: tools: list the read-only tools to cache/);
  await assert.rejects(harness(tscache(), { config: { tools: ["a"], ttl: "30" } }), /ttl: "30" is not a positive duration/);
  await assert.rejects(harness(tscache(), { config: { tools: ["a"], ttl: 30 } }), /config.ttl: must be a string, got number 30/);
  await assert.rejects(harness(tscache(), { config: { tools: ["[a"] } }), /tools\[0\]: "\[a" is not a tool name or glob/);
  await assert.rejects(harness(tscache(), { config: { tools: ["a"], max_entries: 0 } }), /config.max_entries: must be >= 1, got 0/);
  await assert.rejects(harness(tscache(), { config: { tools: ["a"], tll: "1s" } }), /unexpected property "tll"/);
});

test("keys ignore key order and space, and keep numbers as written", () => {
  assert.equal(key("t", '{"b":2,"a":[1, 2]}'), key("t", '{ "a":[1,2], "b":2 }'));
  assert.notEqual(key("t", '{"id":12345678901234567890}'), key("t", '{"id":12345678901234567891}'));
  assert.notEqual(key("a", "{}"), key("b", "{}"));
  assert.equal(key("t", '{"s":"\\u0041"}'), key("t", '{"s":"A"}'));
  assert.equal(key("t", "not json"), "t\0not json");
  assert.equal(key("t", '{"a":1} x'), 't\0{"a":1} x');
});

test("the store evicts the least recently used and drops expired entries", () => {
  let now = 0;
  const s = new Store(2, 1000, () => now);
  s.put("a", ok);
  s.put("b", ok);
  assert.ok(s.get("a")); // a is now the most recently used
  s.put("c", ok);
  assert.equal(s.get("b"), undefined, "b was least recently used");
  assert.ok(s.get("a"));
  now = 1000;
  assert.equal(s.get("a"), undefined);
  assert.equal(s.size, 1);
});

test("Go durations", () => {
  assert.equal(parseDuration("30s"), 30_000);
  assert.equal(parseDuration("1m30s"), 90_000);
  assert.equal(parseDuration("500ms"), 500);
  assert.equal(parseDuration("1.5h"), 5_400_000);
  assert.equal(parseDuration("30"), undefined);
  assert.equal(parseDuration("-1s"), undefined);
  assert.equal(parseDuration(""), undefined);
});
