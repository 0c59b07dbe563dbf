// Command hookhost runs an LLM agent whose conversation loop fires hooks
// into out-of-process plugins.
//
//	hookhost chat [-c file] [-v] [-stream] [message]   one turn, or a REPL without a message
//	hookhost serve [-c file] [-listen host:port] [-v]  an OpenAI- and Anthropic-compatible HTTP gateway
//	hookhost plugins list [-c file]                    what each enabled plugin declares
//	hookhost plugins check [-c file]                   start, verify and stop every enabled plugin
//	hookhost mcp serve [-c file] [-v]                  an MCP server over stdio guarding the configured MCP servers
//	hookhost mcp list|check [-c file]                  each configured MCP server's state and tools
//	hookhost replay LOG -plugin NAME [-c file]         re-send a plugin's recorded calls, show what changed
//	hookhost version
//	hookhost help [command]
//
// Every command prints its help, flags, examples and the environment
// variables it reads with --help (or -h, or hookhost help <command>).
// Without -c, hookhost.toml is read if it exists. HOOKHOST_USE_GATEWAY
// (1/0/true/false) overrides routing.gateway.
//
// Exit codes: 0 success, 1 runtime failure (replay: an answer differs), 2
// usage or config error.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/config"

	// The now tool takes IANA zone names; embed the database so it works
	// on machines without one.
	_ "time/tzdata"
)

const usage = `hookhost runs an LLM agent whose conversation loop fires hooks into plugins.

usage:
  hookhost chat [-c file] [-v] [-stream] [message]
                                             one turn, or a line-by-line REPL without a message;
                                             -v traces each step, -stream prints text as it arrives
  hookhost serve [-c file] [-listen host:port] [-v]
                                             serve the OpenAI and Anthropic APIs on server.listen
                                             (127.0.0.1:8080); point an SDK's base URL at it
  hookhost plugins list [-c file]            name, version, protocol, path, hooks, tools, matchers, config keys
  hookhost plugins check [-c file]           start each enabled plugin and verify it
  hookhost mcp serve [-c file] [-v]          an MCP server on stdio in front of [mcp.servers], every
                                             tool call through the plugins' hooks
  hookhost mcp list [-c file]                each MCP server's transport, state, protocol and tools
  hookhost mcp check [-c file]               start each MCP server and verify it
  hookhost replay LOG -plugin NAME [-c file] re-send a plugin's calls from a decision log to it and
                                             show where its answers now differ
  hookhost version                           version and plugin protocols
  hookhost help [command]                    this text, or a command's help (also: command --help)

Without -c, hookhost.toml is read if it exists, else the built-in defaults
apply (offline model, no plugins). The route is bypass unless
routing.gateway is true; HOOKHOST_USE_GATEWAY=1|0 overrides it.

examples:
  hookhost chat "what time is it"
  hookhost chat --help
  hookhost plugins check -c examples/demo.toml

Exit codes: 0 success, 1 runtime failure, 2 usage or config error.
`

// exitError carries the exit code a failure should produce.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func usageErr(format string, a ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, a...)}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "chat":
		err = chat(args[1:], stdin, stdout, stderr)
	case "serve":
		err = serve(args[1:], stdout, stderr)
	case "plugins":
		err = pluginsCmd(args[1:], stdout, stderr)
	case "mcp":
		err = mcpCmd(args[1:], stdin, stdout, stderr)
	case "replay":
		err = replayCmd(args[1:], stdout, stderr)
	case "version", "-version", "--version":
		err = versionCmd(args[1:], stdout)
	case "help", "-h", "-help", "--help":
		if args[0] == "help" && len(args) > 1 {
			// hookhost help plugins check is hookhost plugins check --help.
			return run(append(slices.Clone(args[1:]), "--help"), stdin, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
	default:
		err = usageErr("unknown command %q (see hookhost --help)", args[0])
	}
	if err == nil || errors.Is(err, errHelpShown) {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		fmt.Fprintln(stderr, "hookhost:", err)
		return ee.code
	}
	fmt.Fprintln(stderr, "hookhost:", err)
	return 1
}

// invocation is a parsed command line: its config, where the config came
// from, and the words that are not flags.
type invocation struct {
	cfg      *config.Config
	fromFile bool
	words    []string
	// decisions shows each plugin hook call (-v); nil: not shown.
	decisions hclog.Logger
}

// parseWithConfig adds the -c flag to fs, parses args and loads the config.
// Flags may come after the message too (chat "hi" -v). Without -c,
// hookhost.toml is read if it exists and the defaults apply if not; a file
// named with -c must exist.
func parseWithConfig(fs *flag.FlagSet, args []string, stdout io.Writer) (*invocation, error) {
	path := fs.String("c", defaultConfig, configFlagUsage)
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, parseError(fs, stdout, err)
		}
		if fs.NArg() == 0 {
			break
		}
		words = append(words, fs.Arg(0))
		args = fs.Args()[1:]
	}
	explicit := false
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "c" })
	cfg, fromFile, err := loadConfig(*path, explicit)
	if err != nil {
		return nil, err
	}
	return &invocation{cfg: cfg, fromFile: fromFile, words: words}, nil
}

// versionCmd prints the version; it takes no arguments but --help.
func versionCmd(args []string, stdout io.Writer) error {
	fs := newFlagSet("version")
	if err := fs.Parse(args); err != nil {
		return parseError(fs, stdout, err)
	}
	if fs.NArg() > 0 {
		return usageErr("version takes no arguments, got %q (see hookhost version --help)", strings.Join(fs.Args(), " "))
	}
	fmt.Fprintln(stdout, versionLine(version, commit, buildInfo()))
	return nil
}
