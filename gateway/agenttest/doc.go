// Package agenttest runs the agent CLIs Claude Code, Codex and opencode
// headless against a real `hookhost serve`, pinned in package-lock.json.
package agenttest
