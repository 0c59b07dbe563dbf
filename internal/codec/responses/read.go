package responses

import "strings"

// Reading a response upstream: which output items need an answer, and
// which stream events are progress.

// ProviderRun are the output items the provider finished itself (or that
// carry no call): they need no answer in the next request.
var ProviderRun = map[string]bool{
	"message": true, "function_call": true, "reasoning": true,
	"web_search_call": true, "file_search_call": true, "code_interpreter_call": true,
	"image_generation_call": true, "mcp_call": true, "mcp_list_tools": true,
}

// ClientRun are the calls of tools the client runs that have no neutral
// form; the gateway's Responses front refuses their tools.
var ClientRun = map[string]bool{
	"custom_tool_call": true, "computer_call": true, "local_shell_call": true,
	"shell_call": true, "apply_patch_call": true,
}

// Progresses reports whether an event adds to the answer, and so restarts
// the idle timeout: a delta with something in it (text, reasoning, tool
// arguments, whether hookhost keeps them or not), an item or a part
// finished, a built-in tool's call completed, the response begun or
// ended. Status events (in_progress, searching), keep-alives and empty
// deltas add nothing: a server sending only them is idle.
func Progresses(e Event) bool {
	switch {
	case Value(e.Delta) != "", e.Item != nil, Value(e.Text) != "", Value(e.Arguments) != "":
		return true
	case e.Type == "response.created", e.Type == "response.completed", e.Type == "response.incomplete", e.Type == "response.failed":
		return true
	}
	return strings.HasSuffix(e.Type, "_call.completed")
}

// Args is a function_call item's arguments, "" when it has none.
func (it Item) Args() string {
	if it.Arguments == nil {
		return ""
	}
	return string(*it.Arguments)
}

// Value is what p points to, or the zero value when p is nil (a field of
// an Event the event left out).
func Value[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
