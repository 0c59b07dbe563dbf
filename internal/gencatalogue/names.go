package main

import (
	"strings"

	"github.com/hookhost/hookhost/hooks"
)

// camel is a hook's name as a TypeScript method: pre_tool_call is
// preToolCall.
func camel(name hooks.Name) string {
	parts := strings.Split(string(name), "_")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

// goName is a hook's name as a Go identifier: pre_api_request_mutable is
// PreAPIRequestMutable.
func goName(name hooks.Name) string {
	parts := strings.Split(string(name), "_")
	for i, p := range parts {
		switch p {
		case "api", "llm":
			parts[i] = strings.ToUpper(p)
		default:
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, "")
}

// protoName is a hook's name as its RPC in the protos: pre_api_request_mutable
// is PreApiRequestMutable.
func protoName(name hooks.Name) string {
	c := camel(name)
	return strings.ToUpper(c[:1]) + c[1:]
}

// tsType is a Go type's name as the TypeScript SDK spells it, acronyms
// as words: APIRequest is ApiRequest, LLMCall is LlmCall. The Python SDK
// spells them as Go does.
func tsType(goType string) string {
	return strings.NewReplacer("API", "Api", "LLM", "Llm").Replace(goType)
}

// typeName is a Facts type's name, "" for none (an observer's answer).
func typeName(f hooks.Facts, answer bool) string {
	t := f.Payload
	if answer {
		t = f.Answer
	}
	if t == nil {
		return ""
	}
	return t.Name()
}
