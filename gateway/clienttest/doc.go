// Package clienttest tests `hookhost serve` through real clients: a real
// hookhost process in front of the offline provider or of fake OpenAI
// and Anthropic servers, a real plugin process, and each client's own
// helpers accumulating the answers.
//
// Two suites share the fakes and the plugin. The scenario tests
// (scenarios_test.go) drive the official npm clients, openai and
// @anthropic-ai/sdk, one call at a time through client.mjs against
// scripted upstreams, and check the raw bytes as well against what the
// SDKs' helpers rely on. The real-client suite (realclients_test.go)
// runs whole conversations through every client people build agents with
// — the official SDKs, the Vercel AI SDK, LangChain and LangGraph, the
// OpenAI Agents SDK (all through agents.mjs, in one node process per
// upstream) and the Go SDKs openai-go and anthropic-sdk-go (in this
// process) — each continuing its conversation its own default way,
// against fake upstreams that answer like a model (fakemodel_test.go),
// and prints a table of what passes.
//
// The package holds only tests. They need `npm ci` in this directory
// (`make clients` and .ci/run do it); without node_modules they skip, or
// fail when CI is set.
package clienttest
