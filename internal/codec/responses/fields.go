package responses

import (
	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/dialect"
)

// fields is the front's table (see Fields). The decoder follows it: a
// hint row it meets in a request is dropped across protocols and counted
// (dialect.Call.Drop), a refused or carried row holding anything but its
// default is named in dialect.Call.Foreign, and translated and mapped rows
// are read into the neutral request by the decoder's own code.
var fields = append([]dialect.Field{
	// The request, in the order of OpenAI's API reference.
	{Path: "background", Handling: dialect.Refused, Note: "refused on every route unless false: a background response is fetched later by id"},
	{Path: "conversation", Handling: dialect.Refused, Note: "refused on every route: hookhost keeps no conversations; send the whole input or previous_response_id"},
	{Path: "include[]: reasoning.encrypted_content", Handling: dialect.Hint, Note: "asks for opaque reasoning the client may replay; another protocol's model gives none, and the answer is the same"},
	{Path: "include[]: message.output_text.logprobs", Handling: dialect.Refused, Note: "asks for the tokens' log probabilities, which the client reads"},
	{Path: "include[]: web_search_call.action.sources", Handling: dialect.Hint, Note: "more output of a built-in tool, which cannot run across anyway"},
	{Path: "include[]: code_interpreter_call.outputs", Handling: dialect.Hint, Note: "more output of a built-in tool, which cannot run across anyway"},
	{Path: "include[]: computer_call_output.output.image_url", Handling: dialect.Hint, Note: "more output of a built-in tool, which cannot run across anyway"},
	{Path: "include[]: file_search_call.results", Handling: dialect.Hint, Note: "more output of a built-in tool, which cannot run across anyway"},
	{Path: "include[]: message.input_image.image_url", Handling: dialect.Hint, Note: "echoes the client's own image URLs back; images cannot be sent across anyway"},
	{Path: "input", Handling: dialect.Translated, Note: "a string (one user message) or a list of items"},
	{Path: "instructions", Handling: dialect.Translated, Note: "the system prompt"},
	{Path: "max_output_tokens", Handling: dialect.Translated},
	{Path: "max_tool_calls", Handling: dialect.Hint, Note: "bounds calls to built-in tools only, which cannot run across anyway"},
	{Path: "metadata", Handling: dialect.Hint, Note: "tags for the stored response; the model never sees them"},
	{Path: "model", Handling: dialect.Translated},
	{Path: "parallel_tool_calls", Handling: dialect.Hint, Note: "false asks for at most one call per turn; clients run every call they get, so several at once leave the answer the same"},
	{Path: "previous_response_id", Handling: dialect.Translated, Note: "resolved from hookhost's own store of responses"},
	{Path: "prompt", Handling: dialect.Refused, Note: "a prompt template OpenAI fills in: without it the model would not see those instructions"},
	{Path: "prompt_cache_key", Handling: dialect.Hint, Note: "routes the request to warm prompt caches (Codex sends one): cost and speed, not the answer"},
	{Path: "prompt_cache_retention", Handling: dialect.Hint, Note: "how long OpenAI keeps a cached prompt: cost and speed only"},
	{Path: "reasoning", Handling: dialect.Hint, Note: "effort and summaries of a reasoning model: effort may change the answer's quality, not its form or what the client reads, and summaries are shown only if given; no neutral form says either yet"},
	{Path: "safety_identifier", Handling: dialect.Mapped, Note: "sent as the end user's id (Anthropic: metadata.user_id); wins over user when both are sent"},
	{Path: "service_tier", Handling: dialect.Hint, Note: "OpenAI's latency and price tier, not the answer"},
	{Path: "store", Handling: dialect.Hint, Note: "hookhost keeps the response itself when true; the upstream never needs to"},
	{Path: "stream", Handling: dialect.Translated},
	{Path: "stream_options.include_obfuscation", Handling: dialect.Hint, Note: "random padding against length side channels; hookhost writes the stream itself"},
	{Path: "stream_options.*", Handling: dialect.Hint, Note: "any other stream option: how the stream is written, which hookhost does itself"},
	{Path: "temperature", Handling: dialect.Translated},
	{Path: "text.format", Handling: dialect.Refused, Note: `{"type":"text"} (the default) passes; json_object and json_schema promise JSON of a shape the client parses`},
	{Path: "text.verbosity", Handling: dialect.Hint, Note: "how long the answer runs: quality, not form; no other protocol has a neutral form of it"},
	{Path: "tool_choice", Handling: dialect.Refused, Note: `"auto" (the default) passes; none, required, a named tool and allowed_tools force what the model does, which no neutral form says yet`},
	{Path: "tools", Handling: dialect.Translated, Note: "function tools, beside the plugins' tools"},
	{Path: "top_logprobs", Handling: dialect.Refused, Note: "asks for alternatives' log probabilities, which the client reads; 0 passes"},
	{Path: "top_p", Handling: dialect.Mapped, Note: "sent as the upstream's top_p"},
	{Path: "truncation", Handling: dialect.Hint, Note: "auto shortens a conversation too long for the model; without it such a request fails with an error instead, never silently"},
	{Path: "user", Handling: dialect.Mapped, Note: "sent as the end user's id (Anthropic: metadata.user_id)"},
	{Path: "client_metadata", Handling: dialect.Hint, Note: "Codex's description of itself; the model never sees it"},

	// Input items.
	{Path: "input[].type", Handling: dialect.Translated, Note: "message, function_call and function_call_output; a message may leave it out"},
	{Path: "input[].role", Handling: dialect.Translated, Note: "user, assistant, system, developer (system and developer alike are system messages)"},
	{Path: "input[].content", Handling: dialect.Translated, Note: "a string, or parts whose text is joined by newlines"},
	{Path: "input[].call_id", Handling: dialect.Translated},
	{Path: "input[].name", Handling: dialect.Translated},
	{Path: "input[].arguments", Handling: dialect.Translated, Note: "kept as written, invalid JSON included"},
	{Path: "input[].output", Handling: dialect.Translated, Note: "a string, or parts whose text is joined"},
	{Path: "input[].id", Handling: dialect.Hint, Note: "the id an earlier response gave the item a client replays; the item itself is sent"},
	{Path: "input[].status", Handling: dialect.Hint, Note: "whether a replayed item was completed; the item itself is sent"},
	{Path: "input[].phase", Handling: dialect.Hint, Note: "whether a replayed assistant message was commentary or the final answer (Codex replays it); the message itself is sent"},
	{Path: "input[] (reasoning)", Handling: dialect.Hint, Note: "opaque reasoning from an earlier response (Codex replays it); only the model that wrote it can read it, and the answer does not depend on it"},
	{Path: "input[] (item_reference)", Handling: dialect.Translated, Note: "resolved from hookhost's own store of responses"},
	{Path: "input[] (other types)", Handling: dialect.Refused, Note: "calls of built-in tools and their outputs (web_search_call, computer_call, mcp_call, …): only OpenAI ran them and can read them back"},

	// Content parts.
	{Path: "input[].content[] (input_text)", Handling: dialect.Translated},
	{Path: "input[].content[] (output_text)", Handling: dialect.Translated, Note: "an assistant's replayed text"},
	{Path: "input[].content[] (refusal)", Handling: dialect.Translated, Note: "an assistant's refusal, read as its text"},
	{Path: "input[].content[].annotations", Handling: dialect.Hint, Note: "citations on a replayed answer; its text is sent"},
	{Path: "input[].content[].logprobs", Handling: dialect.Hint, Note: "log probabilities of a replayed answer; its text is sent"},
	{Path: "input[].content[] (input_image)", Handling: dialect.Refused, Note: "an image the model would not see"},
	{Path: "input[].content[] (input_file)", Handling: dialect.Refused, Note: "a file the model would not read"},
	{Path: "input[].content[] (input_audio)", Handling: dialect.Refused, Note: "audio the model would not hear"},

	// Tools.
	{Path: "tools[].type", Handling: dialect.Translated, Note: "function; custom, computer_use_preview, local_shell, shell and apply_patch are refused on every route (pre_tool_call could not see their calls)"},
	{Path: "tools[].name", Handling: dialect.Translated},
	{Path: "tools[].description", Handling: dialect.Translated},
	{Path: "tools[].parameters", Handling: dialect.Translated},
	{Path: "tools[].strict", Handling: dialect.Hint, Note: "asks OpenAI to hold the arguments exactly to the schema; other upstreams follow the schema without that guarantee, and the call reaches the client all the same"},
	{Path: "tools[] (built-in)", Handling: dialect.Hint, Note: "web_search, file_search, mcp, code_interpreter, image_generation, …: run by OpenAI itself, which no other upstream does; across protocols the model is not offered them (a tool offered is an option, not an answer; Codex offers web_search on every request); refused when tool_choice names one"},
	{Path: "tools[] (namespace)", Handling: dialect.Hint, Note: "a named group of function tools (Codex's sub-agent tools): their calls come back namespaced, which no other protocol has, so across protocols the model is not offered them"},
}, codec.OpenAIHeaders...)

// Fields returns the front's table: every field of a Responses request,
// input item, content part and tool, and the headers its clients send,
// with what becomes of each when the upstream speaks another protocol.
func (f *Front) Fields() []dialect.Field { return table.Fields() }

// table is the rows with their handling by path.
var table = codec.NewTable(fields)
