package kora

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/hookhost/hookhost/plugins/kora/internal/bridge"
	"github.com/hookhost/hookhost/plugins/kora/internal/ledger"
	"github.com/hookhost/hookhost/plugins/kora/internal/router"
)

// Config is Kora's [plugins.entries.kora.config] table, as the host hands
// it over in JSON. Keys not listed here are rejected by name.
type Config struct {
	// StateDir holds the ledger. Required. A relative path is resolved
	// against the plugin process's working directory, which the host sets
	// to its config file's directory: the path means what the file says.
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
	// BudgetPerDay, when set, makes Kora answer model calls itself, the
	// model not called, once today's (UTC) spend on the call's route is at
	// or past it.
	BudgetPerDay DailyBudget `json:"budget_usd_per_day"`
	// Prices per model, merged over DefaultPrices.
	Prices map[string]Price `json:"prices"`
	// Router configures escalation from the small tier to the strong model.
	Router router.Config `json:"router"`
	// Ledger picks the database behind the ledger and its retention.
	Ledger Ledger `json:"ledger"`
}

// Ledger is the [ledger] subtable.
type Ledger struct {
	// DSN names the database: "" for SQLite at state_dir/ledger.db,
	// "sqlite:<path>", or a PostgreSQL URL.
	DSN string `json:"dsn"`
	// DSNEnv names an environment variable holding the DSN instead, so a
	// password never sits in the config file.
	DSNEnv string `json:"dsn_env"`
	// Synchronous is SQLite's durability, "full" or "normal".
	Synchronous string `json:"synchronous"`
	// KeepDays is how many days of detailed records are kept; 0 keeps
	// them forever. Daily totals are kept regardless.
	KeepDays int `json:"keep_days"`

	// dsn is the DSN in force: DSN, or the value of DSNEnv.
	dsn string
}

// ResolvedDSN is the DSN Kora opens: ledger.dsn, or the value of the
// variable ledger.dsn_env names, as read when the config was parsed.
func (l Ledger) ResolvedDSN() string { return l.dsn }

// MinKeepDays is the shortest retention: the 7d burn window starts
// mid-day eight UTC days back, and needs that day's details.
const MinKeepDays = 8

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
		Ledger:          Ledger{Synchronous: ledger.SyncFull},
	}
}

// knownKeys is the shape of the table, for naming unknown keys with their
// full path. A nil value is a leaf; "*" stands for any key (a model name).
var knownKeys = map[string]any{
	"state_dir": nil, "allowlist": nil, "primary_state": nil, "claim_permission": nil,
	"budget": map[string]any{"daily_usd": nil, "total_usd": nil},
	// A number, or a table of numbers by route: checked in validate.
	"budget_usd_per_day": nil,
	"prices":             map[string]any{"*": map[string]any{"input_per_mtok": nil, "output_per_mtok": nil}},
	"router":             map[string]any{"enabled": nil, "small_models": nil, "strong_model": nil, "hedge_phrases": nil},
	"ledger":             map[string]any{"dsn": nil, "dsn_env": nil, "synchronous": nil, "keep_days": nil},
}

// ParseConfig decodes and validates Kora's config. Every error names the key
// at fault, relative to [plugins.entries.kora.config]. Relative paths are
// resolved against the working directory, which for the plugin is the
// config file's directory.
func ParseConfig(raw json.RawMessage) (Config, error) {
	return ParseConfigIn(raw, "")
}

// ParseConfigIn is ParseConfig for a config read from its file rather than
// handed over by the host: relative paths (state_dir, a "sqlite:" DSN) are
// resolved against dir, the config file's directory, as the plugin started
// by the host resolves them. dir "" is the working directory.
func ParseConfigIn(raw json.RawMessage, dir string) (Config, error) {
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
	abs, err := filepath.Abs(inDir(dir, cfg.StateDir))
	if err != nil {
		return Config{}, fmt.Errorf("kora: config: state_dir %q: %w", cfg.StateDir, err)
	}
	cfg.StateDir = abs
	if p, ok := strings.CutPrefix(cfg.Ledger.dsn, "sqlite:"); ok && dir != "" {
		cfg.Ledger.dsn = "sqlite:" + inDir(dir, p)
	}
	return cfg, nil
}

