// Package hookbus fires hookhost's hooks (package hooks) across the enabled
// plugins in priority order: the Bus, its options, and its counters.
//
// The Bus owns four rules so that no caller has to:
//
//   - Who is asked. A plugin is asked only for hooks its manifest lists, and
//     for per-tool hooks only when the tool name matches one of its matchers.
//     A hook nobody subscribes to costs no call at all.
//   - How answers combine. Each hook has one combine rule (first non-nil
//     wins, merge with the first write per field winning, chain, any block
//     wins, observe); they are written out top to bottom in bus_hooks.go,
//     one method per hook, named after it. Priority is precedence
//     everywhere: a higher-priority plugin's answer is never overridden by
//     a lower one's.
//   - What an answer may hold. Every answer goes through hooks.CheckAnswer,
//     with Options.MaxResultSize bounding what one answer carries; one that
//     breaks the rules is malformed.
//   - What failure means. A plugin that errors, panics, misses its deadline,
//     returns something malformed or is unavailable counts as nil for that
//     call. It is logged at WARN once per (plugin, hook, failure kind) and at
//     DEBUG afterwards, and counted in Stats. The one opt-in exception is
//     Options.FailClosed, which turns a plugin's own pre_tool_call failure
//     into a block. A call the host itself would not send (one over the
//     plugin's request size limit) counts as nil too, as KindRefused, which
//     is logged the same way but is not the plugin's fault. An answer that
//     arrives after the deadline is a timeout: it is dropped.
//
// Observer hooks (hooks.Name.Observer) are queued per plugin and delivered
// in order by a worker, so they never delay the conversation; a full queue
// drops the event and counts the drop. A plugin that takes observer batches
// (a remote one over protocol v2) is sent what is queued in one exchange,
// each event counted as its own call. Stats tells them apart
// (HookStats.Observer), and Stats.SyncCalls counts only the calls the
// conversation waited for.
//
// The tool pipeline is fired through a ToolRun, which may ask one plugin
// several consecutive hooks of one call in one exchange (a stretch) with
// the same outcome as hook by hook; ToolRun's comment is the design.
// The model side is fired by stages: PreCall before a model call and
// PostCall after it ask the model-side hooks plugin by plugin, in one
// exchange per plugin and stage when it can take one; PreCall's comment is
// the design. The per-hook methods (PreToolListFinalized, …) remain, for
// callers that fire one hook alone.
//
// A nil *Bus is valid and fires nothing: it is the bypass route.
package hookbus
