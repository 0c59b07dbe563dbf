// Package hooks is the contract between the hookhost conversation loop and
// its plugins: the hook names, a typed payload and result for every hook, the
// Plugin interface, and the Bus that fires one hook across the enabled
// plugins in priority order.
//
// The Bus owns three rules so that no caller has to:
//
//   - Who is asked. A plugin is asked only for hooks its manifest lists, and
//     for per-tool hooks only when the tool name matches one of its matchers.
//     A hook nobody subscribes to costs no call at all.
//   - How answers combine. Each hook has one combine rule (first non-nil
//     wins, merge with the first write per field winning, chain, any block
//     wins, observe); they are written out top to bottom in bus_hooks.go.
//     Priority is precedence everywhere: a higher-priority plugin's answer
//     is never overridden by a lower one's.
//   - What an answer may hold. Every answer is checked by one set of rules
//     (validate.go: message roles and tool calls in patches, tool names and
//     schemas in lists and patches, the shape of a pre_tool_call decision,
//     and Options.MaxResultSize on what one answer carries), the same for
//     an in-process plugin and a remote one, whichever protocol carried
//     it. An answer that breaks them is malformed (a MalformedError).
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
// Tool results are JSON. A result a plugin provides or transforms whose
// content is not JSON is taken as plain text and carried as a JSON string
// holding it ("sunny" becomes "\"sunny\""), the same for in-process and
// remote plugins; it is not a failure. ToolResult.AsJSON is that rule; the
// tool-call pipeline applies it to each result before anyone downstream
// (post_tool_call, the next transform, the model) sees it.
//
// Observer hooks (on_session_start, on_session_end, post_llm_call,
// post_tool_call) are queued per plugin and delivered in order by a worker,
// so they never delay the conversation; a full queue drops the event and
// counts the drop. Stats tells them apart (HookStats.Observer), and
// Stats.SyncCalls counts only the calls the conversation waited for.
//
// The tool pipeline is fired through a ToolRun, which may ask one plugin
// several consecutive hooks of one call in one exchange (a stretch) with
// the same outcome as hook by hook; ToolRun's comment is the design.
//
// A nil *Bus is valid and fires nothing: it is the bypass route.
package hooks
