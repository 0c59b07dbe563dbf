package config

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/hookhost/hookhost/internal/mcpgate"
)

// MCP is the [mcp] table: the MCP servers hookhost fronts (`hookhost mcp
// serve`, /mcp on `hookhost serve`) and whose tools it can offer.
type MCP struct {
	// ExposeNative offers the native tools (read_file) to MCP clients too.
	ExposeNative bool `toml:"expose_native"`
	// Servers holds every [mcp.servers.<name>] table, enabled or not; nil
	// when there are none.
	Servers map[string]MCPServer `toml:"servers" rule:"mcp_servers"`
}

// MCPServer is one [mcp.servers.<name>] table. Its fields are those of
// the MCP gateway's server spec, which states the rules that span keys
// (command or url, which keys go with which); see Spec. Relative paths
// are resolved: Dir against the config file's directory (the directory
// itself when left out, as plugins run in it), and Command when it names
// a path (holds a "/") rather than a program to look up in PATH.
type MCPServer struct {
	// Name is the server's name, its key in [mcp.servers].
	Name    string `toml:"-"`
	Enabled *bool  `toml:"enabled" rule:"switch"`

	Command string   `toml:"command"`
	Args    []string `toml:"args" rule:"strings"`
	Dir     string   `toml:"dir"`
	Env     []string `toml:"env" rule:"env"`

	URL            string            `toml:"url"`
	Headers        map[string]string `toml:"headers" rule:"string_map"`
	BearerTokenEnv string            `toml:"bearer_token_env" rule:"api_key_env"`

	Tools         []string      `toml:"tools" rule:"strings"`
	Timeout       time.Duration `toml:"timeout"`
	MaxResultSize int           `toml:"max_result_size" rule:"max_result_size"`
	OfferToModel  bool          `toml:"offer_to_model"`

	// Source is where the table is written.
	Source Source `toml:"-"`
}

// IsEnabled reports whether the server is to be started: enabled is
// absent or true.
func (s MCPServer) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// Spec is the server as the MCP gateway takes it.
func (s MCPServer) Spec() mcpgate.ServerSpec {
	return mcpgate.ServerSpec{
		Name: s.Name, Enabled: s.Enabled,
		Command: s.Command, Args: s.Args, Dir: s.Dir, Env: s.Env,
		URL: s.URL, Headers: s.Headers, BearerTokenEnv: s.BearerTokenEnv,
		Tools: s.Tools, Timeout: s.Timeout, MaxResultSize: s.MaxResultSize, OfferToModel: s.OfferToModel,
	}
}

// EnabledServers lists the enabled servers, by name.
func (m MCP) EnabledServers() []MCPServer {
	var out []MCPServer
	for _, name := range slices.Sorted(maps.Keys(m.Servers)) {
		if s := m.Servers[name]; s.IsEnabled() {
			out = append(out, s)
		}
	}
	return out
}

// mcpServers decodes [mcp.servers]: each table is decoded key by key, then
// checked as a whole by the gateway's own rules, whose complaint is placed
// at the key it names.
func (d *decoder) mcpServers(key toml.Key, v any, dst reflect.Value) bool {
	m, err := asTable(key, v)
	if !d.report(key, err) {
		return false
	}
	servers := map[string]MCPServer{}
	ok := true
	for _, name := range slices.Sorted(maps.Keys(m)) {
		nk := join(key, toml.Key{name})
		s := MCPServer{Name: name}
		if _, _, clean := d.decodeTable(nk, m[name], &s); !clean {
			ok = false
			continue
		}
		if s.Command != "" && strings.Contains(s.Command, "/") {
			s.Command = resolve(d.dir, s.Command)
		}
		if s.Dir == "" {
			s.Dir = d.dir
		} else {
			s.Dir = resolve(d.dir, s.Dir)
		}
		if err := s.Spec().Validate(); err != nil {
			d.specError(nk, name, err)
			ok = false
			continue
		}
		s.Source = Source{File: d.file, Line: d.pos.line(nk, -1)}
		servers[name] = s
	}
	if len(servers) > 0 {
		dst.Set(reflect.ValueOf(servers))
	}
	return ok
}

// specError places the gateway's complaint about server name at the key
// it names, below nk ([mcp.servers.<name>]).
func (d *decoder) specError(nk toml.Key, name string, err error) {
	var se *mcpgate.SpecError
	if !errors.As(err, &se) {
		d.report(nk, fault("%v", err))
		return
	}
	at := nk
	if sub, found := strings.CutPrefix(se.Key, "mcp.servers."+name+"."); found {
		at = join(nk, toml.Key{sub})
	}
	msg := se.Problem
	if se.Fix != "" {
		msg += " (" + se.Fix + ")"
	}
	d.report(at, fault("%s", msg))
}
