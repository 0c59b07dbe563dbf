// Package hooks is the plugin author's vocabulary: the hook names and the
// catalogue that states each one's facts, a typed payload and answer for
// every hook, the Plugin interface (and Funcs, which adapts plain
// functions to it), the manifest a plugin describes itself with, and the
// rules an answer must keep. Package hookbus fires the hooks across the
// enabled plugins; this package imports nothing of hookhost's, so that a
// plugin depends on it alone.
//
// What an answer may hold is one set of rules (validate.go, CheckAnswer:
// message roles and tool calls in patches, tool names and schemas in lists
// and patches, the shape of a pre_tool_call decision, and a bound on what
// one answer carries), the same for an in-process plugin and a remote one,
// whichever protocol carried it. An answer that breaks them is malformed
// (a MalformedError) and counts as no opinion.
//
// Tool results are JSON. A result a plugin provides or transforms whose
// content is not JSON is taken as plain text and carried as a JSON string
// holding it ("sunny" becomes "\"sunny\""), the same for in-process and
// remote plugins; it is not a failure. ToolResult.AsJSON is that rule; the
// tool-call pipeline applies it to each result before anyone downstream
// (post_tool_call, the next transform, the model) sees it.
//
// # Adding a hook
//
// The catalogue's facts (the hook's name, observer or not, tool-scoped or
// not, its place in a stretch, the README's fires/returns/combine texts)
// are stated once, in the table of catalogue.go. `make generate` writes
// them into the Python SDK (hookhost_plugin/_catalogue.py), the TypeScript
// SDK (src/generated/catalogue.ts), the README's catalogue table and
// PROTOCOL.md's list of stretches; Go reads the table (Catalogue,
// Name.Observer, Name.ToolScoped, LegalStretches, CatalogueFacts).
//
// What the table cannot say is code and prose, written by hand in 29
// files (a helper may be skipped where the SDK offers none for a hook):
//
//   - hooks (5): the Name constant (plugin.go), the payload and answer
//     types (types.go), the Funcs field (funcs.go), the catalogue row
//     (catalogue.go) and the Fire method with its combine rule
//     (bus_hooks.go; validate.go too if its answer has rules);
//   - where it fires (1): conversation/session.go, dispatch/pipeline.go or
//     gateway/relay/run.go;
//   - the wire (3): the RPC and its messages in plugins/proto/v1/plugin.proto
//     (then `make proto`), the row and conversions in internal/wire
//     (table.go, convert.go);
//   - the Go SDK (3): the per-hook interface (plugins/sdk/sdk.go), its
//     adapter (adapt.go) and a plugintest helper (plugintest/plugintest.go);
//   - the Python SDK (3): the dataclasses (types.py), the HOOKS row
//     (convert.py), a Harness helper (testing.py);
//   - the TypeScript SDK (4): the interfaces (src/types.ts), the TABLE row
//     (src/wire.ts), the answer's rules (src/validate.ts), a harness helper
//     (src/testing.ts);
//   - the conformance suite (7): its expectations (internal/conformance:
//     conformance.go, doc.go) and a handler in each conformance plugin
//     (goconform/main.go, plugins/python/conform/conform.py,
//     plugins/typescript/conform/conform.ts and the two built from
//     PROTOCOL.md under internal/conformance/fromdoc);
//   - docs (3): PROTOCOL.md's hook table and payload, the handler tables
//     of plugins/python/README.md and plugins/typescript/README.md.
//
// Tests hold part of it: internal/gencatalogue fails when a generated file
// is stale, when a hook lacks its row in convert.py or wire.ts, its handler
// in a Python or TypeScript conformance plugin, or its row in PROTOCOL.md or
// an SDK README, and when PROTOCOL.md names other observers; internal/wire
// fails when a hook lacks its wire row or disagrees on being an observer;
// the conformance suite fails when a conformance plugin does not serve
// every hook; TestCatalogueFacts fails when a Funcs field is missing.
package hooks
