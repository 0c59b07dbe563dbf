// Package agenttest runs the agent CLIs Claude Code, Codex and opencode,
// pinned in package-lock.json, headless against a real `hookhost serve` on
// the gateway route, the way their users point them at it: Claude Code
// through ANTHROPIC_BASE_URL, Codex through a custom model provider
// speaking the Responses API, opencode through an OpenAI-compatible
// provider. Each CLI gets a temporary HOME and working directory, with
// telemetry, update checks and model catalogues turned off, so it reaches
// no host but hookhost.
//
// hookhost runs a guard plugin (examples/guard) that blocks any tool call
// whose arguments hold `rm -rf`, and the lookup plugin of
// gateway/clienttest, which owns the tool lookup__weather. Upstream is a
// fake provider whose replies follow the conversation, so that the side
// requests a CLI makes (titles, warm-ups) do not upset the script. Three
// scenarios per CLI, on an upstream speaking the CLI's protocol and on one
// speaking another:
//
//   - plugin-tool: the model calls lookup__weather; hookhost runs it and
//     the CLI prints an answer quoting its result, never seeing the call;
//   - own-tool: the model asks the CLI's shell tool to cat a file holding
//     a random nonce; the CLI runs it and sends the result back, and the
//     final answer quotes the nonce;
//   - guard: the model asks the shell tool for `rm -rf canary.txt`; the
//     guard blocks it, the model gets the block message as the tool's
//     error result, the CLI is never handed the call, and the canary
//     survives.
//
// With the same protocol in and out, feature-headers checks that every
// request upstream carried the provider feature headers the CLI sent
// (Claude Code's anthropic-beta), since the body fields they enable are
// passed on too.
//
// These tests need the CLIs (`make agents` installs them with npm ci and
// runs them); they run only when HOOKHOST_AGENTS=1 is set, and then fail,
// never skip, when a CLI is missing. With HOOKHOST_AGENTS_RECORD=1 they
// write what the CLIs sent, sanitised, under testdata/<cli>/.
//
// TestReplay, which needs no npm and runs in `make test`, sends those
// recorded requests to hookhost serve on the README's demo config and in
// front of a fake upstream of each protocol, and checks each is accepted
// and answered in the shape the CLI's protocol requires: the regression
// guard for the gateway's fronts.
package agenttest
