package mcpgate

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/hookhost/hookhost/hooks"
)

// Defaults for ServerSpec fields left zero.
const (
	// DefaultTimeout bounds one tools/call; MCP tools do real work (a
	// search, a build), so it is longer than a hook's.
	DefaultTimeout = 60 * time.Second
	// DefaultMaxResultSize bounds one result, as a plugin's answer is.
	DefaultMaxResultSize = hooks.DefaultMaxResultSize
	// envelopeSlack is what a JSON-RPC message may carry around a result
	// of MaxResultSize bytes: the stream a server writes is cut past it.
	envelopeSlack = 64 << 10
)

// ServerSpec is one upstream MCP server, as [mcp.servers.NAME] writes it.
// Exactly one of Command (a local server over stdio) and URL (a remote one
// over Streamable HTTP) is set.
type ServerSpec struct {
	// Name is the server's key in the config, and its tools' namespace.
	Name string `toml:"-"`
	// Enabled false keeps the server out; absent means enabled.
	Enabled *bool `toml:"enabled"`

	// Command and Args start a local server; Dir is its working
	// directory ("" is the host's).
	Command string   `toml:"command"`
	Args    []string `toml:"args"`
	Dir     string   `toml:"dir"`
	// Env names the host environment variables passed to the server's
	// process; nothing else of the host's environment reaches it (not
	// even PATH: list it if the server needs it). Names only: secrets
	// never live in the file.
	Env []string `toml:"env"`

	// URL is a remote server's Streamable HTTP endpoint. Headers are sent
	// with every request; BearerTokenEnv names the host variable whose
	// value is sent as "Authorization: Bearer <value>".
	URL            string            `toml:"url"`
	Headers        map[string]string `toml:"headers"`
	BearerTokenEnv string            `toml:"bearer_token_env"`

	// Tools are globs (path.Match) over the server's own tool names; a
	// tool no glob matches is not offered. Empty offers every tool.
	Tools []string `toml:"tools"`
	// Timeout bounds one call; 0 means DefaultTimeout.
	Timeout time.Duration `toml:"timeout"`
	// MaxResultSize bounds, in bytes, one result; 0 means
	// DefaultMaxResultSize.
	MaxResultSize int `toml:"max_result_size"`
	// OfferToModel offers the server's tools to the model in hookhost chat
	// and on the gateway route, beside the host's own tools.
	OfferToModel bool `toml:"offer_to_model"`
}

// SpecError is a ServerSpec that cannot be used: the key at fault
// ("mcp.servers.NAME.KEY"), what is wrong with it and what to do. The
// config layer puts the file and line in front.
type SpecError struct {
	Key     string
	Problem string
	Fix     string
}

func (e *SpecError) Error() string {
	msg := e.Key + ": " + e.Problem
	if e.Fix != "" {
		msg += " (" + e.Fix + ")"
	}
	return msg
}

