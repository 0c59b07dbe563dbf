package messages

import (
	"slices"

	"github.com/hookhost/hookhost/internal/dialect"
)

// Fields returns the front's field table: every request field and header
// of Anthropic Messages (the beta fields included), and what becomes of it
// when the upstream speaks another protocol. Decode follows it; a test
// holds the two together.
func (f *Front) Fields() []dialect.Field { return slices.Clone(table) }

// Paths of the rows Decode names when it drops or maps a field, so that
// the code and the table cannot spell them differently.
const (
	pathTopK            = "top_k"
	pathTopP            = "top_p"
	pathStop            = "stop_sequences"
	pathMetadata        = "metadata"
	pathUserID          = "metadata.user_id"
	pathThinking        = "thinking"
	pathCache           = "cache_control"
	pathEffort          = "output_config.effort"
	pathTaskBudget      = "output_config.task_budget"
	pathSystemCache     = "system[].cache_control"
	pathSystemCites     = "system[].citations"
	pathSystemMessage   = "messages[] (role system)"
	pathClearAt         = "messages[].clear_at"
	pathMessageOutput   = "messages[].output_config"
	pathBlockCache      = "messages[].content[].cache_control"
	pathBlockCites      = "messages[].content[].citations"
	pathThinkingBlock   = "messages[].content[] (thinking)"
	pathRedactedBlock   = "messages[].content[] (redacted_thinking)"
	pathResultCache     = "messages[].content[].content[].cache_control"
	pathResultCites     = "messages[].content[].content[].citations"
	pathToolCache       = "tools[].cache_control"
	pathToolDefer       = "tools[].defer_loading"
	pathToolEager       = "tools[].eager_input_streaming"
	pathToolStrict      = "tools[].strict"
	pathToolExamples    = "tools[].input_examples"
	pathHeaderBeta      = "header: anthropic-beta"
	pathHeaderStainless = "header: x-stainless-*"
)

// serverBlocks are the content block types of Anthropic's own server
// tools and server-held state: only an Anthropic upstream knows them.
var serverBlocks = []string{
	"server_tool_use", "web_search_tool_result", "web_fetch_tool_result", "advisor_tool_result",
	"code_execution_tool_result", "bash_code_execution_tool_result", "text_editor_code_execution_tool_result",
	"tool_search_tool_result", "mcp_tool_use", "mcp_tool_result", "mcp_tool_listing",
	"container_upload", "compaction", "tool_addition", "tool_removal", "fallback",
}

const (
	hint     = dialect.Hint
	mapped   = dialect.Mapped
	carried  = dialect.Carried
	refused  = dialect.Refused
	translat = dialect.Translated
)

func row(path string, h dialect.Handling, note string) dialect.Field {
	return dialect.Field{Path: path, Handling: h, Note: note}
}

