// Package config loads hookhost's TOML configuration: which model provider
// to use, whether traffic is routed through the plugin gateway, how long a
// conversation may iterate, where the native read_file tool may read,
// which plugins to launch with which limits, how `hookhost serve`
// listens and what it bounds, and which MCP servers hookhost fronts.
//
// Load and Parse return fully resolved settings: defaults are filled in,
// relative paths are made absolute against the config file's directory and
// every enabled plugin has an entry. A file that cannot be trusted is
// rejected as a whole; each problem is reported as an *Error naming the
// file, the line and the full dotted key, with a hint on how to fix it.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	// The offline model is the default provider, so every program that
	// reads a config knows its name; other providers are known to the
	// programs that link them (hookhost links all of them).
	"github.com/hookhost/hookhost/llm/offline"
)

// GatewayEnv is the environment variable that overrides routing.gateway, so
// that traffic can be moved onto plugins (and back) without editing the file
// during a staged rollout.
const GatewayEnv = "HOOKHOST_USE_GATEWAY"

// Defaults for keys that are absent from the file.
const (
	defaultProvider      = "offline"
	defaultModel         = offline.SmallModel
	defaultMaxIterations = 8
	defaultReadRoot      = "."
	defaultPluginDir     = "bin/plugins"
	defaultTimeout       = 2 * time.Second
	defaultToolTimeout   = 10 * time.Second

	defaultLLMTimeout         = 60 * time.Second
	defaultCallTimeout        = 10 * time.Minute
	defaultMaxRetries         = 2
	maxRetriesLimit           = 10
	defaultAnthropicMaxTokens = 1024
	apiChat                   = "chat"
	apiResponses              = "responses"
)

// exampleClientModel is the model name messages about server.models and
// server.model_aliases suggest.
const exampleClientModel = "gpt-4.1-mini"

// Config is a loaded, validated and resolved configuration.
type Config struct {
	LLM          LLM          `toml:"llm"`
	Routing      Routing      `toml:"routing"`
	Conversation Conversation `toml:"conversation"`
	Tools        Tools        `toml:"tools"`
	Plugins      Plugins      `toml:"plugins"`
	Server       Server       `toml:"server"`
	State        State        `toml:"state"`
	MCP          MCP          `toml:"mcp"`
	Trace        Trace        `toml:"trace"`

	// Dir is the absolute directory of the config file (the working
	// directory for Default and for Parse called with dir ""). Relative
	// paths in the file have already been resolved against it. Plugin
	// processes run in it, so that relative paths in their own config
	// tables mean the same.
	Dir string

	file string     // the name given to Load or Parse; "" for Default
	pos  *positions // where each key is written; nil for Default
}

// Where returns "FILE:LINE" for a dotted key written in the file (such as
// "server.listen"), or "" when the file does not set it and the default
// applies.
func (c *Config) Where(key string) string {
	if c == nil || c.pos == nil {
		return ""
	}
	off, ok := c.pos.keys[key]
	if !ok {
		return ""
	}
	line := c.pos.lineOf(off)
	if c.file == "" {
		return fmt.Sprintf("line %d", line)
	}
	return fmt.Sprintf("%s:%d", c.file, line)
}

