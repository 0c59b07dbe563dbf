// Package conformance checks that a plugin written in any language keeps
// the whole plugin contract under the real host: it passes `plugins check`,
// serves every hook kind over each protocol version it speaks, is asked a
// stretch and answers it, answers a round's model-side hooks in one
// exchange per stage when its manifest sets model_stages (protocol 2; five
// exchanges hook by hook otherwise: Plugin.ModelStages says which the
// implementation does), honours deadlines without blocking other calls,
// logs at the level it means, is restarted after a SIGKILL, exits when its
// host is SIGKILLed and leaves gracefully when the host closes.
//
// To do that, every language has one plugin that behaves exactly as the
// spec below says, and Run drives it. The Go one (goconform) is built with
// plugins/sdk; the others live with their SDKs and beside PROTOCOL.md.
//
// # The conform plugin
//
// Name "conform", version "1.0.0".
//
// Config: an object with one optional key, "tag", a string (default
// "conform"). Any other key, or a tag that is not a string, makes
// Configure fail with a message that names the key. On a successful
// Configure the plugin logs, at level WARN, the message "conform
// configured" with the field tag=<tag>.
//
// Manifest:
//   - hooks: every hook of the catalogue (hooks.Catalogue), those this
//     spec names and any other;
//   - matchers: none (the tool hooks apply to every tool);
//   - hook_matchers: pre_tool_call_can_provide_result applies to
//     "conform__*" only;
//   - tools, each with a non-empty description: conform__echo, schema
//     {"type":"object","properties":{"text":{"type":"string"}},"required":["text"]};
//     conform__sleep, schema
//     {"type":"object","properties":{"ms":{"type":"integer"}},"required":["ms"]};
//     conform__seen and conform__raise, schema {"type":"object"}.
//   - config: declares the one config key, "tag", so that the host refuses
//     any other before Configure, naming its line.
//
// A hook of the catalogue this spec does not name is served all the same:
// as an observer it records "<hook> <session_id>", and as an answering
// hook it gives no opinion. The plugins serve it from the catalogue as
// data (goconform's generated defaults, each SDK's list of hooks, the
// Plugin service of plugin.proto), so that a new hook needs no edit here
// nor in any of them. Run checks that too: it asks every hook of the
// catalogue with its zero payload (bar the session id), which every rule
// below answers with no opinion, and wants an observer line from each
// observer.
//
// Observers record one line each, kept in memory in the order received:
//   - on_session_start: "on_session_start <session_id>"
//   - on_session_end: "on_session_end <session_id> <reason>"
//   - post_llm_call: "post_llm_call <session_id> <model>"
//   - post_tool_call: "post_tool_call <name> <status>", followed by
//     " <origin>" when the call's origin is not empty
//
// Answering hooks (anything not listed is no opinion):
//   - pre_tool_list_finalized: when any tool's name starts with "hidden_",
//     the list without those tools, in the order given.
//   - pre_api_request_mutable: when the request's model is "patch-me", a
//     patch setting system to "patched by <tag>" and temperature to 0.5.
//   - pre_llm_call_can_provide_response: when the request's model is
//     "provide-me", a response whose message (role left empty or
//     "assistant") has the content "provided by <tag>" and one tool call,
//     id "conform_call", name "conform__echo", arguments {"text":"hi"},
//     with usage 3 input and 5 output tokens, and model and stop reason
//     left empty (the host gives them the request's model and tool_use).
//   - post_llm_call_can_reissue: when the response message's content
//     contains "REISSUE", a reissue with reason "conform asked again" and a
//     patch whose messages are the request's messages followed by one user
//     message with content "again".
//   - transform_llm_output: when the text is not empty, the text followed
//     by " -- <tag>".
//   - pre_tool_call, for any tool, looking at the arguments' "text" string
//     (arguments that are not an object, or lack it, get no opinion): the
//     text "forbidden" is blocked with the message "conform blocks
//     forbidden text"; a text starting "ask:" gets an ask whose reason is
//     the rest of the text; a text starting "shout:" gets modified arguments,
//     the same object with text replaced by the rest of the text in upper
//     case (ASCII).
//   - pre_tool_call_can_provide_result (asked for conform__* only):
//     conform__echo answers the JSON {"echo":<text>,"tag":<tag>}, with a
//     third key "origin":<origin> when the call's origin is not empty (in
//     any key order: the host compares JSON values), except
//     that the text "fail" answers an error result (is_error) with content
//     "conform refuses to echo fail"; conform__seen answers the JSON array
//     of the observer lines so far; conform__sleep sleeps its "ms"
//     milliseconds, or until the call is cancelled or its deadline passes,
//     then answers "slept"; conform__raise fails the call (an exception, a
//     rejected promise, an error return: the language's usual way); any
//     other conform__ tool gets no opinion.
//   - transform_tool_result: for conform__echo with a status starting
//     "provided_by:", the result's content followed by " (transformed)",
//     is_error kept; for the tool "native_upper", the content in upper
//     case (ASCII); otherwise no opinion.
//   - post_tool_call_can_add_context: for conform__echo with a status
//     starting "provided_by:", the context "echo checked by <tag>";
//     otherwise no opinion.
//   - on_user_message: the text "forbidden" is blocked with the message
//     "conform blocks forbidden text"; a text starting "context:" gets the
//     context of the rest of the text followed by " -- <tag>"; otherwise
//     no opinion.
//
// # The lane
//
// Serving the lane (PROTOCOL.md, "The lane") is optional, and so is this
// part. A plugin that serves it (Plugin.Lane; the Go, Python and TypeScript
// conform plugins do, through their SDKs) also logs, at level INFO, the message "conform hook calls arrive"
// with the field carrier=lane or carrier=grpc the first time an answering
// hook's call comes by that carrier; Run then wants every call of a
// protocol 2 round on the lane, and every call over protocol 1 on gRPC.
// A plugin that does not serve the lane is sent its calls on the Hooks
// stream, and is held to the rest of the spec alike.
package conformance
