package main

import (
	"fmt"
	"go/format"
	"reflect"
	"strings"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
)

// The test harnesses' per-hook helpers. A hook gets the helper written
// here for it under its name, or else one made from its facts: it takes
// the hook's payload and returns what the Bus (Go) or the plugin (Python,
// TypeScript) answered. So a new hook has a helper in every SDK without
// an edit here, and a hook's helper can be given a handier signature by
// adding it here.

const (
	goHarnessPath = "plugins/sdk/plugintest/hooks_gen.go"
	pyHarnessPath = "plugins/python/src/hookhost_plugin/_testing_catalogue.py"
	tsHarnessPath = "plugins/typescript/src/generated/harness.ts"
)

// goHelpers are the Go Harness methods with signatures of their own.
var goHelpers = map[hooks.Name]string{
	hooks.PreToolCall: `// PreToolCall fires pre_tool_call for a call of tool name with argsJSON
// (passed through as is, so invalid JSON can be tested too).
func (h *Harness) PreToolCall(name, argsJSON string) hookbus.PreToolCallOutcome {
	return h.Bus.PreToolCall(h.ctx(), hooks.ToolCallRequest{SessionID: SessionID, CallID: h.callID(), Name: name, Arguments: args(argsJSON)})
}`,
	hooks.PreToolCallCanProvideResult: `// PreToolCallCanProvideResult fires pre_tool_call_can_provide_result; nil means the host
// would dispatch the tool natively.
func (h *Harness) PreToolCallCanProvideResult(name, argsJSON string) *hookbus.ProvidedResult {
	return h.Bus.PreToolCallCanProvideResult(h.ctx(), hooks.ToolCallRequest{SessionID: SessionID, CallID: h.callID(), Name: name, Arguments: args(argsJSON)})
}`,
	hooks.TransformToolResult: `// TransformToolResult fires transform_tool_result on a successful call's
// result content, returning the final result and who changed it.
func (h *Harness) TransformToolResult(name, argsJSON, content string) (hooks.ToolResult, []string) {
	return h.Bus.TransformToolResult(h.ctx(), hooks.ToolCallOutcome{
		SessionID: SessionID, CallID: h.callID(), Name: name, Arguments: args(argsJSON),
		Result: hooks.ToolResult{Content: content}, Status: hooks.StatusOK,
	})
}`,
	hooks.PostToolCall: `// PostToolCall fires the post_tool_call observer; call Flush before
// asserting on what the plugin recorded.
func (h *Harness) PostToolCall(name, argsJSON string, result hooks.ToolResult, status hooks.CallStatus) {
	h.Bus.PostToolCall(hooks.ToolCallOutcome{
		SessionID: SessionID, CallID: h.callID(), Name: name, Arguments: args(argsJSON),
		Result: result, Status: status,
	})
}`,
	hooks.PreToolListFinalized: `// PreToolListFinalized fires pre_tool_list_finalized with tools; nil means no override.
func (h *Harness) PreToolListFinalized(tools ...hooks.ToolSpec) *hookbus.ToolListChange {
	return h.Bus.PreToolListFinalized(h.ctx(), hooks.ToolListRequest{SessionID: SessionID, Tools: tools})
}`,
	hooks.PreAPIRequestMutable: `// PreAPIRequestMutable fires pre_api_request_mutable and returns the patched
// request and who changed which fields.
func (h *Harness) PreAPIRequestMutable(req hooks.ModelRequest) (hooks.ModelRequest, []hookbus.RequestChange) {
	return h.Bus.PreAPIRequestMutable(h.ctx(), hooks.APIRequest{SessionID: SessionID, Request: req})
}`,
	hooks.PostLLMCallCanReissue: `// PostLLMCallCanReissue fires post_llm_call_can_reissue on a response to req; nil means
// no reissue.
func (h *Harness) PostLLMCallCanReissue(req hooks.ModelRequest, resp hooks.ModelResponse) *hookbus.ReissueRequest {
	return h.Bus.PostLLMCallCanReissue(h.ctx(), hooks.LLMCall{SessionID: SessionID, Route: hooks.RouteGateway, Request: req, Response: resp})
}`,
	hooks.TransformLLMOutput: `// TransformLLMOutput fires transform_llm_output on the final answer text.
func (h *Harness) TransformLLMOutput(text string) (string, []string) {
	return h.Bus.TransformLLMOutput(h.ctx(), hooks.LLMOutput{SessionID: SessionID, Text: text})
}`,
	hooks.OnSessionStart: `// OnSessionStart fires the on_session_start observer.
func (h *Harness) OnSessionStart(model string) {
	h.Bus.OnSessionStart(hooks.SessionStart{SessionID: SessionID, Model: model, Route: hooks.RouteGateway})
}`,
	hooks.OnSessionEnd: `// OnSessionEnd fires the on_session_end observer.
func (h *Harness) OnSessionEnd(model string, reason hooks.EndReason) {
	h.Bus.OnSessionEnd(hooks.SessionEnd{SessionID: SessionID, Model: model, Route: hooks.RouteGateway, Reason: reason})
}`,
}