// table is the front's field table, in the order of the API reference:
// the headers, the request's top-level fields, then a message's, a
// content block's, a tool's.
var table = func() []dialect.Field {
	t := []dialect.Field{
		row("header: x-api-key", mapped, "hookhost's inbound key (server.api_key_env), never sent upstream; or, with server.forward_client_key, the client's own provider key, sent as the upstream's credential header (OpenAI's Authorization: Bearer)"),
		row("header: authorization", mapped, "the same key, sent as Authorization: Bearer"),
		row("header: anthropic-version", translat, "hookhost answers in the shapes of 2023-06-01; an Anthropic upstream is sent the client's"),
		row(pathHeaderBeta, hint, "opts in to beta body fields, each judged by its own row; an Anthropic upstream is sent it"),
		row("header: anthropic-user-profile-id", hint, "whom Anthropic attributes the request to; another provider bills the account hookhost is configured with"),
		row("header: anthropic-workspace-id", hint, "an Anthropic workspace; another provider has none"),
		row("header: anthropic-organization-id", hint, "an Anthropic organization; another provider has none"),
		row("header: anthropic-dangerous-direct-browser-access", hint, "lets a browser call the API directly; hookhost's own CORS policy applies"),
		row(pathHeaderStainless, hint, "the SDK's own telemetry (language, version, retry count)"),
		row("header: content-type", translat, "must be application/json"),

		row("model", translat, "the client's name for the model; server.models may restrict it"),
		row("max_tokens", translat, ""),
		row("messages", translat, ""),
		row("billing_policy", hint, "who Anthropic bills; another provider bills the account hookhost is configured with"),
		row(pathCache, hint, "a prompt-cache marker: caching changes cost and speed, not the answer"),
		row("compaction", carried, "asks Anthropic to summarise the conversation into a compaction block, which the client relies on getting back"),
		row("container", carried, "a code-execution container and its skills, which only Anthropic runs"),
		row("context_management", hint, "lets Anthropic clear old tool results or thinking as the context grows; another provider gets the whole conversation the client sent"),
		row("diagnostics", hint, "asks for cache-miss diagnostics in the response"),
		row("fallback_credit_token", hint, "a billing credit for a retry after a refusal"),
		row("fallbacks", hint, "models Anthropic may retry on after a policy refusal; another provider's model answers or refuses as it does"),
		row("inference_geo", refused, "a data-residency requirement that another provider cannot be held to"),
		row("mcp_servers", carried, "MCP servers whose tools Anthropic calls itself; without them the model lacks tools the client relies on"),
		row(pathMetadata, hint, "request metadata; keys other than user_id are dropped"),
		row(pathUserID, mapped, "the neutral user: OpenAI's user"),
		row("output_config", translat, "an object of the settings below; a key not listed here is refused across protocols"),
		row(pathEffort, hint, "how much the model reasons; another provider's model reasons as it is configured"),
		row("output_config.format", refused, "structured output: the client relies on JSON of the schema's shape"),
		row(pathTaskBudget, hint, "a token budget the model paces an agentic task by"),
		row("output_format", refused, "structured output (the older name of output_config.format)"),
		row("service_tier", hint, "capacity choice; another provider serves from its own tier"),
		row("speed", hint, "fast mode: output speed, not content"),
		row(pathStop, mapped, "the neutral stop sequences: OpenAI's stop"),
		row("stream", translat, ""),
		row("system", translat, "a string, or text blocks joined with a blank line"),
		row(pathSystemCache, hint, "a prompt-cache marker"),
		row(pathSystemCites, hint, "citations behind earlier text; the text stays"),
		row("temperature", translat, ""),
		row(pathThinking, hint, "extended thinking: another provider returns no thinking blocks, and reasons as it is configured; the answer's text and tool calls come as always"),
		row("thread", carried, "server-held conversation state: with it the client sends only the new turn, so another provider would lack the rest"),
		row("tool_choice", refused, `forces or forbids tool calls, which the neutral request cannot say ({"type":"auto"} alone is the default and accepted)`),
		row("tool_choice.disable_parallel_tool_use", refused, "at most one call per answer; dropping it would let the model make several (false is the default and accepted)"),
		row("tools", translat, "custom tools (type absent or \"custom\")"),
		row(pathTopK, hint, "sampling only among the k likeliest tokens: OpenAI has no such setting, and it changes which answer is sampled, not what kind"),
		row(pathTopP, mapped, "the neutral top_p: OpenAI's top_p"),

		row("messages[].role", translat, `"user" or "assistant"`),
		row(pathSystemMessage, mapped, "a mid-conversation system message: a neutral system message, which OpenAI gets in place and Anthropic in the system prompt (also when forwarded, so an upstream without the beta that allows it accepts the request)"),
		row(pathClearAt, hint, `"next_user_message" hides the system message once a later user message exists; hookhost keeps it, in place or in the system prompt: a note shown longer asks nothing new`),
		row(pathMessageOutput, hint, "a system message's per-turn effort; like output_config.effort (also dropped when forwarded, with the message folded into the system prompt)"),
		row("messages[].content", translat, "a string, or the content blocks below"),
		row("messages[].content[] (text)", translat, "joined with a blank line"),
		row(pathBlockCache, hint, "a prompt-cache marker, on any block"),
		row(pathBlockCites, hint, "citations behind earlier text; the text stays"),
		row("messages[].content[] (tool_use)", translat, "a tool call of an earlier turn, its input as the arguments"),
		row("messages[].content[].caller", carried, "a call made by Anthropic's code execution tool"),
		row("messages[].content[].toolset_name", carried, "a tool of one of Anthropic's MCP toolsets"),
		row("messages[].content[] (tool_result)", translat, "a neutral tool message, before the user message of the other blocks"),
		row("messages[].content[].content", translat, "a tool result: a string, or text blocks joined with a blank line"),
		row("messages[].content[].is_error", translat, ""),
		row(pathResultCache, hint, "a prompt-cache marker"),
		row(pathResultCites, hint, "citations behind earlier text; the text stays"),
		row("messages[].content[].content[] (image, document, search_result, tool_reference)", refused, "the neutral tool result holds text only; dropping the rest would change what the model sees"),
		row("messages[].content[] (image)", refused, "the neutral messages hold text only; dropping an image would change the question"),
		row("messages[].content[] (document)", refused, "the same, for a document"),
		row("messages[].content[] (search_result)", refused, "the same, for a search result"),
		row(pathThinkingBlock, hint, "an earlier turn's reasoning: another provider cannot check its signature, and the turn's text and calls stay"),
		row(pathRedactedBlock, hint, "the same, encrypted"),
	}
	for _, typ := range serverBlocks {
		t = append(t, row("messages[].content[] ("+typ+")", carried, "state of Anthropic's server tools, which only Anthropic runs"))
	}
	return append(t,
		row("tools[].name", translat, ""),
		row("tools[].description", translat, ""),
		row("tools[].input_schema", translat, ""),
		row("tools[].type", translat, `absent or "custom"`),
		row(pathToolCache, hint, "a prompt-cache marker"),
		row(pathToolDefer, hint, "offers the tool only once tool search finds it; another provider is offered every tool at once"),
		row(pathToolEager, hint, "streams a call's input before it is validated; hookhost hands over whole calls in any case"),
		row(pathToolStrict, hint, "asks Anthropic to hold the call's input to the schema; the client checks calls against its tools either way"),
		row(pathToolExamples, hint, "example inputs shown to the model"),
		row("tools[].allowed_callers", carried, "which of Anthropic's code execution tools may call the tool"),
		row("tools[] (server tools: web_search_*, bash_*, code_execution_*, mcp_toolset, …)", carried, "tools Anthropic runs itself"),
	)
}()
