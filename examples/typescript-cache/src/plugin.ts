// tscache: answers repeated calls of read-only tools from memory. It
// remembers each successful native result it sees on post_tool_call, and
// serves it again on pre_tool_call_can_provide_result to a call of the same
// tool with the same arguments, until the entry is older than its ttl. See
// README.md.

import { s, type Infer, type Plugin } from "@hookhost/plugin";
import { Cacheable, key, settings, Store } from "./cache";

const config = s.object({
  tools: s.array(s.string()).describe("names or globs of the tools to cache"),
  ttl: s.string().default("30s"),
  max_entries: s.integer({ minimum: 1 }).default(256),
});

/** The plugin, with its own clock for tests. */
export function tscache(now: () => number = Date.now) {
  // Replaced as a whole by configure; hooks only read it.
  let live: { cacheable: Cacheable; store: Store } | undefined;
  return {
    name: "tscache",
    version: "1.0.0",
    // No matchers: the manifest is read before the config, so the
    // configured tools are checked in the hooks instead.
    config,
    configure(c, { log }) {
      const st = settings(c);
      live = { cacheable: new Cacheable(st.tools), store: new Store(st.maxEntries, st.ttlMs, now) };
      log.info("tscache configured", { tools: st.tools.join(","), ttl_ms: st.ttlMs, max_entries: st.maxEntries });
    },

    // The hit path: a map lookup and nothing else.
    preToolCallCanProvideResult(call) {
      if (!live?.cacheable.has(call.name)) return;
      return live.store.get(key(call.name, call.arguments));
    },

    // Only clean native results: not an error, not blocked, and not a
    // result a plugin provided (were the cache to store its own answers
    // again, an entry asked for often would never expire).
    postToolCall(ev) {
      if (ev.status !== "ok" || ev.result.isError || !live?.cacheable.has(ev.name)) return;
      live.store.put(key(ev.name, ev.arguments), { content: ev.result.content });
    },
  } satisfies Plugin<Infer<typeof config>>;
}
