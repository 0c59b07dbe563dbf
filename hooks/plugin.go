package hooks

import (
	"context"
	"errors"
	"slices"
)

// Manifest is what a plugin says about itself. The host asks a plugin only
// for the hooks listed here, and asks a tool hook only for tool names that
// match the hook's matchers (path.Match globs; see MatchersFor).
type Manifest struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Hooks   []Name `json:"hooks"`
	// Matchers apply to every tool hook that HookMatchers does not name;
	// empty means every tool.
	Matchers []string `json:"matchers,omitempty"`
	// HookMatchers gives a tool hook matchers of its own, so that a plugin
	// can audit every tool in post_tool_call while providing results only
	// for its own. An entry with an empty list means every tool.
	HookMatchers map[Name][]string `json:"hook_matchers,omitempty"`
	Tools        []ToolSpec        `json:"tools,omitempty"`
	// Config, when not nil, declares the top-level keys of the plugin's
	// config table ([plugins.entries.<name>.config]); with no keys the
	// plugin takes no config. The host refuses a config with any other key
	// before Configure. Nil leaves the config to the plugin to check.
	Config *ConfigKeys `json:"config,omitempty"`
	// HookOptions are per-hook options: windowed streaming for
	// transform_llm_output, an early decision for
	// post_llm_call_can_reissue (see HookOptions).
	HookOptions map[Name]HookOptions `json:"hook_options,omitempty"`
}

// HookOptions are a plugin's options for one hook it serves.
//
// On transform_llm_output, WindowBytes or OverlapBytes (either set means
// windowed; the other takes its default) let a streamed answer reach the
// client in windows instead of only once it is whole: each call carries
// one window of text whose first bytes repeat the end of the previous
// window, so that what spans a boundary is seen whole (see LLMOutput).
//
// On post_llm_call_can_reissue, DecideAfterBytes lets the hook decide on
// a streamed answer's opening: when every subscriber declares it, the host
// holds only that many bytes (the largest declared) and asks the hook on
// them (LLMCall.Partial), then streams the rest unheld or reissues.
type HookOptions struct {
	WindowBytes      int64 `json:"window_bytes,omitempty"`
	OverlapBytes     int64 `json:"overlap_bytes,omitempty"`
	DecideAfterBytes int64 `json:"decide_after_bytes,omitempty"`
}

// Window defaults and bounds (bytes).
const (
	DefaultWindowBytes  = 1024
	DefaultOverlapBytes = 256
	// MinWindowBytes keeps a window larger than any one character.
	MinWindowBytes = 16
	// MaxWindowBytes bounds what the host holds back per stream, and what
	// decide_after_bytes may hold.
	MaxWindowBytes = 4 << 20
)

// Windowed reports whether o asks for windowed text.
func (o HookOptions) Windowed() bool { return o.WindowBytes > 0 || o.OverlapBytes > 0 }

// Window returns the window and overlap sizes o declares, defaults
// filled in; zero when o is not windowed.
func (o HookOptions) Window() (window, overlap int64) {
	if !o.Windowed() {
		return 0, 0
	}
	window, overlap = o.WindowBytes, o.OverlapBytes
	if window == 0 {
		window = max(DefaultWindowBytes, 4*overlap)
	}
	if overlap == 0 && o.WindowBytes > 0 {
		overlap = min(DefaultOverlapBytes, window/4)
	}
	return window, overlap
}

// ConfigKeys is the declaration of a plugin's config keys.
type ConfigKeys struct {
	Keys []string `json:"keys"`
}

// MatchersFor returns the tool globs hook h is asked for: its own entry in
// HookMatchers when there is one, Matchers otherwise. Empty means every
// tool.
func (m Manifest) MatchersFor(h Name) []string {
	if g, ok := m.HookMatchers[h]; ok {
		return g
	}
	return m.Matchers
}

// Plugin is one extension of the conversation loop as the Bus (package hookbus) sees it.
// In-process plugins (Funcs), plugins written with the SDK (which adapts
// them to Funcs) and remote plugins (processes adapted by package host)
// implement the same interface, so the Bus cannot tell them apart.
//
// Handle answers one call of hook with req, the hook's payload (the table
// in catalogue.go gives each hook's payload and answer types). It may
// answer nil, or a nil pointer of the answer type, to mean "no opinion";
// observers always answer nil. A returned error, a panic, a missed
// deadline, an answer of the wrong type or one that breaks the hook's rules
// counts as no opinion too: the Bus logs and counts it, and the
// conversation goes on.
type Plugin interface {
	Manifest() Manifest
	Handle(ctx context.Context, hook Name, req any) (any, error)
}

// Unserving is a plugin whose hooks depend on its config. Its manifest
// lists every hook it may serve, since it is read before the config is
// handed over; once configured, Unserved lists those it does not serve as
// configured, and the host asks them no more (a remote plugin says so in
// its answer to Configure; the Bus asks an in-process one when it is
// built). A hook the plugin only needs under some config so costs nothing
// under the others.
type Unserving interface {
	Unserved() []Name
}

// Without returns m without the hooks in unserved, and without the
// per-hook matchers and options of those hooks, so that what remains is a
// valid manifest of the hooks served. m's maps are not changed.
func (m Manifest) Without(unserved []Name) Manifest {
	if len(unserved) == 0 {
		return m
	}
	kept := make([]Name, 0, len(m.Hooks))
	for _, h := range m.Hooks {
		if !slices.Contains(unserved, h) {
			kept = append(kept, h)
		}
	}
	m.Hooks = kept
	m.HookMatchers = withoutKeys(m.HookMatchers, unserved)
	m.HookOptions = withoutKeys(m.HookOptions, unserved)
	return m
}

// withoutKeys returns a copy of in without the keys in drop, or in itself
// when it holds none of them.
func withoutKeys[V any](in map[Name]V, drop []Name) map[Name]V {
	if !slices.ContainsFunc(drop, func(h Name) bool { _, ok := in[h]; return ok }) {
		return in
	}
	out := make(map[Name]V, len(in))
	for h, v := range in {
		if !slices.Contains(drop, h) {
			out[h] = v
		}
	}
	return out
}

// ErrUnavailable is returned by a plugin adapter whose process is not running
// (crashed, restarting, circuit open). The Bus treats it as nil at once.
var ErrUnavailable = errors.New("plugin unavailable")

// ErrMalformed is returned by a plugin adapter when what the plugin sent
// breaks the protocol (a result over the host's size limit, a message with
// no valid role). The Bus counts it as hookbus.KindMalformed: the plugin's fault.
var ErrMalformed = errors.New("plugin sent a malformed response")

// ErrPanicked is returned by a plugin adapter whose plugin reported that
// its handler panicked (and recovered). The Bus counts it as hookbus.KindPanic, as
// it does a panic of an in-process plugin.
var ErrPanicked = errors.New("plugin handler panicked")

// ErrRefused is returned by a plugin adapter that would not send a call,
// such as a request over the size the host allows for that plugin. The Bus
// counts it as hookbus.KindRefused and logs it like a failure, but it is the host's
// decision, not the plugin's fault.
var ErrRefused = errors.New("host refused to send the call")
