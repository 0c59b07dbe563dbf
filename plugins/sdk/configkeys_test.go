package sdk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

type SharedKeys struct {
	Timeout string `json:"timeout"`
	Shadow  int    `json:"deny"` // shallower deny wins
}

type RetryKeys struct {
	Retries int `json:"retries"`
}

type TwinA struct{ Same int }
type TwinB struct{ Same int }

type selfDecoding struct{ A int }

func (s *selfDecoding) UnmarshalJSON([]byte) error { return nil }

func TestConfigKeysOf(t *testing.T) {
	type full struct {
		SharedKeys
		*RetryKeys
		TwinA
		TwinB
		Deny      []string `json:"deny"`
		Message   string   `json:"message,omitempty"`
		Untagged  bool
		Skipped   string `json:"-"`
		Dash      string `json:"-,"`
		unexposed int
		Named     RetryKeys `json:"named"`
	}
	for _, c := range []struct {
		name string
		v    any
		want []string
		err  string
	}{
		{"full", full{}, []string{"-", "Untagged", "deny", "message", "named", "retries", "timeout"}, ""},
		{"pointer", &full{}, []string{"-", "Untagged", "deny", "message", "named", "retries", "timeout"}, ""},
		{"empty struct", struct{}{}, []string{}, ""},
		{"map", map[string]any{}, nil, "must be a struct or a pointer to one, got map[string]interface {}"},
		{"self-decoding", selfDecoding{}, nil, "decodes itself (UnmarshalJSON)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := sdk.ConfigKeysOf(c.v)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("ConfigKeysOf = %v, %v; want an error containing %q", got, err, c.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Fatalf("ConfigKeysOf = %q, %v; want %q", got, err, c.want)
			}
			// Each declared key decodes into the struct and no other does:
			// the declaration and DecodeConfig agree.
			for _, k := range got {
				if err := sdk.DecodeConfig(json.RawMessage(fmt.Sprintf(`{%q: null}`, k)), new(full)); err != nil && c.name != "empty struct" {
					t.Errorf("declared key %q does not decode: %v", k, err)
				}
			}
			if c.name == "full" {
				if err := sdk.DecodeConfig(json.RawMessage(`{"Same": 1}`), new(full)); err == nil {
					t.Errorf(`"Same", which two embedded structs share, decodes, but is not declared`)
				}
			}
		})
	}
}

type withConfig struct {
	sdk.Base
	cfg struct {
		Deny []string `json:"deny"`
	}
}

func (w *withConfig) Info() sdk.Info { return sdk.Info{Name: "wc", Config: w.cfg} }
func (w *withConfig) Configure(_ context.Context, raw json.RawMessage) error {
	return sdk.DecodeConfig(raw, &w.cfg)
}

type ownConfigure struct{ sdk.Base }

func (ownConfigure) Info() sdk.Info                                    { return sdk.Info{Name: "own"} }
func (*ownConfigure) Configure(context.Context, json.RawMessage) error { return nil }

type bareBase struct{ sdk.Base }

func (bareBase) Info() sdk.Info { return sdk.Info{Name: "base"} }

type noConfigure struct{}

func (noConfigure) Info() sdk.Info { return sdk.Info{Name: "none"} }

// The manifest declares Info.Config's keys; none for a plugin without a
// Configure; nothing for one that checks its config itself, Base's
// Configure included, which refuses every key instead.
func TestManifestConfigDeclaration(t *testing.T) {
	for _, c := range []struct {
		p    sdk.Plugin
		want *hooks.ConfigKeys
	}{
		{&withConfig{}, &hooks.ConfigKeys{Keys: []string{"deny"}}},
		{&noConfigure{}, &hooks.ConfigKeys{}},
		{&ownConfigure{}, nil},
		{&bareBase{}, nil},
	} {
		got := sdk.Adapt(c.p).Manifest().Config
		if (got == nil) != (c.want == nil) || (got != nil && !slices.Equal(got.Keys, c.want.Keys)) {
			t.Errorf("%T: manifest config = %+v, want %+v", c.p, got, c.want)
		}
	}
}

func TestAdaptPanicsOnAnUndeclarableConfig(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "Info.Config must be a struct") {
			t.Errorf("recovered %v, want a panic naming Info.Config", r)
		}
	}()
	sdk.Adapt(&mapConfig{})
}

type mapConfig struct{ sdk.Base }

func (mapConfig) Info() sdk.Info { return sdk.Info{Name: "m", Config: map[string]any{}} }

// Base's Configure is for plugins that take no config: an empty table (or
// none) passes, any key is refused by name.
func TestBaseConfigureRefusesAConfig(t *testing.T) {
	var b sdk.Base
	for _, raw := range []string{``, `{}`, ` {} `} {
		if err := b.Configure(context.Background(), json.RawMessage(raw)); err != nil {
			t.Errorf("Configure(%q) = %v, want nil", raw, err)
		}
	}
	err := b.Configure(context.Background(), json.RawMessage(`{"deny": [], "allow": 1}`))
	if err == nil || !strings.Contains(err.Error(), "the plugin takes no config, but the table sets allow, deny") {
		t.Errorf("Configure with keys = %v, want a refusal naming allow, deny", err)
	}
}

func ExampleInfo_config() {
	// guardConfig is the guard's [plugins.entries.guard.config] table.
	type guardConfig struct {
		Deny    []string `json:"deny"`
		Message string   `json:"message,omitempty"`
	}
	// Info.Config declares the table's keys in the manifest, so the host
	// refuses a misspelt one (denny) at start, with its file and line,
	// before Configure decodes the table with sdk.DecodeConfig.
	info := sdk.Info{Name: "guard", Version: "1.0.0", Config: guardConfig{}}
	keys, _ := sdk.ConfigKeysOf(info.Config)
	fmt.Println(keys)
	// Output:
	// [deny message]
}
