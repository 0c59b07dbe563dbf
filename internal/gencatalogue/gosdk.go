package main

import (
	"fmt"
	"go/format"
	"strings"

	"github.com/hookhost/hookhost/hooks"
)

// goSDKPath holds the Go SDK's per-hook interfaces and the adapter lines
// that fill a hooks.Funcs from them.
const goSDKPath = "plugins/sdk/hooks_gen.go"

// sdkInterfaces names the Go SDK's per-hook interfaces; a hook not named
// here gets "<Hook>Handler" (pre_tool_call: PreToolCallHandler).
var sdkInterfaces = map[hooks.Name]string{
	hooks.OnSessionStart:              "SessionStarter",
	hooks.OnSessionEnd:                "SessionEnder",
	hooks.PreToolListFinalized:        "ToolListFinalizer",
	hooks.PreAPIRequestMutable:        "RequestMutator",
	hooks.PostLLMCallCanReissue:       "Reissuer",
	hooks.PostLLMCall:                 "LLMCallObserver",
	hooks.TransformLLMOutput:          "OutputTransformer",
	hooks.PreToolCall:                 "ToolCallGuard",
	hooks.PreToolCallCanProvideResult: "ResultProvider",
	hooks.PostToolCall:                "ToolCallObserver",
	hooks.TransformToolResult:         "ResultTransformer",
}

func sdkInterface(n hooks.Name) string {
	if name, ok := sdkInterfaces[n]; ok {
		return name
	}
	return goName(n) + "Handler"
}

func goSDK(facts []hooks.Facts) ([]byte, error) {
	var b strings.Builder
	// Not the standard generated-code marker, so that internal/apisnap
	// records the interfaces, which are the package's public API.
	b.WriteString("// Written by go run ./internal/gencatalogue from hooks/catalogue.go (make generate);\n")
	b.WriteString("// do not edit: make check-generated fails when this file differs from what it writes.\n\n")
	b.WriteString(`package sdk

import (
	"context"

	"github.com/hookhost/hookhost/hooks"
)

// The per-hook interfaces. Each is one hook of the catalogue (see package
// hooks for when it fires and how answers combine); implement the ones the
// plugin needs.
type (
`)
	for _, f := range facts {
		name, method, payload := sdkInterface(f.Name), goName(f.Name), f.Payload.Name()
		if f.Observer {
			b.WriteString(comment("\t", fmt.Sprintf("%s observes %s (%s).", name, f.Name, f.Fires)))
			fmt.Fprintf(&b, "\t%s interface {\n\t\t%s(context.Context, hooks.%s) error\n\t}\n", name, method, payload)
			continue
		}
		b.WriteString(comment("\t", fmt.Sprintf("%s answers %s (%s): it returns %s; %s.", name, f.Name, f.Fires, f.Returns, f.Combine)))
		fmt.Fprintf(&b, "\t%s interface {\n\t\t%s(context.Context, hooks.%s) (*hooks.%s, error)\n\t}\n", name, method, payload, f.Answer.Name())
	}
	b.WriteString(`)

// adaptHooks sets the Funcs field of each per-hook interface p implements.
// The manifest's hook list follows from the fields set.
func adaptHooks(p Plugin, f *hooks.Funcs) {
`)
	for _, f := range facts {
		fmt.Fprintf(&b, "\tif h, ok := p.(%s); ok {\n\t\tf.%sFunc = h.%s\n\t}\n", sdkInterface(f.Name), goName(f.Name), goName(f.Name))
	}
	b.WriteString("}\n")
	return format.Source([]byte(b.String()))
}

// comment is text as Go line comments of at most 76 columns of text,
// each line indented by indent.
func comment(indent, text string) string {
	var b, line strings.Builder
	for _, w := range strings.Fields(text) {
		if line.Len() > 0 && line.Len()+1+len(w) > 76 {
			b.WriteString(indent + "// " + line.String() + "\n")
			line.Reset()
		}
		if line.Len() > 0 {
			line.WriteByte(' ')
		}
		line.WriteString(w)
	}
	b.WriteString(indent + "// " + line.String() + "\n")
	return b.String()
}