// goHelper is a hook's Go Harness method made from its facts and its Bus
// method: it passes the payload, its SessionID filled in when empty, and
// returns what the Bus returns.
func goHelper(f hooks.Facts) (string, error) {
	name := goName(f.Name)
	m, ok := reflect.TypeFor[*hookbus.Bus]().MethodByName(name)
	if !ok {
		return "", fmt.Errorf("hookbus.Bus has no method %s for %s; add it (see \"Adding a hook\" in hooks/doc.go)", name, f.Name)
	}
	var b strings.Builder
	what := "the " + string(f.Name) + " observer; call Flush before\n// asserting on what the plugin recorded"
	if !f.Observer {
		what = string(f.Name) + " and returns what the Bus made\n// of the answers"
	}
	fmt.Fprintf(&b, "// %s fires %s. An empty SessionID in ev is\n// filled in.\n", name, what)
	var results []string
	for i := 0; i < m.Type.NumOut(); i++ {
		results = append(results, m.Type.Out(i).String())
	}
	res := strings.Join(results, ", ")
	if len(results) > 1 {
		res = "(" + res + ")"
	}
	fmt.Fprintf(&b, "func (h *Harness) %s(ev hooks.%s) %s {\n", name, f.Payload.Name(), res)
	if _, ok := f.Payload.FieldByName("SessionID"); ok {
		b.WriteString("\tif ev.SessionID == \"\" {\n\t\tev.SessionID = SessionID\n\t}\n")
	}
	ctx, ret := "", ""
	if m.Type.NumIn() == 3 {
		ctx = "h.ctx(), "
	}
	if len(results) > 0 {
		ret = "return "
	}
	fmt.Fprintf(&b, "\t%sh.Bus.%s(%sev)\n}", ret, name, ctx)
	return b.String(), nil
}

func goHarness(facts []hooks.Facts) ([]byte, error) {
	var b strings.Builder
	b.WriteString("// Code generated by go run ./internal/gencatalogue from hooks/catalogue.go; DO NOT EDIT.\n\n")
	b.WriteString("package plugintest\n\nimport (\n\t\"github.com/hookhost/hookhost/hookbus\"\n\t\"github.com/hookhost/hookhost/hooks\"\n)\n\n")
	b.WriteString("// The Harness's firing helpers, one per hook of the catalogue.\n")
	for _, f := range facts {
		m, ok := goHelpers[f.Name]
		if !ok {
			var err error
			if m, err = goHelper(f); err != nil {
				return nil, err
			}
		}
		b.WriteString("\n" + m + "\n")
	}
	return format.Source([]byte(b.String()))
}

// pyHelpers are the Python Harness methods with signatures of their own.
var pyHelpers = map[hooks.Name]string{
	hooks.OnSessionStart: `    def on_session_start(self, model: str = "test-model", route: str = "gateway") -> None:
        """Fire on_session_start."""
        self._ask("on_session_start", t.SessionStart(SESSION_ID, model, route))`,
	hooks.OnSessionEnd: `    def on_session_end(
        self, model: str = "test-model", reason: str = "completed", route: str = "gateway"
    ) -> None:
        """Fire on_session_end."""
        self._ask("on_session_end", t.SessionEnd(SESSION_ID, model, route, reason, 1))`,
	hooks.PreToolListFinalized: `    def pre_tool_list_finalized(
        self, tools: Sequence[t.ToolSpec], iteration: int = 1
    ) -> Optional[t.ToolListOverride]:
        """Fire pre_tool_list_finalized."""
        return self._ask(
            "pre_tool_list_finalized", t.ToolListRequest(SESSION_ID, iteration, list(tools))
        )`,
	hooks.PreAPIRequestMutable: `    def pre_api_request_mutable(
        self, request: t.ModelRequest, iteration: int = 1
    ) -> Optional[t.RequestPatch]:
        """Fire pre_api_request_mutable."""
        return self._ask("pre_api_request_mutable", t.APIRequest(SESSION_ID, iteration, request))`,
	hooks.PostLLMCallCanReissue: `    def post_llm_call_can_reissue(
        self, request: t.ModelRequest, response: t.ModelResponse, iteration: int = 1
    ) -> Optional[t.Reissue]:
        """Fire post_llm_call_can_reissue."""
        return self._ask(
            "post_llm_call_can_reissue",
            t.LLMCall(SESSION_ID, iteration, "gateway", request, response),
        )`,
	hooks.TransformLLMOutput: `    def transform_llm_output(self, text: str) -> Optional[str]:
        """Fire transform_llm_output; the new text, or None."""
        r = self._ask("transform_llm_output", t.LLMOutput(SESSION_ID, text))
        return None if r is None else r.text`,
	hooks.PreToolCall: `    def pre_tool_call(
        self, name: str, args: Any = None, call_id: str = "call-1"
    ) -> Optional[t.PreToolCallDecision]:
        """Fire pre_tool_call (modified_args come back as JSON text)."""
        return self._ask(
            "pre_tool_call", t.ToolCallRequest(SESSION_ID, call_id, name, _args(args or {})), name
        )`,
	hooks.PreToolCallCanProvideResult: `    def pre_tool_call_can_provide_result(
        self, name: str, args: Any = None, call_id: str = "call-1"
    ) -> Optional[t.ToolResult]:
        """Fire pre_tool_call_can_provide_result."""
        return self._ask(
            "pre_tool_call_can_provide_result",
            t.ToolCallRequest(SESSION_ID, call_id, name, _args(args or {})),
            name,
        )`,
	hooks.PostToolCall: `    def post_tool_call(
        self, name: str, args: Any, result: t.ToolResult, status: str = "ok"
    ) -> None:
        """Fire post_tool_call."""
        self._ask(
            "post_tool_call",
            t.ToolCallOutcome(SESSION_ID, "call-1", name, _args(args), result, status),
            name,
        )`,
	hooks.TransformToolResult: `    def transform_tool_result(
        self, name: str, args: Any, result: t.ToolResult, status: str = "ok"
    ) -> Optional[t.ToolResult]:
        """Fire transform_tool_result."""
        return self._ask(
            "transform_tool_result",
            t.ToolCallOutcome(SESSION_ID, "call-1", name, _args(args), result, status),
            name,
        )`,
}