// inDir resolves a relative path against dir; dir "" leaves it as it is.
func inDir(dir, path string) string {
	if dir == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
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
	case reflect.Int:
		return "a whole number"
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
	if err := c.BudgetPerDay.validate(); err != nil {
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
	if err := c.Router.Validate(); err != nil {
		return err
	}
	return c.Ledger.validate(os.LookupEnv)
}

// validate checks the [ledger] table and resolves the DSN. lookupEnv is
// Kora's environment, which holds only what the operator listed in env.
func (l *Ledger) validate(lookupEnv func(string) (string, bool)) error {
	switch l.Synchronous {
	case ledger.SyncFull, ledger.SyncNormal:
	default:
		return fmt.Errorf("ledger.synchronous = %q must be %q (a record survives a machine crash) or %q (it survives a crash of Kora only)",
			l.Synchronous, ledger.SyncFull, ledger.SyncNormal)
	}
	if l.KeepDays < 0 || (l.KeepDays > 0 && l.KeepDays < MinKeepDays) {
		return fmt.Errorf("ledger.keep_days = %d must be 0 (keep forever) or at least %d, so the 7d window keeps its details",
			l.KeepDays, MinKeepDays)
	}
	if l.DSN != "" && l.DSNEnv != "" {
		return errors.New("ledger.dsn and ledger.dsn_env are both set: use one (dsn_env when the DSN holds a password)")
	}
	l.dsn = l.DSN
	key := "ledger.dsn"
	if l.DSNEnv != "" {
		if !envName.MatchString(l.DSNEnv) {
			return fmt.Errorf("ledger.dsn_env = %q is not an environment variable name", l.DSNEnv)
		}
		v, set := lookupEnv(l.DSNEnv)
		if !set {
			return fmt.Errorf("ledger.dsn_env names %s, which is not set in Kora's environment: list it in env of [plugins.entries.kora]; the host passes only the variables listed there", l.DSNEnv)
		}
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("ledger.dsn_env names %s, which is empty in Kora's environment: set it to \"sqlite:<path>\" or \"postgres://...\"", l.DSNEnv)
		}
		l.dsn = v
		key = fmt.Sprintf("ledger.dsn_env (%s)", l.DSNEnv)
	}
	return checkDSN(key, l.dsn)
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkDSN accepts the DSNs ledger.Open knows. It never shows a DSN whole
// in an error, as one may carry a password.
func checkDSN(key, dsn string) error {
	switch {
	case dsn == "":
		return nil
	case strings.HasPrefix(dsn, "sqlite:"):
		if strings.TrimSpace(strings.TrimPrefix(dsn, "sqlite:")) == "" {
			return fmt.Errorf("%s = \"sqlite:\" names no file: use \"sqlite:<path>\", or leave it out for %s in state_dir", key, ledger.DefaultSQLiteFile)
		}
		return nil
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		if _, err := url.Parse(dsn); err != nil {
			return fmt.Errorf("%s %q is not a valid PostgreSQL URL", key, redactDSN(dsn))
		}
		return nil
	}
	return fmt.Errorf("%s %q is not a DSN Kora knows: use \"sqlite:<path>\" or \"postgres://...\"", key, redactDSN(dsn))
}

// redactDSN shows enough of a DSN to recognise it: its scheme, or a value
// without a scheme when it holds nothing that looks like a credential.
func redactDSN(dsn string) string {
	if i := strings.Index(dsn, "://"); i > 0 {
		return dsn[:i] + "://..."
	}
	if i := strings.Index(dsn, ":"); i > 0 && envName.MatchString(dsn[:i]) {
		return dsn[:i] + ":..."
	}
	if strings.ContainsAny(dsn, "=@") || len(dsn) > 200 {
		return "..."
	}
	return dsn
}

func amount(key string, v float64) error {
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%s = %v must be zero or more", key, v)
	}
	return nil
}

// DailyBudget is budget_usd_per_day: one amount in USD for every route
// (budget_usd_per_day = 5), or one per route (budget_usd_per_day =
// { gateway = 5 }, where a route left out has none). The zero value sets
// no budget.
type DailyBudget struct {
	All     *float64
	ByRoute map[string]float64
}

// UnmarshalJSON takes a number or a table of numbers by route.
func (d *DailyBudget) UnmarshalJSON(b []byte) error {
	var n float64
	if err := json.Unmarshal(b, &n); err == nil {
		d.All, d.ByRoute = &n, nil
		return nil
	}
	var m map[string]float64
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("budget_usd_per_day: expected a number, or a table of numbers by route (gateway, bypass), got %s", b)
	}
	d.All, d.ByRoute = nil, m
	return nil
}

// Set reports whether any route has a budget.
func (d DailyBudget) Set() bool { return d.All != nil || len(d.ByRoute) > 0 }

// For returns the budget of route, and whether it has one.
func (d DailyBudget) For(route string) (float64, bool) {
	if d.All != nil {
		return *d.All, true
	}
	v, ok := d.ByRoute[route]
	return v, ok
}

func (d DailyBudget) validate() error {
	if d.All != nil {
		return amount("budget_usd_per_day", *d.All)
	}
	routes := make([]string, 0, len(d.ByRoute))
	for r := range d.ByRoute {
		routes = append(routes, r)
	}
	sort.Strings(routes)
	for _, r := range routes {
		if r != "gateway" && r != "bypass" {
			return fmt.Errorf("budget_usd_per_day.%s: unknown route (use gateway or bypass, or one number for every route)", r)
		}
		if err := amount("budget_usd_per_day."+r, d.ByRoute[r]); err != nil {
			return err
		}
	}
	return nil
}