// LLM selects the model provider, from the [llm] table. Defaults that
// depend on the provider are filled in: BaseURL, APIKeyEnv, API (openai
// only) and MaxTokens (anthropic only). The offline provider ignores every
// network setting.
type LLM struct {
	Provider string `toml:"provider" rule:"provider"` // "offline", "openai" or "anthropic"
	// Model is the model every conversation starts with; when the file
	// leaves it out it is Tiers.Small, or "offline-small" for offline.
	Model string `toml:"model" rule:"model"`
	// API is the OpenAI API to speak, "chat" (Chat Completions, default)
	// or "responses"; "" for other providers.
	API string `toml:"api" rule:"api"`
	// BaseURL is the API root without the endpoint path and without a
	// trailing slash: https://api.openai.com/v1 and
	// https://api.anthropic.com by default; "" for offline.
	BaseURL string `toml:"base_url" rule:"base_url"`
	// APIKeyEnv names the environment variable holding the API key:
	// OPENAI_API_KEY or ANTHROPIC_API_KEY by default. "" (for offline, or
	// written explicitly for a local server) means no key is sent.
	APIKeyEnv string `toml:"api_key_env" rule:"api_key_env"`
	// Headers are extra HTTP headers for every request; nil when none.
	Headers map[string]string `toml:"headers" rule:"headers"`
	// MaxTokens caps each response's output; 0 leaves it to the provider.
	// Anthropic requires one and defaults to 1024.
	MaxTokens int `toml:"max_tokens" rule:"max_tokens"`
	// Temperature is the sampling temperature; nil means the model's own
	// default.
	Temperature *float64 `toml:"temperature" rule:"temperature"`
	// Timeout bounds each HTTP attempt: a whole response, or for a stream
	// the wait for each next event (keep-alives do not count).
	Timeout time.Duration `toml:"timeout"`
	// CallTimeout bounds one whole model call, retries included.
	CallTimeout time.Duration `toml:"call_timeout"`
	// MaxRetries is how many times a failed call is retried.
	MaxRetries int `toml:"max_retries" rule:"max_retries"`
	// Tiers names a small and a strong model of the same provider, for a
	// router plugin that escalates from one to the other.
	Tiers Tiers `toml:"tiers"`
}

// Tiers is the [llm.tiers] table. hookhost itself only uses Small as the
// default model; a router plugin (Kora's router.small_models and
// router.strong_model) must name the same models to escalate between them.
type Tiers struct {
	Small  string `toml:"small" rule:"tier"` // "" when not set
	Strong string `toml:"strong" rule:"tier"`
}

// Routing is the [routing] table.
type Routing struct {
	// Gateway routes traffic through the hook-enabled path. Use
	// ResolveGateway rather than reading it directly: GatewayEnv overrides it.
	Gateway bool `toml:"gateway"`
}

// Conversation is the [conversation] table.
type Conversation struct {
	MaxIterations int    `toml:"max_iterations" rule:"max_iterations"` // model calls allowed per user message; at least 1
	System        string `toml:"system"`                               // system prompt; "" for none
}

// Tools is the [tools] table.
type Tools struct {
	// ReadRoot is the absolute directory the native read_file tool is
	// confined to.
	ReadRoot string `toml:"read_root" rule:"read_root"`
}

// Plugins is the [plugins] table.
type Plugins struct {
	// Enabled lists the plugins to launch, highest priority first; nil
	// when none are.
	Enabled []string `toml:"enabled" rule:"enabled"`
	// Dir is the absolute directory holding plugin binaries.
	Dir string `toml:"dir" rule:"plugin_dir"`
	// Entries holds every [plugins.entries.<name>] table plus a default
	// entry for each enabled plugin that has no table of its own.
	Entries map[string]PluginEntry `toml:"entries" rule:"entries"`
}

