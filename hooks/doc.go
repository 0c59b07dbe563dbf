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
// them into the Python SDK
// (plugins/python/src/hookhost_plugin/_catalogue.py), the TypeScript SDK
// (plugins/typescript/src/generated/catalogue.ts), the README's catalogue
// table and PROTOCOL.md's list of stretches, and `make proto` regenerates
// the protobuf code of every language; Go reads the table (Catalogue,
// Name.Observer, Name.ToolScoped, CatalogueFacts). Generated files are
// never edited by hand, and `make check-generated` (part of `make test`)
// fails when one is stale.
//
// What the table cannot say is code and prose, written by hand. In the
// order to write it, with every name after the hook (transform_tool_result
// is TransformToolResult in Go and the protos, which write
// pre_api_request_mutable PreApiRequestMutable where Go writes
// PreAPIRequestMutable; transform_tool_result in Python;
// transformToolResult in TypeScript), so that one grep finds every place:
//
//  1. hooks/catalogue.go: the Name constant, the Funcs field and the
//     catalogue row; hooks/types.go: the payload and answer types;
//     hooks/validate.go too when the answer has rules.
//  2. hookbus/bus_hooks.go: the Bus method named after the hook, with its
//     combine rule.
//  3. Where it fires: conversation/session.go and internal/relay/run.go for
//     a hook of the conversation loop (both loops fire it), or
//     dispatch/pipeline.go for one of the tool pipeline.
//  4. The wire: the RPC and its messages in plugins/proto/v1/plugin.proto
//     (then `make proto`), and the row and conversions in
//     internal/wire/table.go and internal/wire/convert.go.
//  5. The Go SDK: the per-hook interface in plugins/sdk/sdk.go, its adapter
//     in plugins/sdk/adapt.go, and a Harness method in
//     plugins/sdk/plugintest/plugintest.go.
//  6. The Python SDK: the dataclasses in
//     plugins/python/src/hookhost_plugin/types.py, the HOOKS row in
//     plugins/python/src/hookhost_plugin/convert.py, a Harness method in
//     plugins/python/src/hookhost_plugin/testing.py.
//  7. The TypeScript SDK: the interfaces in plugins/typescript/src/types.ts,
//     the TABLE row in plugins/typescript/src/wire.ts, the answer's rules in
//     plugins/typescript/src/validate.ts, a harness method in
//     plugins/typescript/src/testing.ts.
//  8. The conformance suite: its expectations in
//     internal/conformance/conformance.go and internal/conformance/doc.go,
//     and a handler in each conformance plugin:
//     internal/conformance/goconform/main.go,
//     plugins/python/conform/conform.py,
//     plugins/typescript/conform/conform.ts, and the two written from the
//     documents alone, internal/conformance/fromdoc/python/conform.py and
//     internal/conformance/fromdoc/typescript/src/conform.ts.
//  9. The docs: the hook table and payload in PROTOCOL.md, the handler
//     tables of plugins/python/README.md and plugins/typescript/README.md.
//     README.md's catalogue table is generated.
//
// TestCatalogueHooksEverywhere (internal/gencatalogue) holds this list: it
// fails when a file named above is gone, and when a hook of the catalogue
// lacks its part in the Bus, the wire table, the protocol, an SDK, a
// conformance plugin, PROTOCOL.md, an SDK README or the README.
// internal/wire fails when a hook lacks its wire row or disagrees on being
// an observer; TestCatalogueFacts fails when a Funcs field is missing.
package hooks
