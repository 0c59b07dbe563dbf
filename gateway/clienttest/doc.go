// Package clienttest tests `hookhost serve` through the official npm
// clients, openai and @anthropic-ai/sdk, pinned in package-lock.json: a real
// hookhost process in front of the offline provider or of fake OpenAI and
// Anthropic servers, a real plugin process, and each SDK's own helpers
// accumulating the answers, whose raw bytes are checked as well against
// what those helpers rely on.
//
// The package holds only tests. They need `npm ci` in this directory
// (.ci/run does it); without node_modules they skip, or fail when CI is
// set.
package clienttest