// PluginEntry is one plugin's [plugins.entries.<name>] table, with defaults
// filled in.
type PluginEntry struct {
	// Path is the absolute path of the plugin binary: the path key
	// (relative to the config file's directory, like every path in the
	// file), or <Plugins.Dir>/<name> when it is absent or "".
	Path string `toml:"path"`
	// SHA256 is the expected lower-case hex digest of the binary; "" means
	// the binary is not pinned.
	SHA256 string `toml:"sha256" rule:"sha256"`
	// Timeout bounds each hook call to the plugin.
	Timeout time.Duration `toml:"timeout"`
	// ToolTimeout bounds pre_tool_call_can_provide_result, which may run a
	// whole tool and so gets a longer deadline than other hooks.
	ToolTimeout time.Duration `toml:"tool_timeout"`
	// FailClosed turns the plugin's own pre_tool_call failures into a block
	// instead of a fall-through to native dispatch.
	FailClosed bool `toml:"fail_closed"`
	// AllowToolOverride lets the plugin declare tools outside its own
	// "<name>__*" namespace, shadowing native tools.
	AllowToolOverride bool `toml:"allow_tool_override"`
	// Env names the host environment variables passed to the plugin
	// process; nothing else leaks into its environment. Names only: secrets
	// never live in the file.
	Env []string `toml:"env" rule:"env"`
	// Config is the free-form [plugins.entries.<name>.config] table as a
	// JSON object, "{}" when absent.
	Config json.RawMessage `toml:"config" rule:"plugin_config"`
	// MaxResultSize and MaxRequestSize bound, in bytes, one answer from
	// the plugin and one call to it; 0 means the defaults (4 MiB and
	// 16 MiB). See internal/wire.Settings.
	MaxResultSize  int `toml:"max_result_size" rule:"max_result_size"`
	MaxRequestSize int `toml:"max_request_size" rule:"max_request_size"`
	// Protocol pins the plugin protocol version offered to the plugin, 1
	// or 2; 0 offers every version the host speaks, and the highest the
	// plugin also speaks is used.
	Protocol int `toml:"protocol" rule:"protocol"`
	// Dir is the working directory of the plugin's process: the config
	// file's directory (Config.Dir), so that a relative path in the
	// plugin's own config table, such as Kora's state_dir, means what it
	// says in the file. "" runs the plugin in the host's working directory.
	Dir string
	// Reattach, when set, makes the host attach to the plugin already
	// running there (started by hand, e.g. under a debugger) instead of
	// launching Path; ReattachEnv does the same from the environment.
	Reattach *Reattach `toml:"reattach" rule:"reattach"`
	// Source is where the entry is written, so that problems found only
	// once the plugin runs (a config key it does not take) can still be
	// reported with a file and line; the zero value for a default entry.
	Source Source
}

// Source locates a plugin's entry in its config file.
type Source struct {
	File string // file name as given to Load or Parse; may be ""
	// Line is the line of the [plugins.entries.<name>] table, ConfigLine
	// that of its config table; 0 when not written.
	Line       int
	ConfigLine int
	// ConfigKeys is the line of each top-level key of the config table.
	ConfigKeys map[string]int
}

// At formats a position as "FILE:LINE", "FILE", "line LINE" or "" (when
// nothing is known), the way Error does.
func (s Source) At(line int) string {
	switch {
	case s.File != "" && line > 0:
		return fmt.Sprintf("%s:%d", s.File, line)
	case s.File != "":
		return s.File
	case line > 0:
		return fmt.Sprintf("line %d", line)
	}
	return ""
}

// Error is one problem in a config file. Parse and Load return either a
// single *Error or several joined with errors.Join, in file order; use
// errors.As to reach the first one.
type Error struct {
	File string // file name as given to Load or Parse; may be ""
	Line int    // 1-based line; 0 when no single line is to blame
	Key  string // full dotted key, e.g. "plugins.entries.kora.timeout"
	Msg  string // what is wrong and how to fix it
}

// Error formats the problem as "config: FILE:LINE: KEY: MSG", leaving out
// the parts that are unknown.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		fmt.Fprintf(&b, "%s: ", e.File)
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Default returns the configuration used when the file is empty, with paths
// resolved against the working directory.
func Default() *Config {
	return newDefault(absDir(""))
}

func newDefault(dir string) *Config {
	return &Config{
		LLM:          LLM{Provider: defaultProvider, Model: defaultModel, Timeout: defaultLLMTimeout, CallTimeout: defaultCallTimeout, MaxRetries: defaultMaxRetries},
		Conversation: Conversation{MaxIterations: defaultMaxIterations},
		Tools:        Tools{ReadRoot: resolve(dir, defaultReadRoot)},
		Plugins: Plugins{
			Dir:     resolve(dir, defaultPluginDir),
			Entries: map[string]PluginEntry{},
		},
		Server: defaultServer(),
		State:  defaultState(),
		Trace:  defaultTrace(),
		Dir:    dir,
	}
}