// pyHelper is a hook's Python Harness method made from its facts: it
// takes the payload and returns the answer.
func pyHelper(f hooks.Facts) string {
	tool := ""
	if f.ToolScoped {
		tool = ", payload.name"
	}
	if f.Observer {
		return fmt.Sprintf("    def %s(self, payload: t.%s) -> None:\n        \"\"\"Fire %s.\"\"\"\n        self._ask(%q, payload%s)",
			f.Name, f.Payload.Name(), f.Name, f.Name, tool)
	}
	return fmt.Sprintf("    def %s(self, payload: t.%s) -> Optional[t.%s]:\n        \"\"\"Fire %s.\"\"\"\n        return self._ask(%q, payload%s)",
		f.Name, f.Payload.Name(), f.Answer.Name(), f.Name, f.Name, tool)
}

func pyHarness(facts []hooks.Facts) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", header)
	b.WriteString(`"""The test Harness's typed helpers, one per hook of the catalogue (see
hookhost_plugin.testing). They apply the plugin's matchers as the host
does: a hook the plugin does not serve, or a tool its matchers do not
cover, answers None without calling it."""

from typing import Any, Optional, Sequence

from . import types as t

#: The session id of every payload the helpers build.
SESSION_ID = "test-session"


def _args(v: Any) -> str:
    return v if isinstance(v, str) else t.compact_json(v)


class HarnessHooks:
    """The typed helpers; Harness provides _ask."""

    def _ask(self, hook: str, payload: Any, tool: str = "") -> Any:
        raise NotImplementedError
`)
	for _, f := range facts {
		m, ok := pyHelpers[f.Name]
		if !ok {
			m = pyHelper(f)
		}
		b.WriteString("\n" + m + "\n")
	}
	return []byte(b.String())
}

func tsHarness(facts []hooks.Facts) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s\n", header)
	b.WriteString(`// The test harness's per-hook methods, one per hook of the catalogue (see
// ../testing.ts): each calls its hook with a payload (fields left out take
// their zero values) and resolves to its answer, null for no opinion.

import type { CallOptions } from "../testing";
import type * as T from "../types";
import type { HookName } from "./catalogue";

export abstract class HarnessHooks {
  abstract call(hook: HookName, payload: object, opts?: CallOptions): Promise<unknown>;
`)
	for _, f := range facts {
		payload := tsType(f.Payload.Name())
		fmt.Fprintf(&b, "\n  /** Calls %s (%s). */\n", f.Name, f.Fires)
		if f.Observer {
			fmt.Fprintf(&b, "  %s(payload: Partial<T.%s>, o?: CallOptions): Promise<void> {\n    return this.call(%q, payload, o).then(() => undefined);\n  }\n",
				camel(f.Name), payload, f.Name)
			continue
		}
		answer := tsType(f.Answer.Name())
		fmt.Fprintf(&b, "  %s(payload: Partial<T.%s>, o?: CallOptions): Promise<T.%s | null> {\n    return this.call(%q, payload, o) as Promise<T.%s | null>;\n  }\n",
			camel(f.Name), payload, answer, f.Name, answer)
	}
	b.WriteString("}\n")
	return []byte(b.String())
}
