package main

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/hookhost/hookhost/hooks"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
)

// rpc is a hook's version 1 RPC as plugin.proto declares it.
func rpc(f hooks.Facts) (protoreflect.MethodDescriptor, error) {
	svc := pluginv1.File_plugin_proto.Services().ByName("Plugin")
	m := svc.Methods().ByName(protoreflect.Name(protoName(f.Name)))
	if m == nil {
		return nil, fmt.Errorf("plugin.proto's service Plugin has no rpc %s for %s; add it (see \"Adding a hook\" in hooks/doc.go) and run make proto", protoName(f.Name), f.Name)
	}
	return m, nil
}

// protocolTable is PROTOCOL.md's hook table: the catalogue's facts and
// each hook's RPC, payload and response from plugin.proto.
func protocolTable(facts []hooks.Facts) (string, error) {
	var b strings.Builder
	b.WriteString("| hook | fires | v1 RPC | payload | answer (unset = no opinion) | combine rule |\n|---|---|---|---|---|---|\n")
	for _, f := range facts {
		m, err := rpc(f)
		if err != nil {
			return "", err
		}
		out := m.Output()
		answer, combine := "`"+string(out.Name())+"`", "observer"
		if !f.Observer {
			combine = f.Combine
			var fields []string
			for i := 0; i < out.Fields().Len(); i++ {
				fields = append(fields, string(out.Fields().Get(i).Name()))
			}
			if len(fields) == 1 {
				answer = "`" + string(out.Name()) + "." + fields[0] + "`"
			} else {
				answer += " (`" + strings.Join(fields, "`, `") + "`)"
			}
			answer += ": " + f.Returns
		}
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | `%s` | %s | %s |\n", f.Name, f.Fires, m.Name(), m.Input().Name(), answer, combine)
	}
	return b.String(), nil
}

// pythonHandlers is the Python SDK README's handler table.
func pythonHandlers(facts []hooks.Facts) string {
	var b strings.Builder
	b.WriteString("| Hook | Signature | Answer |\n| --- | --- | --- |\n")
	for _, f := range facts {
		arg, answer := "req", "`"+typeName(f, true)+"`: "+f.Returns
		if f.Observer {
			arg, answer = "ev", "observer: None"
		}
		fmt.Fprintf(&b, "| `%s` | `(self, %s: %s[, ctx])` | %s |\n", f.Name, arg, typeName(f, false), answer)
	}
	return b.String()
}

// typescriptHandlers is the TypeScript SDK README's handler table.
func typescriptHandlers(facts []hooks.Facts) string {
	var b strings.Builder
	b.WriteString("| Method | Hook | Payload | What an answer does |\n| --- | --- | --- | --- |\n")
	for _, f := range facts {
		answer := "`" + tsType(typeName(f, true)) + "`: " + f.Returns
		if f.Observer {
			answer = "observer: " + f.Fires
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | `%s` | %s |\n", camel(f.Name), f.Name, tsType(typeName(f, false)), answer)
	}
	return b.String()
}

// tsHooksPath holds the TypeScript SDK's Hooks interface: a plugin's
// optional method per hook.
const tsHooksPath = "plugins/typescript/src/generated/hooks.ts"

func tsHooks(facts []hooks.Facts) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s\n", header)
	b.WriteString(`// The hooks a TypeScript plugin may answer, one optional method per hook
// of the catalogue, named after it in camelCase.

import type { Answer, HookContext, Observed } from "../plugin";
import type * as T from "../types";

/** The hooks, each an optional method named after it. */
export interface Hooks {
`)
	for _, f := range facts {
		arg, answer := "req", "Answer<T."+tsType(typeName(f, true))+">"
		if f.Observer {
			arg, answer = "event", "Observed"
		}
		fmt.Fprintf(&b, "  /** %s: %s (%s). */\n", f.Name, f.Fires, f.Combine)
		fmt.Fprintf(&b, "  %s?(%s: T.%s, ctx: HookContext): %s;\n", camel(f.Name), arg, tsType(typeName(f, false)), answer)
	}
	b.WriteString("}\n")
	return []byte(b.String())
}

// typescriptInterface is the TypeScript SDK README's Hooks interface.
func typescriptInterface(facts []hooks.Facts) string {
	var b strings.Builder
	b.WriteString("```ts\ninterface Hooks {\n")
	for _, f := range facts {
		arg, answer := "req", "Answer<"+tsType(typeName(f, true))+">"
		if f.Observer {
			arg, answer = "event", "void | Promise<void>"
		}
		fmt.Fprintf(&b, "  %s?(%s: %s, ctx: HookContext): %s;\n", camel(f.Name), arg, tsType(typeName(f, false)), answer)
	}
	b.WriteString("}\n// A value, or nothing (undefined/null: no opinion), possibly in a promise.\ntype Answer<A> = A | null | undefined | void | Promise<A | null | undefined | void>;\n```\n")
	return b.String()
}
