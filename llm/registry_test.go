package llm_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/llm"
	_ "github.com/hookhost/hookhost/llm/anthropic"
	_ "github.com/hookhost/hookhost/llm/offline"
	_ "github.com/hookhost/hookhost/llm/openai"
)

func TestBuiltInProvidersAreRegisteredInRankOrder(t *testing.T) {
	got := llm.ProviderNames()
	// Other tests may register more; the built-ins come first, in the
	// order messages list them.
	if len(got) < 3 || !slices.Equal(got[:3], []string{"offline", "openai", "anthropic"}) {
		t.Fatalf("ProviderNames() = %q, want offline, openai, anthropic first", got)
	}
}

func TestEveryRegisteredProviderIsComplete(t *testing.T) {
	for _, name := range llm.ProviderNames() {
		info, ok := llm.LookupProvider(name)
		if !ok || info.Name != name || info.New == nil {
			t.Errorf("%s: LookupProvider = %+v, %v; want its info with a New", name, info, ok)
			continue
		}
		networked := info.DefaultBaseURL != ""
		if networked && (info.KeyEnv == "" || info.ExampleModel == "" || len(info.Protocols) == 0 || info.AuthStyle == llm.AuthNone) {
			t.Errorf("%s: a provider reached over the network needs KeyEnv, ExampleModel, Protocols and an AuthStyle: %+v", name, info)
		}
		if !networked && (info.KeyEnv != "" || len(info.Protocols) != 0 || info.AuthStyle != llm.AuthNone) {
			t.Errorf("%s: a provider without a base URL cannot take a key or speak a protocol: %+v", name, info)
		}
		if info.MaxTemperature < 0 || info.MaxTemperature > 2 || info.DefaultMaxTokens < 0 {
			t.Errorf("%s: MaxTemperature %v, DefaultMaxTokens %d out of range", name, info.MaxTemperature, info.DefaultMaxTokens)
		}
	}
}

func TestOfflineBuildsWithoutSettings(t *testing.T) {
	info, _ := llm.LookupProvider("offline")
	p, err := info.New(llm.ProviderSettings{})
	if err != nil || p == nil || p.Name() != "offline" {
		t.Fatalf("offline New = %v, %v", p, err)
	}
}

func TestNetworkedProvidersRefuseABadBaseURL(t *testing.T) {
	for _, name := range []string{"openai", "anthropic"} {
		info, _ := llm.LookupProvider(name)
		p, err := info.New(llm.ProviderSettings{BaseURL: "::not a url"})
		if err == nil || p != nil {
			t.Errorf("%s New with a bad base URL = %v, %v; want an error and a nil provider (not a typed nil)", name, p, err)
		}
		if p, err := info.New(llm.ProviderSettings{BaseURL: info.DefaultBaseURL}); err != nil || p.Name() != name {
			t.Errorf("%s New = %v, %v", name, p, err)
		}
	}
}

func TestLookupUnknownProvider(t *testing.T) {
	if info, ok := llm.LookupProvider("opanai"); ok || info.Name != "" {
		t.Errorf("LookupProvider(opanai) = %+v, %v; want nothing", info, ok)
	}
}

func TestRegisterProviderRefusesDuplicatesAndIncompleteInfo(t *testing.T) {
	newNothing := func(llm.ProviderSettings) (llm.Provider, error) { return nil, nil }
	llm.RegisterProvider(llm.ProviderInfo{Name: "registry-test", Rank: 99, New: newNothing})
	if _, ok := llm.LookupProvider("registry-test"); !ok {
		t.Fatal("a registered provider is not found")
	}
	for _, tt := range []struct {
		name string
		info llm.ProviderInfo
		want string
	}{
		{"duplicate", llm.ProviderInfo{Name: "openai", New: newNothing}, "already registered"},
		{"duplicate of a test provider", llm.ProviderInfo{Name: "registry-test", New: newNothing}, "already registered"},
		{"no name", llm.ProviderInfo{New: newNothing}, "Name and New are required"},
		{"no New", llm.ProviderInfo{Name: "registry-test-2"}, "Name and New are required"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, tt.want) {
					t.Errorf("RegisterProvider panicked with %v, want %q", r, tt.want)
				}
			}()
			llm.RegisterProvider(tt.info)
		})
	}
	if _, ok := llm.LookupProvider("registry-test-2"); ok {
		t.Error("an info without New was registered")
	}
	if info, _ := llm.LookupProvider("openai"); info.New == nil || info.AuthStyle != llm.AuthBearer {
		t.Errorf("a refused duplicate replaced openai: %+v", info)
	}
}

func TestAuthStyleSetKey(t *testing.T) {
	for _, tt := range []struct {
		style      llm.AuthStyle
		key        string
		name, want string
	}{
		{llm.AuthBearer, "k", "Authorization", "Bearer k"},
		{llm.AuthXAPIKey, "k", "X-Api-Key", "k"},
	} {
		h := http.Header{}
		tt.style.SetKey(h, tt.key)
		if got := h.Get(tt.name); got != tt.want || len(h) != 1 {
			t.Errorf("%v.SetKey = %v, want %s: %s only", tt.style, h, tt.name, tt.want)
		}
	}
	for _, tt := range []struct {
		style llm.AuthStyle
		key   string
	}{{llm.AuthNone, "k"}, {llm.AuthBearer, ""}, {llm.AuthXAPIKey, ""}} {
		h := http.Header{}
		tt.style.SetKey(h, tt.key)
		if len(h) != 0 {
			t.Errorf("%v.SetKey(%q) set %v, want nothing", tt.style, tt.key, h)
		}
	}
}
