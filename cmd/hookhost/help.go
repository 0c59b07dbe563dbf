package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// commandHelp is what `hookhost <command> --help` prints around the
// command's flags.
type commandHelp struct {
	usage    string // the synopsis line, after "usage: "
	about    string // what the command does
	examples string // command lines, one a line, each with a comment
	env      string // environment variables that matter, "" for none
}

// configFlagUsage is the -c flag's description in every command.
const configFlagUsage = "config `file`; if the default is missing, the built-in defaults apply (offline model, no plugins)"

const gatewayEnvHelp = `  HOOKHOST_USE_GATEWAY  1 or true: gateway route (plugin tools offered, hooks
                        fire); 0 or false: bypass route; unset: routing.gateway
                        in the config, false by default. Anything else is an
                        error (exit 2).
`

var helps = map[string]commandHelp{
	"chat": {
		usage: "hookhost chat [-c file] [-v] [-stream] [message]",
		about: `Runs one conversation turn on the configured model and prints the answer on
stdout. Without a message it reads messages line by line (a REPL): /exit,
Ctrl-D or Ctrl-C at the prompt ends it, Ctrl-C during a turn cancels that
turn only. The start line on stderr says the route and where it was decided,
the model and the plugins.`,
		examples: `  hookhost chat "what time is it"                  one turn, answer on stdout
  hookhost chat -v -c examples/demo.toml "what's my burn?"
                                                   with Kora, tracing each step
  HOOKHOST_USE_GATEWAY=1 hookhost chat             a REPL on the gateway route`,
		env: gatewayEnvHelp,
	},
	"serve": {
		usage: "hookhost serve [-c file] [-listen host:port] [-v]",
		about: `Serves the OpenAI (Chat Completions, Responses) and Anthropic (Messages)
APIs over HTTP, through the same host and plugins as chat: point an SDK's base
URL at it. It runs until SIGINT or SIGTERM, then drains requests in flight for
up to server.drain_timeout; a second signal stops it at once. With
[mcp.servers.NAME] in the config it also serves MCP at /mcp (Streamable HTTP,
the same inbound keys), as hookhost mcp serve does on stdio.`,
		examples: `  hookhost serve                                   on server.listen (127.0.0.1:8080)
  hookhost serve -c examples/demo.toml -listen 127.0.0.1:9090`,
		env: gatewayEnvHelp + `  the variable server.api_key_env names holds the keys clients must present
`,
	},
	"plugins": {
		usage: "hookhost plugins list|check [-c file]",
		about: `Inspects the plugins enabled in the config (plugins.enabled):
  list    starts each plugin once and shows what it declares: name, version,
          protocol, path, hooks, tools and tool matchers
  check   starts each plugin, verifies checksum, handshake, manifest and
          health, looks for problems that cost at run time (warnings), and
          stops it again; exits 1 if any plugin fails
See hookhost plugins list --help and hookhost plugins check --help.`,
		examples: `  hookhost plugins list -c examples/demo.toml
  hookhost plugins check -c examples/demo.toml`,
		env: gatewayEnvHelp,
	},
	"plugins list": {
		usage: "hookhost plugins list [-c file]",
		about: `Starts each enabled plugin once, without the probes of check, and prints a
table of what it declares: name, version, protocol, path, hooks, tools,
tool matchers and config keys ("(none)": it takes no config; "(any)": it
did not say, and its config is passed on unchecked). A plugin that does not start is listed with the reason; the
command then exits 1.`,
		examples: `  hookhost plugins list                            plugins of ./hookhost.toml
  hookhost plugins list -c examples/demo.toml`,
		env: gatewayEnvHelp + `  HOOKHOST_REATTACH_PLUGINS  attach to plugins already running (debugging)
                             instead of starting them
`,
	},
	"plugins check": {
		usage: "hookhost plugins check [-c file]",
		about: `Starts each enabled plugin, verifies its checksum, handshake, manifest and
gRPC health, looks for what a start does not notice (printed as warnings,
which do not fail the check) and stops it again. Exits 1 if any plugin
fails, so it can gate a deployment.`,
		examples: `  hookhost plugins check                           plugins of ./hookhost.toml
  hookhost plugins check -c examples/demo.toml && echo ready`,
		env: gatewayEnvHelp + `  HOOKHOST_REATTACH_PLUGINS  attach to plugins already running (debugging)
                             instead of starting them
`,
	},
	"mcp": {
		usage: "hookhost mcp serve|list|check [-c file]",
		about: `Fronts the MCP servers of the config ([mcp.servers.NAME]):
  serve   an MCP server on stdio for an agent (Claude Code, Codex, Cursor)
          offering every configured server's tools as NAME__tool; each call
          runs through the plugins' tool hooks
  list    starts each server once and shows its transport, state, protocol
          version and tools
  check   starts each server, lists its tools and stops it; exits 1 if any
          server fails
See hookhost mcp serve --help, hookhost mcp list --help, hookhost mcp check --help.`,
		examples: `  hookhost mcp list -c hookhost.toml
  hookhost mcp serve -c hookhost.toml`,
	},
	"mcp serve": {
		usage: "hookhost mcp serve [-c file] [-v]",
		about: `Serves MCP over stdin and stdout for one client, until it disconnects or
SIGINT/SIGTERM. Its tools are those of every enabled [mcp.servers.NAME]
(named NAME__tool), the plugins' tools and, with mcp.expose_native, the native
tools. Every tools/call runs the tool pipeline: pre_tool_call may block it
(an error result with the block message) or change its arguments, a plugin
may answer it, post_tool_call sees it and transform_tool_result may rewrite
the result. tools/list goes through pre_tool_list_finalized. Resources and
prompts are not proxied. stdout carries MCP messages only; logs and the
plugins' and servers' stderr go to stderr. A server that does not start is
reported on stderr and left out.`,
		examples: `  hookhost mcp serve -c hookhost.toml
  claude --mcp-config guarded.json                 guarded.json runs hookhost mcp serve`,
		env: `  the variables an [mcp.servers.NAME] table lists in env and bearer_token_env
`,
	},
	"mcp list": {
		usage: "hookhost mcp list [-c file]",
		about: `Starts each enabled MCP server once and prints its name, transport (stdio or
http), state, negotiated protocol version, whether its tools are offered to
the model (OFFERED: offer_to_model) and its tools (as NAME__tool). A server
that does not start is listed as FAILED with the reason; the command then
exits 1.`,
		examples: `  hookhost mcp list -c hookhost.toml`,
	},
	"mcp check": {
		usage: "hookhost mcp check [-c file]",
		about: `Starts each enabled MCP server, negotiates the protocol, lists its tools and
stops it again. Exits 1 if any server fails, with the reason, so it can gate a
deployment.`,
		examples: `  hookhost mcp check -c hookhost.toml && echo ready`,
	},
	"replay": {
		usage: "hookhost replay LOG -plugin NAME [-c file] [-v]",
		about: `Starts plugin NAME as chat and serve start it (its [plugins.entries.NAME]
table, config included, applies) and sends it again every call of it that
the decision log LOG recorded ([trace] file), in order, each as the hook it
was. It prints each call whose outcome or answer differs now: the hook, the
request id, the log's line, what was recorded and what came now. Use it to
check a plugin's new version or config against real traffic before
deploying it. Latency and error texts are not compared. Recorded inputs are
redacted, so a call whose secrets were blanked is replayed blanked.
Exits 0 when every answer is as recorded, 1 when any differs, 2 when LOG
cannot be read (the message names the line), holds no call of NAME, or the
plugin is not in the config or does not start.`,
		examples: `  hookhost replay decisions.jsonl -plugin guard     against ./hookhost.toml
  hookhost replay decisions.jsonl -plugin guard -c staging.toml
                                                   the same calls, a new deny list`,
	},
	"version": {
		usage:    "hookhost version",
		about:    `Prints hookhost's version and the plugin protocol versions it speaks.`,
		examples: `  hookhost version`,
	},
}

