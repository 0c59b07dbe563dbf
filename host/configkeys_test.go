package host

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/hookhost/hookhost/config"
)

func keyedAs(t testing.TB, name string) string {
	t.Helper()
	return linkAs(t, filepath.Join(filepath.Dir(bins.echo), "keyed"), name)
}

// A config key the plugin's manifest does not declare stops the plugin
// before Configure, with the file, line and full key (the first such key
// in the file, when there are several); so does any config
// for a plugin that declares it takes none. A plugin that embeds sdk.Base
// without a Configure of its own refuses a non-empty table itself, and the
// host points at the table.
func TestConfigKeysCheckedAgainstTheManifest(t *testing.T) {
	t.Parallel()
	overProtocols(t, func(t *testing.T, v int) {
		src := fmt.Sprintf(`[plugins]
enabled = ["declared-ok", "declared-typo", "bare", "bare-empty", "based", "based-empty"]

[plugins.entries.declared-ok]
path = %q
protocol = %d
[plugins.entries.declared-ok.config]
deny = ["rm"]

[plugins.entries.declared-typo]
path = %q
protocol = %d
[plugins.entries.declared-typo.config]
deny = ["rm"]
denny = ["x"]
abc = 1

[plugins.entries.bare]
path = %q
protocol = %d
[plugins.entries.bare.config]
deny = ["rm"]

[plugins.entries.bare-empty]
path = %q
protocol = %d

[plugins.entries.based]
path = %q
protocol = %d
[plugins.entries.based.config]
deny = ["rm"]

[plugins.entries.based-empty]
path = %q
protocol = %d
`, keyedAs(t, "declared-ok"), v, keyedAs(t, "declared-typo"), v, keyedAs(t, "bare"), v,
			keyedAs(t, "bare-empty"), v, keyedAs(t, "based"), v, keyedAs(t, "based-empty"), v)
		cfg, err := config.Parse([]byte(src), "hookhost.toml", t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		h, errs := start(t, cfg, fastOptions())
		wantErr(t, errs, "declared-typo",
			"config: hookhost.toml:15: plugins.entries.declared-typo.config.denny: unknown key (the plugin takes deny, message)",
			"(fix: did you mean deny?)")
		wantErr(t, errs, "bare",
			"config: hookhost.toml:21: plugins.entries.bare.config: the plugin takes no config, but the table sets deny",
			"(fix: remove [plugins.entries.bare.config]")
		wantErr(t, errs, "based",
			"rejected its config: the plugin takes no config, but the table sets deny",
			"(fix: correct [plugins.entries.based.config] at hookhost.toml:31)")
		if len(errs) != 3 {
			t.Errorf("%d start errors, want 3 (declared-ok, bare-empty and based-empty start): %v", len(errs), errs)
		}
		var names []string
		for _, p := range h.Plugins() {
			if p.State == StateRunning {
				names = append(names, p.Name)
			}
		}
		if fmt.Sprint(names) != "[declared-ok bare-empty based-empty]" {
			t.Errorf("running plugins = %v, want [declared-ok bare-empty based-empty]", names)
		}
	})
}
