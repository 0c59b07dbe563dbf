package kora

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/plugins/kora/internal/bridge"
	"github.com/hookhost/hookhost/plugins/kora/internal/router"
)

// TestExampleSectionLoads loads config.toml.example, which documents Kora's
// section, and checks that Kora accepts what hookhost's loader hands over
// and that the example shows Kora's defaults.
func TestExampleSectionLoads(t *testing.T) {
	hc, err := config.Load(filepath.Join("..", "..", "..", "..", "config.toml.example"))
	if err != nil {
		t.Fatalf("hookhost rejects config.toml.example: %v", err)
	}
	raw := hc.Entry("kora").Config
	cfg, err := ParseConfig(raw)
	if err != nil {
		t.Fatalf("Kora rejects the table hookhost hands it (%s): %v", raw, err)
	}
	wd, _ := os.Getwd()
	want := defaults()
	want.StateDir = filepath.Join(wd, ".kora")
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("the example does not show the defaults:\n got %+v\nwant %+v", cfg, want)
	}
}

func TestParseConfigDefaults(t *testing.T) {
	cfg, err := ParseConfig(json.RawMessage(`{"state_dir": "/var/lib/kora"}`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.StateDir != "/var/lib/kora" || !reflect.DeepEqual(cfg.Allowlist, bridge.ToolNames()) ||
		cfg.PrimaryState != "nominal" || cfg.ClaimPermission != ClaimGranted || cfg.Budget != (Budget{}) ||
		!reflect.DeepEqual(cfg.Prices, DefaultPrices()) || !reflect.DeepEqual(cfg.Router, router.Defaults()) {
		t.Errorf("defaults = %+v", cfg)
	}
}

func TestParseConfigOverrides(t *testing.T) {
	cfg, err := ParseConfig(json.RawMessage(`{
		"state_dir": "state",
		"allowlist": ["kora__get_burn"],
		"primary_state": "degraded",
		"claim_permission": "denied",
		"budget": {"daily_usd": 2, "total_usd": 50.5},
		"prices": {"gpt-4.1": {"input_per_mtok": 2, "output_per_mtok": 8}, "offline-small": {"input_per_mtok": 1}},
		"router": {"strong_model": "gpt-4.1"}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if cfg.StateDir != filepath.Join(wd, "state") {
		t.Errorf("relative state_dir resolved to %q, want it under the working directory %q", cfg.StateDir, wd)
	}
	if !reflect.DeepEqual(cfg.Allowlist, []string{"kora__get_burn"}) || cfg.PrimaryState != "degraded" || cfg.ClaimPermission != ClaimDenied {
		t.Errorf("overrides lost: %+v", cfg)
	}
	if cfg.Budget != (Budget{DailyUSD: 2, TotalUSD: 50.5}) {
		t.Errorf("budget = %+v", cfg.Budget)
	}
	wantPrices := map[string]Price{
		"gpt-4.1":       {InputPerMTok: 2, OutputPerMTok: 8},
		"offline-small": {InputPerMTok: 1},
		"offline-large": DefaultPrices()["offline-large"],
	}
	if !reflect.DeepEqual(cfg.Prices, wantPrices) {
		t.Errorf("prices = %+v, want the operator's merged over the defaults: %+v", cfg.Prices, wantPrices)
	}
	r := router.Defaults()
	r.StrongModel = "gpt-4.1"
	if !reflect.DeepEqual(cfg.Router, r) {
		t.Errorf("router = %+v, want the defaults but strong_model", cfg.Router)
	}
}

func TestParseConfigErrorsNameTheKey(t *testing.T) {
	cases := []struct{ raw, want string }{
		{`{}`, "state_dir is required"},
		{`{"state_dir": "  "}`, "state_dir is required"},
		{`{"state_dir": "s", "bugdet": {}}`, `unknown key "bugdet"`},
		{`{"state_dir": "s", "router": {"strong": "x"}}`, `unknown key "router.strong"`},
		{`{"state_dir": "s", "budget": {"daily": 1}}`, `unknown key "budget.daily"`},
		{`{"state_dir": "s", "prices": {"m": {"input": 1}}}`, `unknown key "prices.m.input"`},
		{`{"state_dir": "s", "budget": {"daily_usd": "ten"}}`, "budget.daily_usd: expected a number, got string"},
		{`{"state_dir": "s", "router": {"small_models": "offline-small"}}`, "router.small_models: expected a list of strings, got string"},
		{`{"state_dir": 3}`, "state_dir: expected a string, got number"},
		{`{"state_dir": "s", "budget": {"daily_usd": -1}}`, "budget.daily_usd = -1 must be zero or more"},
		{`{"state_dir": "s", "prices": {"m": {"input_per_mtok": -0.5}}}`, "prices.m.input_per_mtok = -0.5"},
		{`{"state_dir": "s", "allowlist": ["now"]}`, `allowlist[0] = "now" is not a Kora tool`},
		{`{"state_dir": "s", "allowlist": ["kora__get_burn", "kora__get_burn"]}`, `allowlist[1] = "kora__get_burn" is listed twice`},
		{`{"state_dir": "s", "claim_permission": "maybe"}`, `claim_permission = "maybe"`},
		{`{"state_dir": "s", "primary_state": ""}`, "primary_state is empty"},
		{`{"state_dir": "s", "router": {"enabled": true, "strong_model": "offline-small"}}`, "router.small_models[0]"},
		{`[1, 2]`, "not a JSON object"},
		{`{"state_dir": "s", "router": {"enabled": "yes"}}`, "router.enabled: expected true or false"},
		{`{"state_dir": "s", "budget": 5}`, "budget: expected a table, got number"},
	}
	for _, c := range cases {
		_, err := ParseConfig(json.RawMessage(c.raw))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "kora: config: ") {
			t.Errorf("ParseConfig(%s) = %v, want a kora config error containing %q", c.raw, err, c.want)
		}
	}
}

func TestParseConfigLedger(t *testing.T) {
	cfg, err := ParseConfig(json.RawMessage(`{"state_dir": "s"}`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Ledger.Synchronous != "full" || cfg.Ledger.KeepDays != 0 || cfg.Ledger.ResolvedDSN() != "" {
		t.Errorf("ledger defaults = %+v, want synchronous full, keep forever, SQLite in state_dir", cfg.Ledger)
	}
	cfg, err = ParseConfig(json.RawMessage(`{"state_dir": "s", "ledger": {"dsn": "sqlite:/tmp/k.db", "synchronous": "normal", "keep_days": 30}}`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Ledger.ResolvedDSN() != "sqlite:/tmp/k.db" || cfg.Ledger.Synchronous != "normal" || cfg.Ledger.KeepDays != 30 {
		t.Errorf("ledger = %+v", cfg.Ledger)
	}
	t.Setenv("KORA_TEST_DB", "postgres://kora:s3cret@db.example:5432/kora")
	cfg, err = ParseConfig(json.RawMessage(`{"state_dir": "s", "ledger": {"dsn_env": "KORA_TEST_DB"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Ledger.ResolvedDSN() != "postgres://kora:s3cret@db.example:5432/kora" {
		t.Errorf("dsn from dsn_env = %q", cfg.Ledger.ResolvedDSN())
	}
}

func TestParseConfigLedgerErrors(t *testing.T) {
	t.Setenv("KORA_TEST_BAD_DB", "mysql://kora:s3cret@db/kora")
	t.Setenv("KORA_TEST_EMPTY_DB", "")
	cases := []struct{ ledger, want string }{
		{`{"keep_days": 3}`, "ledger.keep_days = 3 must be 0 (keep forever) or at least 8, so the 7d window keeps its details"},
		{`{"keep_days": -1}`, "ledger.keep_days = -1 must be 0"},
		{`{"keep_days": 8.5}`, "ledger.keep_days: expected a whole number, got number"},
		{`{"synchronous": "off"}`, `ledger.synchronous = "off" must be "full"`},
		{`{"dsn": "mysql://kora:s3cret@db/kora"}`, `ledger.dsn "mysql://..." is not a DSN Kora knows: use "sqlite:<path>" or "postgres://..."`},
		{`{"dsn": "host=db password=s3cret"}`, `ledger.dsn "..." is not a DSN Kora knows`},
		{`{"dsn": "sqlite:"}`, `ledger.dsn = "sqlite:" names no file`},
		{`{"dsn": "sqlite:a.db", "dsn_env": "KORA_TEST_BAD_DB"}`, "ledger.dsn and ledger.dsn_env are both set"},
		{`{"dsn_env": "KORA_DB_NOT_SET_ANYWHERE"}`, "ledger.dsn_env names KORA_DB_NOT_SET_ANYWHERE, which is not set in Kora's environment: list it in env of [plugins.entries.kora]; the host passes only the variables listed there"},
		{`{"dsn_env": "KORA_TEST_EMPTY_DB"}`, "ledger.dsn_env names KORA_TEST_EMPTY_DB, which is empty"},
		{`{"dsn_env": "KORA_TEST_BAD_DB"}`, `ledger.dsn_env (KORA_TEST_BAD_DB) "mysql://..." is not a DSN Kora knows`},
		{`{"dsn_env": "KORA-DB"}`, `ledger.dsn_env = "KORA-DB" is not an environment variable name`},
		{`{"path": "x"}`, `unknown key "ledger.path" (known keys here: dsn, dsn_env, keep_days, synchronous)`},
	}
	for _, c := range cases {
		_, err := ParseConfig(json.RawMessage(`{"state_dir": "s", "ledger": ` + c.ledger + `}`))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "kora: config: ") {
			t.Errorf("ledger %s: %v, want a kora config error containing %q", c.ledger, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("ledger %s: the error shows the password: %v", c.ledger, err)
		}
	}
}

// ParseConfigIn resolves relative paths against the config file's
// directory, as the plugin the host runs there does, and keeps absolute
// ones.
func TestParseConfigInResolvesAgainstTheFilesDirectory(t *testing.T) {
	for _, c := range []struct {
		raw, state, dsn string
	}{
		{`{"state_dir":"st","ledger":{"dsn":"sqlite:db/l.db"}}`, "/etc/hh/st", "sqlite:/etc/hh/db/l.db"},
		{`{"state_dir":"/var/kora","ledger":{"dsn":"sqlite:/var/l.db"}}`, "/var/kora", "sqlite:/var/l.db"},
		{`{"state_dir":"../k"}`, "/etc/k", ""},
	} {
		cfg, err := ParseConfigIn(json.RawMessage(c.raw), "/etc/hh")
		if err != nil || cfg.StateDir != c.state || cfg.Ledger.ResolvedDSN() != c.dsn {
			t.Errorf("%s: state_dir %q, dsn %q, %v; want %q, %q", c.raw, cfg.StateDir, cfg.Ledger.ResolvedDSN(), err, c.state, c.dsn)
		}
	}
}