// errHelpShown ends a command whose help was asked for and printed.
var errHelpShown = errors.New("help shown")

// newFlagSet makes the flag set of command name. It prints nothing:
// parseError reports what Parse returns.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseError turns what fs.Parse returned into the command's result: its
// help on stdout for -h and --help, a short usage error otherwise.
func parseError(fs *flag.FlagSet, stdout io.Writer, err error) error {
	if errors.Is(err, flag.ErrHelp) {
		printHelp(stdout, fs.Name(), fs)
		return errHelpShown
	}
	return usageErr("%s: %v (see hookhost %s --help)", fs.Name(), err, fs.Name())
}

// printHelp writes the help of command name, with the flags of fs when it
// has any.
func printHelp(w io.Writer, name string, fs *flag.FlagSet) {
	h := helps[name]
	fmt.Fprintf(w, "usage: %s\n\n%s\n", h.usage, h.about)
	if fs != nil {
		var flags strings.Builder
		fs.SetOutput(&flags)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
		if flags.Len() > 0 {
			fmt.Fprintf(w, "\nflags:\n%s", flags.String())
		}
	}
	if h.examples != "" {
		fmt.Fprintf(w, "\nexamples:\n%s\n", h.examples)
	}
	if h.env != "" {
		fmt.Fprintf(w, "\nenvironment:\n%s", h.env)
	}
}