// serverNamePattern keeps a namespace that no tool name can fake: a server
// name holds no "__".
var serverNamePattern = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9-]*(_[a-zA-Z0-9-]+)*$`)

// headerNamePattern is an HTTP token.
var headerNamePattern = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// IsEnabled reports whether the server is to be used.
func (s ServerSpec) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// Stdio reports whether the server is a local process.
func (s ServerSpec) Stdio() bool { return s.Command != "" }

// CallTimeout is Timeout with its default.
func (s ServerSpec) CallTimeout() time.Duration {
	if s.Timeout <= 0 {
		return DefaultTimeout
	}
	return s.Timeout
}

// ResultLimit is MaxResultSize with its default.
func (s ServerSpec) ResultLimit() int {
	if s.MaxResultSize <= 0 {
		return DefaultMaxResultSize
	}
	return s.MaxResultSize
}

// Validate checks the spec on its own, without starting anything.
func (s ServerSpec) Validate() error {
	key := func(k string) string { return "mcp.servers." + s.Name + "." + k }
	bad := func(k, problem, fix string) error { return &SpecError{Key: key(k), Problem: problem, Fix: fix} }
	if !serverNamePattern.MatchString(s.Name) || len(s.Name) > 40 {
		return &SpecError{Key: "mcp.servers." + s.Name, Problem: fmt.Sprintf("server name %q cannot namespace tools", s.Name),
			Fix: "use letters, digits, '-' and single '_' (no \"__\"), at most 40 characters"}
	}
	switch {
	case s.Command == "" && s.URL == "":
		return &SpecError{Key: "mcp.servers." + s.Name, Problem: "neither command nor url is set",
			Fix: "set command (and args) for a local server, or url for a remote one"}
	case s.Command != "" && s.URL != "":
		return bad("url", "both command and url are set", "keep command for a local server or url for a remote one")
	}
	if s.Stdio() {
		if len(s.Headers) > 0 {
			return bad("headers", "headers apply to a url server only", "drop headers, or use url")
		}
		if s.BearerTokenEnv != "" {
			return bad("bearer_token_env", "a bearer token applies to a url server only", "drop bearer_token_env, or use url")
		}
		for _, n := range s.Env {
			if n == "" || strings.ContainsAny(n, "=\x00") {
				return bad("env", fmt.Sprintf("%q is not an environment variable name", n), "list names of the host's variables, such as \"GITHUB_TOKEN\"")
			}
		}
	} else {
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad("url", fmt.Sprintf("%q is not an http(s) URL", s.URL), "write the server's endpoint, such as \"https://example.com/mcp\"")
		}
		if len(s.Env) > 0 {
			return bad("env", "env applies to a command server only", "drop env, or use command")
		}
		if len(s.Args) > 0 {
			return bad("args", "args apply to a command server only", "drop args, or use command")
		}
		for h, v := range s.Headers {
			if !headerNamePattern.MatchString(h) || strings.ContainsAny(v, "\r\n\x00") {
				return bad("headers", fmt.Sprintf("header %q cannot be sent", h), "use a header name of letters, digits and '-', and a value on one line")
			}
			if s.BearerTokenEnv != "" && strings.EqualFold(h, "Authorization") {
				return bad("headers", "Authorization is set both here and by bearer_token_env", "keep one of them")
			}
		}
		if strings.ContainsAny(s.BearerTokenEnv, "=\x00") {
			return bad("bearer_token_env", fmt.Sprintf("%q is not an environment variable name", s.BearerTokenEnv), "name the host variable holding the token")
		}
	}
	for _, g := range s.Tools {
		if _, err := path.Match(g, ""); err != nil || g == "" {
			return bad("tools", fmt.Sprintf("%q is not a valid glob", g), "write globs such as \"read_*\"")
		}
	}
	if s.Timeout < 0 {
		return bad("timeout", fmt.Sprintf("negative duration %s", s.Timeout), "use a duration such as \"30s\"")
	}
	if s.MaxResultSize < 0 {
		return bad("max_result_size", fmt.Sprintf("negative size %d", s.MaxResultSize), "use a size in bytes, such as 4194304")
	}
	return nil
}

// allows reports whether the Tools allowlist lets the server's tool be
// offered.
func (s ServerSpec) allows(tool string) bool {
	if len(s.Tools) == 0 {
		return true
	}
	for _, g := range s.Tools {
		if ok, _ := path.Match(g, tool); ok {
			return true
		}
	}
	return false
}

// NamespacedName is the name a server's tool is offered under:
// "<server>__<tool>", with each '.' of the tool's name (which MCP allows
// and model providers do not) written "__". ok is false when the result is
// no name a provider accepts.
func NamespacedName(server, tool string) (name string, ok bool) {
	name = server + "__" + strings.ReplaceAll(tool, ".", "__")
	return name, tool != "" && hooks.ValidToolName(name)
}