// Load reads and parses the config file at path. Relative paths inside it
// are resolved against the file's directory, so the result does not depend
// on the directory hookhost is started from. Unlike Parse, it also checks
// what only this machine can answer: that tools.read_root is an existing
// directory, and that every [plugins.entries.<name>] table is for a plugin
// that is enabled or installed (its path, or <plugins.dir>/<name>, exists),
// so that a misspelt table is an error rather than settings silently
// ignored; a table for an installed plugin that is not enabled is allowed,
// so a plugin can be switched on and off through plugins.enabled alone.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w (copy config.toml.example to start a new file)", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("config: %s: %w", path, err)
	}
	return parse(data, path, filepath.Dir(abs), true)
}

// LoadOrDefault is Load when the file at path exists and Default when it
// does not, as hookhost's own commands treat hookhost.toml. Any other
// failure (a file that cannot be read, or one with errors) is still an
// error.
func LoadOrDefault(path string) (*Config, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return Default(), nil
	}
	return Load(path)
}

// Parse parses config data. filename is used only in error messages. dir is
// the directory relative paths are resolved against; "" means the working
// directory. Parse looks at no file: the data may describe another machine,
// so it neither checks tools.read_root nor refuses entries for plugins that
// are not enabled (Load does both).
func Parse(data []byte, filename, dir string) (*Config, error) {
	return parse(data, filename, absDir(dir), false)
}

// Entry returns the settings for plugin name: its entry if it has one,
// otherwise the defaults with the binary at <Plugins.Dir>/<name>.
func (c *Config) Entry(name string) PluginEntry {
	if e, ok := c.Plugins.Entries[name]; ok {
		return e
	}
	return defaultEntry(c.Dir, c.Plugins.Dir, name)
}

func defaultEntry(dir, pluginDir, name string) PluginEntry {
	return PluginEntry{
		Dir:         dir,
		Path:        filepath.Join(pluginDir, name),
		Timeout:     defaultTimeout,
		ToolTimeout: defaultToolTimeout,
		Config:      json.RawMessage("{}"),
	}
}

// ResolveGateway decides whether traffic goes through the gateway. A
// non-empty GatewayEnv wins over routing.gateway so operators can flip
// routing per process; it must be exactly 1, 0, true or false (any case,
// surrounding space ignored), because guessing at a mistyped rollout switch
// could silently send traffic the wrong way. source is GatewayEnv,
// "routing.gateway" when the file (or the caller, in code) sets it, or
// "default", for logging where the decision came from. A nil getenv means
// os.Getenv; a nil c means the defaults.
func ResolveGateway(c *Config, getenv func(string) string) (gateway bool, source string, err error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	raw := getenv(GatewayEnv)
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "":
		// A config built in code has no file to say where the key is, so
		// a gateway route set there counts as set by routing.gateway.
		if c == nil || (!c.Routing.Gateway && c.Where("routing.gateway") == "") {
			return false, "default", nil
		}
		return c.Routing.Gateway, "routing.gateway", nil
	case "1", "true":
		return true, GatewayEnv, nil
	case "0", "false":
		return false, GatewayEnv, nil
	}
	return false, "", fmt.Errorf("config: %s=%q is not a valid value (set it to 1, 0, true or false, or unset it to use routing.gateway)", GatewayEnv, raw)
}

// absDir makes dir absolute; "" is the working directory. If the working
// directory cannot be determined the path is kept as given, which still
// works for relative lookups from the same process.
func absDir(dir string) string {
	if dir == "" {
		dir = "."
	}
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// resolve makes p absolute against dir.
func resolve(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}
