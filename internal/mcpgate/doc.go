// Package mcpgate puts hookhost between agents and MCP servers, both ways.
//
// As a client, an Upstream is one configured MCP server (ServerSpec): a
// local process spoken to over stdio, supervised like a plugin (a process
// group of its own, killed with its children; killed by the kernel if the
// host dies; restarted with backoff after a crash; a circuit that stops
// restarts for a cool-down after too many), or a remote server over
// Streamable HTTP. Its tools are offered as "<server>__<tool>", every call
// is bounded in time (ServerSpec.Timeout) and in memory
// (ServerSpec.MaxResultSize), and whatever the server does wrong, hang,
// crash, speak garbage, answer too much, becomes an error naming the server
// instead of a hang or an unbounded read.
//
// As a server, a Gateway is one MCP server that aggregates the upstreams'
// tools (with plugin tools and, if asked, native tools) and answers every
// tools/call through the host's whole tool pipeline (dispatch.Pipeline over
// a hookbus.Bus): pre_tool_call may block the call (an isError result with
// the block message) or change its arguments, a plugin may provide the
// result so that the upstream is never called, post_tool_call sees every
// call and transform_tool_result may rewrite the result. tools/list goes
// through pre_tool_list_finalized, and a tool a plugin left out of the list
// cannot be called either. The Gateway serves over stdio (ServeStdio) and
// Streamable HTTP (HTTPHandler).
//
// Hooks carry a tool result as JSON text. An upstream's result reaches the
// hooks as the MCP CallToolResult's own JSON ({"content":[...],
// "structuredContent":...}), or, when the server marked it isError, as
// {"error": its text} like every failed tool's; and the client gets the
// upstream's CallToolResult itself, structured content, images and
// resource links included, unless a hook changed it. A result a plugin
// provided or transformed is read back as a CallToolResult when it has
// that shape, and as text otherwise; a block is an isError result with the
// block's message.
//
// ModelTools offers the tools of the servers with offer_to_model to the
// model itself, as a dispatch.ToolSet that conversations and the gateway's
// hook loop run in the tool pipeline's native step: the model reads a
// result's text, an isError result or a failed call is an error result
// naming the server, and the set follows each server's tool list.
//
// Every call an Upstream makes is counted by tool and outcome, with its
// latency (CallStats), for the gateway's /metrics.
//
// Progress notifications of an upstream call reach the client that made
// it, under the client's own progress token; a client's cancellation
// cancels the upstream call (the SDK sends notifications/cancelled).
// Resources, prompts, sampling and elicitation are not proxied.
package mcpgate
