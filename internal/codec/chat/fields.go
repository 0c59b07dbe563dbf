package chat

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
	{Path: "model", Handling: dialect.Translated},
	{Path: "messages", Handling: dialect.Translated, Note: "leading system and developer messages become the system prompt; later ones are system messages in place, which each upstream gets in its nearest form"},
	{Path: "audio", Handling: dialect.Refused, Note: "asks for a spoken answer, which no other protocol gives: the client would get text only"},
	{Path: "frequency_penalty", Handling: dialect.Hint, Note: "tunes repetition in the wording, which no other protocol can; the answer keeps its form and meaning"},
	{Path: "function_call", Handling: dialect.Refused, Note: "deprecated; refused on every route: choose tools with tool_choice"},
	{Path: "functions", Handling: dialect.Refused, Note: "deprecated; refused on every route: declare functions in tools"},
	{Path: "logit_bias", Handling: dialect.Refused, Note: "forbids or forces tokens: clients use it to constrain the answer (labels, banned words), which would silently stop"},
	{Path: "logprobs", Handling: dialect.Refused, Note: "true asks for the tokens' log probabilities, which the client reads; false (the default) passes"},
	{Path: "max_completion_tokens", Handling: dialect.Translated, Note: "wins over max_tokens, as at OpenAI"},
	{Path: "max_tokens", Handling: dialect.Translated},
	{Path: "metadata", Handling: dialect.Hint, Note: "tags for completions OpenAI stores; the model never sees them"},
	{Path: "modalities", Handling: dialect.Refused, Note: `["text"] (the default) passes; audio output cannot be given across`},
	{Path: "n", Handling: dialect.Refused, Note: "refused on every route unless 1: this server answers with one choice"},
	{Path: "parallel_tool_calls", Handling: dialect.Hint, Note: "false asks for at most one call per turn; clients run every call they get, so several at once leave the answer the same"},
	{Path: "prediction", Handling: dialect.Hint, Note: "predicted output only makes generation faster; the answer is the same without it"},
	{Path: "presence_penalty", Handling: dialect.Hint, Note: "tunes repetition in the wording, which no other protocol can; the answer keeps its form and meaning"},
	{Path: "prompt_cache_key", Handling: dialect.Hint, Note: "routes the request to warm prompt caches; it changes cost and speed, not the answer"},
	{Path: "prompt_cache_retention", Handling: dialect.Hint, Note: "how long OpenAI keeps a cached prompt: cost and speed only"},
	{Path: "reasoning_effort", Handling: dialect.Hint, Note: "how long a reasoning model thinks: it may change the answer's quality, not its form or what the client reads; no other protocol has a neutral form of it"},
	{Path: "response_format", Handling: dialect.Refused, Note: `{"type":"text"} (the default) passes; json_object and json_schema promise JSON of a shape the client parses`},
	{Path: "safety_identifier", Handling: dialect.Mapped, Note: "sent as the end user's id (Anthropic: metadata.user_id); wins over user when both are sent"},
	{Path: "seed", Handling: dialect.Mapped, Note: "sent as the upstream's seed where it has one; determinism is best effort everywhere, so an upstream without one answers as usual"},
	{Path: "service_tier", Handling: dialect.Hint, Note: "OpenAI's latency and price tier, not the answer"},
	{Path: "stop", Handling: dialect.Mapped, Note: "a string or a list of strings, sent as the upstream's stop sequences (Anthropic: stop_sequences)"},
	{Path: "store", Handling: dialect.Hint, Note: "keeps the completion at OpenAI for evals and distillation; the answer does not depend on it"},
	{Path: "stream", Handling: dialect.Translated},
	{Path: "stream_options.include_usage", Handling: dialect.Translated, Note: "the stream ends with one usage chunk, summed over every round"},
	{Path: "stream_options.include_obfuscation", Handling: dialect.Hint, Note: "random padding against length side channels; hookhost writes the stream itself"},
	{Path: "stream_options.*", Handling: dialect.Hint, Note: "any other stream option: how the stream is written, which hookhost does itself"},
	{Path: "temperature", Handling: dialect.Translated},
	{Path: "tool_choice", Handling: dialect.Refused, Note: `"auto" (the default) passes; none, required and a named function force what the model does, which no neutral form says yet`},
	{Path: "tools", Handling: dialect.Translated, Note: "function tools, beside the plugins' tools"},
	{Path: "top_logprobs", Handling: dialect.Refused, Note: "asks for alternatives' log probabilities, which the client reads; 0 passes"},
	{Path: "top_p", Handling: dialect.Mapped, Note: "sent as the upstream's top_p"},
	{Path: "user", Handling: dialect.Mapped, Note: "sent as the end user's id (Anthropic: metadata.user_id)"},
	{Path: "verbosity", Handling: dialect.Hint, Note: "how long the answer runs: quality, not form; no other protocol has a neutral form of it"},
	{Path: "web_search_options", Handling: dialect.Refused, Note: "makes the model search the web; without it the answer would come from the model's own knowledge"},

	// Messages.
	{Path: "messages[].role", Handling: dialect.Translated, Note: "system, developer, user, assistant, tool; the deprecated function role is refused on every route"},
	{Path: "messages[].content", Handling: dialect.Translated, Note: "a string, or parts whose text is joined by newlines"},
	{Path: "messages[].name", Handling: dialect.Hint, Note: "on system, developer, user and assistant messages: a participant's label no other protocol has; the message itself is kept"},
	{Path: "messages[].name (role tool)", Handling: dialect.Mapped, Note: "LangChain and LangGraph name the tool that answered: hooks see it as the tool's name; the call's own name wins when they differ"},
	{Path: "messages[].tool_call_id", Handling: dialect.Translated},
	{Path: "messages[].tool_calls", Handling: dialect.Translated, Note: "function calls; arguments are kept as written, invalid JSON included"},
	{Path: "messages[].tool_calls[] (custom)", Handling: dialect.Refused, Note: "a custom tool's call is free text with no neutral form"},
	{Path: "messages[].refusal", Handling: dialect.Translated, Note: "read as the assistant's text when it has no content"},
	{Path: "messages[].audio", Handling: dialect.Refused, Note: "an earlier spoken answer by id, which only OpenAI holds"},
	{Path: "messages[].function_call", Handling: dialect.Refused, Note: "deprecated; refused on every route: send the calls in tool_calls"},

	// Content parts.
	{Path: "messages[].content[] (text)", Handling: dialect.Translated},
	{Path: "messages[].content[] (refusal)", Handling: dialect.Translated, Note: "an assistant's refusal part, read as its text"},
	{Path: "messages[].content[].role", Handling: dialect.Hint, Note: "the OpenAI Agents SDK replays text parts with their message's role; the message's own role is the one that counts"},
	{Path: "messages[].cache_control", Handling: dialect.Hint, Note: "a prompt-caching hint on a whole message, as opencode sends it to OpenAI-compatible servers: cost and speed only"},
	{Path: "messages[].content[].cache_control", Handling: dialect.Hint, Note: "a prompt-caching hint some OpenAI-compatible servers take: cost and speed only"},
	{Path: "messages[].content[] (image_url)", Handling: dialect.Refused, Note: "an image the model would not see"},
	{Path: "messages[].content[] (input_audio)", Handling: dialect.Refused, Note: "audio the model would not hear"},
	{Path: "messages[].content[] (file)", Handling: dialect.Refused, Note: "a file the model would not read"},

	// Tools.
	{Path: "tools[].type", Handling: dialect.Translated, Note: "function; custom tools are refused on every route (pre_tool_call could not see their free-text calls)"},
	{Path: "tools[].function.name", Handling: dialect.Translated},
	{Path: "tools[].function.description", Handling: dialect.Translated},
	{Path: "tools[].function.parameters", Handling: dialect.Translated},
	{Path: "tools[].function.strict", Handling: dialect.Hint, Note: "asks OpenAI to hold the arguments exactly to the schema; other upstreams follow the schema without that guarantee, and the call reaches the client all the same"},
}, codec.OpenAIHeaders...)

// Fields returns the front's table: every field of a Chat Completions
// request, message, content part and tool, and the headers its clients
// send, with what becomes of each when the upstream speaks another
// protocol.
func (f *Front) Fields() []dialect.Field { return table.Fields() }

// table is the rows with their handling by path.
var table = codec.NewTable(fields)
