package kora

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/hookhost/hookhost/plugins/kora/internal/bridge"
	"github.com/hookhost/hookhost/plugins/kora/internal/router"
)

// Config is Kora's [plugins.entries.kora.config] table, as the host hands
// it over in JSON. Keys not listed here are rejected by name.
type Config struct {
	// StateDir holds the ledger. Required. A relative path is resolved
	// against the plugin process's working directory, which is the
	// directory hookhost was started from.
	StateDir string `json:"state_dir"`
	// Allowlist names the Kora tools the bridge serves; the others answer
	// a not_allowed error. Default: all five.
	Allowlist []string `json:"allowlist"`
	// PrimaryState is the operator-declared state kora__get_operational_state
	// reports while the budget holds. Default "nominal".
	PrimaryState string `json:"primary_state"`
	// ClaimPermission is "granted" or "denied". Default "granted". An
	// exhausted budget denies claims whatever it says.
	ClaimPermission string `json:"claim_permission"`
	// Budget caps spending in USD; 0 means no cap.
	Budget Budget `json:"budget"`
	// Prices per model, merged over DefaultPrices.
	Prices map[string]Price `json:"prices"`
	// Router configures escalation from the small tier to the strong model.
	Router router.Config `json:"router"`
}

// Budget is the [budget] subtable.
type Budget struct {
	DailyUSD float64 `json:"daily_usd"`
	TotalUSD float64 `json:"total_usd"`
}

// Price is what a model costs, in USD per million tokens.
type Price struct {
	InputPerMTok  float64 `json:"input_per_mtok"`
	OutputPerMTok float64 `json:"output_per_mtok"`
}

// Cost prices one call.
func (p Price) Cost(inputTokens, outputTokens int) float64 {
	return (float64(inputTokens)*p.InputPerMTok + float64(outputTokens)*p.OutputPerMTok) / 1e6
}

// DefaultPrices cover the offline demo models, priced like a typical small
// and large hosted model so that burn reports have realistic proportions.
// Real deployments list their own models under prices.
func DefaultPrices() map[string]Price {
	return map[string]Price{
		"offline-small": {InputPerMTok: 0.15, OutputPerMTok: 0.60},
		"offline-large": {InputPerMTok: 2.50, OutputPerMTok: 10.00},
	}
}

// Claim permissions.
const (
	ClaimGranted = "granted"
	ClaimDenied  = "denied"
)

// defaults returns the config before the operator's table is laid over it.
func defaults() Config {
	return Config{
		Allowlist:       bridge.ToolNames(),
		PrimaryState:    "nominal",
		ClaimPermission: ClaimGranted,
		Prices:          DefaultPrices(),
		Router:          router.Defaults(),
	}
}

// knownKeys is the shape of the table, for naming unknown keys with their
// full path. A nil value is a leaf; "*" stands for any key (a model name).
var knownKeys = map[string]any{
	"state_dir": nil, "allowlist": nil, "primary_state": nil, "claim_permission": nil,
	"budget": map[string]any{"daily_usd": nil, "total_usd": nil},
	"prices": map[string]any{"*": map[string]any{"input_per_mtok": nil, "output_per_mtok": nil}},
	"router": map[string]any{"enabled": nil, "small_models": nil, "strong_model": nil, "hedge_phrases": nil},
}

// ParseConfig decodes and validates Kora's config. Every error names the key
// at fault, relative to [plugins.entries.kora.config].
func ParseConfig(raw json.RawMessage) (Config, error) {
	cfg := defaults()
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := checkKeys(raw, "", knownKeys); err != nil {
		return Config{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	// Decoding over the defaults keeps what the table leaves out; for
	// prices, json reuses the default map, so the operator's models are
	// added to (or replace) the offline ones rather than dropping them.
	if err := dec.Decode(&cfg); err != nil {
		return Config{}, configErr(err)
	}
	if err := cfg.validate(); err != nil {
		return Config{}, fmt.Errorf("kora: config: %w", err)
	}
	abs, err := filepath.Abs(cfg.StateDir)
	if err != nil {
		return Config{}, fmt.Errorf("kora: config: state_dir %q: %w", cfg.StateDir, err)
	}
	cfg.StateDir = abs
	return cfg, nil
}

func configErr(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return fmt.Errorf("kora: config: %s: expected %s, got %s", typeErr.Field, describe(typeErr.Type), typeErr.Value)
	}
	return fmt.Errorf("kora: config: %w", err)
}

// describe names a Go type in the config file's terms.
func describe(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list of " + strings.TrimPrefix(describe(t.Elem()), "a ") + "s"
	case reflect.Map, reflect.Struct:
		return "a table"
	}
	return t.String()
}

// checkKeys rejects keys outside shape, naming the first by its dotted
// path. Values of the wrong type are left to the decoder, which names them.
func checkKeys(raw json.RawMessage, path string, shape map[string]any) error {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		if path == "" {
			return fmt.Errorf("kora: config: not a JSON object")
		}
		return nil
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sub, known := shape[k]
		if !known {
			sub, known = shape["*"]
		}
		if !known {
			return fmt.Errorf("kora: config: unknown key %q (known keys here: %s)", path+k, knownList(shape))
		}
		if inner, ok := sub.(map[string]any); ok {
			if err := checkKeys(obj[k], path+k+".", inner); err != nil {
				return err
			}
		}
	}
	return nil
}

func knownList(shape map[string]any) string {
	var names []string
	for k := range shape {
		if k == "*" {
			k = "<model name>"
		}
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func (c *Config) validate() error {
	if strings.TrimSpace(c.StateDir) == "" {
		return errors.New("state_dir is required: set it to the directory Kora keeps its ledger in, such as \".kora\"")
	}
	known := bridge.ToolNames()
	seen := map[string]bool{}
	for i, n := range c.Allowlist {
		if !slices.Contains(known, n) {
			return fmt.Errorf("allowlist[%d] = %q is not a Kora tool (use any of %s)", i, n, strings.Join(known, ", "))
		}
		if seen[n] {
			return fmt.Errorf("allowlist[%d] = %q is listed twice", i, n)
		}
		seen[n] = true
	}
	if strings.TrimSpace(c.PrimaryState) == "" {
		return errors.New("primary_state is empty (leave it out for \"nominal\")")
	}
	switch c.ClaimPermission {
	case ClaimGranted, ClaimDenied:
	default:
		return fmt.Errorf("claim_permission = %q must be %q or %q", c.ClaimPermission, ClaimGranted, ClaimDenied)
	}
	if err := amount("budget.daily_usd", c.Budget.DailyUSD); err != nil {
		return err
	}
	if err := amount("budget.total_usd", c.Budget.TotalUSD); err != nil {
		return err
	}
	models := make([]string, 0, len(c.Prices))
	for m := range c.Prices {
		models = append(models, m)
	}
	sort.Strings(models)
	for _, m := range models {
		if strings.TrimSpace(m) == "" {
			return errors.New("prices has an entry with an empty model name")
		}
		p := c.Prices[m]
		if err := amount(fmt.Sprintf("prices.%s.input_per_mtok", m), p.InputPerMTok); err != nil {
			return err
		}
		if err := amount(fmt.Sprintf("prices.%s.output_per_mtok", m), p.OutputPerMTok); err != nil {
			return err
		}
	}
	return c.Router.Validate()
}

func amount(key string, v float64) error {
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%s = %v must be zero or more", key, v)
	}
	return nil
}
