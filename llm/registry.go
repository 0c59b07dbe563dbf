package llm

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// AuthStyle is how a provider's API key travels upstream.
type AuthStyle int

// The ways providers take their key.
const (
	AuthNone    AuthStyle = iota // no key: the provider is not reached over the network
	AuthBearer                   // Authorization: Bearer <key>
	AuthXAPIKey                  // x-api-key: <key>
)

// SetKey puts key on h the way the provider expects it; an empty key, or
// AuthNone, sets nothing.
func (a AuthStyle) SetKey(h http.Header, key string) {
	if key == "" {
		return
	}
	switch a {
	case AuthBearer:
		h.Set("Authorization", "Bearer "+key)
	case AuthXAPIKey:
		h.Set("x-api-key", key)
	}
}

// ProviderSettings are the [llm] settings a provider is built from, with
// defaults filled in and the key read from its environment variable.
type ProviderSettings struct {
	API         string // the OpenAI API, "chat" or "responses"; "" for others
	BaseURL     string
	APIKey      string
	Headers     map[string]string
	MaxTokens   int
	Temperature *float64
	Timeout     time.Duration
	CallTimeout time.Duration
	MaxRetries  int
}

// ProviderInfo describes a provider that llm.provider may name: what the
// config fills in when the file leaves it out, what the gateway may pass
// through to it untouched, and how to build it.
type ProviderInfo struct {
	Name string // the llm.provider value
	// Rank orders ProviderNames, lowest first, then by name: the order
	// messages list the providers in.
	Rank int
	// DefaultBaseURL is llm.base_url when the file leaves it out; "" for a
	// provider that is not reached over the network.
	DefaultBaseURL string
	// KeyEnv is llm.api_key_env when the file leaves it out.
	KeyEnv string
	// ExampleModel is suggested when the file names no model.
	ExampleModel string
	// Protocols are the wire protocols the provider's API speaks, which
	// the gateway's bypass route proxies to it as they come.
	Protocols []Protocol
	AuthStyle AuthStyle
	// MaxTemperature is the highest sampling temperature the provider
	// takes; 0 means 2, OpenAI's.
	MaxTemperature float64
	// DefaultMaxTokens is llm.max_tokens when the file leaves it out, for a
	// provider that requires one; 0 leaves it to the provider.
	DefaultMaxTokens int
	// New builds the provider.
	New func(ProviderSettings) (Provider, error)
}

// Speaks reports whether the provider's API speaks p.
func (i ProviderInfo) Speaks(p Protocol) bool { return slices.Contains(i.Protocols, p) }

var registry = struct {
	sync.RWMutex
	byName map[string]ProviderInfo
}{byName: map[string]ProviderInfo{}}

// RegisterProvider makes a provider available under info.Name. Providers
// register themselves from an init function, so it panics, as a
// programming error, on a name already taken or an info without a Name or
// New.
func RegisterProvider(info ProviderInfo) {
	if info.Name == "" || info.New == nil {
		panic(fmt.Sprintf("llm: RegisterProvider(%q): Name and New are required", info.Name))
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.byName[info.Name]; dup {
		panic(fmt.Sprintf("llm: RegisterProvider(%q): a provider of that name is already registered", info.Name))
	}
	info.Protocols = slices.Clone(info.Protocols)
	registry.byName[info.Name] = info
}

// LookupProvider returns the provider registered under name.
func LookupProvider(name string) (ProviderInfo, bool) {
	registry.RLock()
	defer registry.RUnlock()
	info, ok := registry.byName[name]
	info.Protocols = slices.Clone(info.Protocols)
	return info, ok
}

// ProviderNames lists the registered providers by Rank, then by name.
func ProviderNames() []string {
	registry.RLock()
	infos := make([]ProviderInfo, 0, len(registry.byName))
	for _, info := range registry.byName {
		infos = append(infos, info)
	}
	registry.RUnlock()
	slices.SortFunc(infos, func(a, b ProviderInfo) int {
		if a.Rank != b.Rank {
			return a.Rank - b.Rank
		}
		return strings.Compare(a.Name, b.Name)
	})
	names := make([]string, len(infos))
	for i, info := range infos {
		names[i] = info.Name
	}
	return names
}
