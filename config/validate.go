package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/hookhost/hookhost/llm"
)

// homeOf maps a key name to the tables it belongs in, to redirect keys
// written in the wrong table. A name used in several tables (timeout) maps
// to all of them, in the order the structs nest, so the hint does not vary
// by run.
var homeOf = func() map[string][]string {
	m := map[string][]string{}
	var walk func(table string, t reflect.Type)
	walk = func(table string, t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			k := f.Tag.Get("toml")
			if k == "" || k == "-" {
				continue
			}
			m[k] = append(m[k], table)
			sub := strings.TrimPrefix(table+"."+k, ".")
			switch {
			case f.Type.Kind() == reflect.Struct:
				walk(sub, f.Type)
			case f.Type.Kind() == reflect.Map && f.Type.Elem().Kind() == reflect.Struct:
				walk(sub+".<name>", f.Type.Elem())
			}
		}
	}
	walk("", reflect.TypeOf(Config{}))
	return m
}()

type decoder struct {
	file string
	pos  *positions
	errs []*Error
	// checkFS makes paths that must exist now be checked: a file that is
	// loaded describes this machine, data that is parsed may not.
	checkFS  bool
	dir      string              // relative paths in the file start here
	accepted map[string]rawEntry // the [plugins.entries.<name>] tables accepted
}

// directory checks that path, written at key, is an existing directory.
func (d *decoder) directory(key toml.Key, path string) {
	if !d.checkFS {
		return
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.fail(key, -1, "directory %q does not exist (create it, or name an existing directory; relative paths start at the config file's directory)", path)
	case err != nil:
		d.fail(key, -1, "cannot use directory %q: %v (fix its permissions, or name another directory)", path, err)
	case !fi.IsDir():
		d.fail(key, -1, "%q is not a directory (name the directory whose files read_file may read, or create one)", path)
	}
}

// report places the problems err holds at key; it says whether there were
// none.
func (d *decoder) report(key toml.Key, err error) bool {
	if err == nil {
		return true
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			d.report(key, e)
		}
		return false
	}
	p, ok := err.(*problem)
	if !ok {
		p = fault("%v", err)
	}
	k := join(key, p.at)
	d.errs = append(d.errs, &Error{File: d.file, Line: d.pos.line(k, p.item), Key: k.String(), Msg: p.msg})
	return false
}

func (d *decoder) fail(key toml.Key, elem int, format string, args ...any) {
	d.report(key, fault(format, args...).onItem(elem))
}

// rawEntry is an entry before paths can be resolved: plugins.dir may come
// after the entries in the map walk.
type rawEntry struct {
	PluginEntry
	path string
}

func parse(data []byte, filename, dir string, checkFS bool) (*Config, error) {
	var root map[string]any
	if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&root); err != nil {
		return nil, syntaxError(err, string(data), filename)
	}
	d := &decoder{file: filename, pos: scanPositions(string(data)), checkFS: checkFS, dir: dir, accepted: map[string]rawEntry{}}
	c := newDefault(dir)
	c.file, c.pos = filename, d.pos
	c.Plugins.Dir = defaultPluginDir
	d.decodeTable(nil, root, c)

	d.aliasConflicts(c)
	c.Plugins.Dir = resolve(dir, c.Plugins.Dir)
	for name, e := range d.accepted {
		e.Dir = dir
		if e.path != "" {
			e.Path = resolve(dir, e.path)
		} else {
			e.Path = filepath.Join(c.Plugins.Dir, name)
		}
		c.Plugins.Entries[name] = e.PluginEntry
	}
	for _, name := range c.Plugins.Enabled {
		if _, ok := c.Plugins.Entries[name]; !ok {
			c.Plugins.Entries[name] = defaultEntry(dir, c.Plugins.Dir, name)
		}
	}
	if d.checkFS {
		d.strayEntries(c, d.accepted)
	}

	if len(d.errs) > 0 {
		return nil, d.err()
	}
	return c, nil
}

// strayEntries refuses the table of a plugin that is neither enabled nor
// installed: most likely a misspelt name, whose settings (fail_closed for
// a guard) would otherwise be silently ignored.
func (d *decoder) strayEntries(c *Config, entries map[string]rawEntry) {
	var installed []string
	if des, err := os.ReadDir(c.Plugins.Dir); err == nil {
		for _, de := range des {
			if !de.IsDir() {
				installed = append(installed, de.Name())
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		if slices.Contains(c.Plugins.Enabled, name) {
			continue
		}
		e := c.Plugins.Entries[name]
		if _, err := os.Stat(e.Path); err == nil {
			continue
		}
		key := toml.Key{"plugins", "entries", name}
		near := closest(name, c.Plugins.Enabled)
		if near == "" {
			near = closest(name, installed)
		}
		where := fmt.Sprintf("installed in %s", c.Plugins.Dir)
		if entries[name].path != "" {
			where = fmt.Sprintf("installed at %s (its path)", e.Path)
		}
		hint := "enable it in plugins.enabled and install its binary, or remove the table"
		if near != "" {
			hint = fmt.Sprintf("did you mean %s?", near)
		}
		d.fail(key, -1, "no plugin %q is enabled or %s (%s)", name, where, hint)
	}
}

// err returns the collected problems in file order.
func (d *decoder) err() error {
	sort.SliceStable(d.errs, func(i, j int) bool {
		if d.errs[i].Line != d.errs[j].Line {
			return d.errs[i].Line < d.errs[j].Line
		}
		return d.errs[i].Key < d.errs[j].Key
	})
	if len(d.errs) == 1 {
		return d.errs[0]
	}
	errs := make([]error, len(d.errs))
	for i, e := range d.errs {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// validate fills in the defaults that depend on the provider and checks
// the keys that only make sense together, once every key is valid.
func (c *LLM) validate(d *decoder, key toml.Key, set map[string]bool, ok, _ bool) bool {
	if !ok {
		return false
	}
	at := func(k string) toml.Key { return join(key, toml.Key{k}) }
	info, _ := llm.LookupProvider(c.Provider)
	if !set["model"] {
		switch {
		case c.Tiers.Small != "":
			c.Model = c.Tiers.Small
		case c.Provider != defaultProvider:
			d.fail(at("model"), -1, "is required with provider %q (name the model, e.g. model = %q, or set [llm.tiers] small)", c.Provider, info.ExampleModel)
		}
	}
	// api picks one of OpenAI's two APIs; it means nothing to a provider
	// that does not speak both.
	choosesAPI := info.Speaks(llm.ProtocolChat) && info.Speaks(llm.ProtocolResponses)
	switch {
	case choosesAPI && c.API == "":
		c.API = apiChat
	case !choosesAPI && len(info.Protocols) > 0 && set["api"]:
		d.fail(at("api"), -1, "applies only to provider \"openai\" (%s has one API; remove the key)", c.Provider)
	case !choosesAPI:
		// The offline model ignores the network settings, so a file can
		// switch to it for a demo without losing them.
		c.API = ""
	}
	if c.MaxTokens == 0 {
		c.MaxTokens = info.DefaultMaxTokens
	}
	if c.Temperature != nil && info.MaxTemperature > 0 && *c.Temperature > info.MaxTemperature {
		d.fail(at("temperature"), -1, "must be between 0 and %v for %s, got %v", info.MaxTemperature, c.Provider, *c.Temperature)
	}
	if info.Speaks(llm.ProtocolMessages) && strings.HasSuffix(c.BaseURL, "/v1") {
		d.fail(at("base_url"), -1, "ends in \"/v1\", but \"/v1/messages\" is added to it (drop the \"/v1\", e.g. %q)", info.DefaultBaseURL)
	}
	// A whole call includes at least one attempt, so call_timeout left
	// unset grows with timeout, and one set below it is a mistake.
	switch {
	case !set["call_timeout"]:
		c.CallTimeout = max(defaultCallTimeout, c.Timeout)
	case c.CallTimeout < c.Timeout:
		timeout := fmt.Sprintf("default %q", c.Timeout.String())
		if set["timeout"] {
			where := fmt.Sprintf("line %d", d.pos.line(at("timeout"), -1))
			if d.file != "" {
				where = fmt.Sprintf("%s:%d", d.file, d.pos.line(at("timeout"), -1))
			}
			timeout = fmt.Sprintf("%q at %s", c.Timeout.String(), where)
		}
		d.fail(at("call_timeout"), -1, "is %s, shorter than %s (%s), so no attempt could run its full time (raise call_timeout to at least %s, or lower timeout)",
			c.CallTimeout, at("timeout"), timeout, c.Timeout)
	}
	if !set["base_url"] {
		c.BaseURL = info.DefaultBaseURL
	}
	if !set["api_key_env"] {
		c.APIKeyEnv = info.KeyEnv
	}
	return true
}

func (t *Tiers) validate(d *decoder, key toml.Key, _ map[string]bool, _, clean bool) bool {
	if clean && t.Small != "" && t.Small == t.Strong {
		d.fail(join(key, toml.Key{"strong"}), -1, "is the same model as small, %q (escalation needs a stronger model; remove strong if there is none)", abbrev(t.Small))
		return false
	}
	return clean
}

// entries decodes [plugins.entries]: each valid table becomes an entry in
// d.entries, resolved once plugins.dir is known.
func (d *decoder) entries(key toml.Key, v any) bool {
	m, err := asTable(key, v)
	if !d.report(key, err) {
		return false
	}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		nk := join(key, toml.Key{name})
		if p := checkPluginName(name); p != nil {
			d.report(nk, p)
			continue
		}
		e := rawEntry{PluginEntry: defaultEntry("", "", "")}
		if _, _, clean := d.decodeTable(nk, m[name], &e.PluginEntry); !clean {
			continue
		}
		e.path = e.Path
		e.Source = Source{File: d.file, Line: d.pos.line(nk, -1)}
		if cm, ok := m[name].(map[string]any)["config"].(map[string]any); ok {
			ck := join(nk, toml.Key{"config"})
			e.Source.ConfigLine = d.pos.line(ck, -1)
			e.Source.ConfigKeys = map[string]int{}
			for k := range cm {
				e.Source.ConfigKeys[k] = d.pos.line(join(ck, toml.Key{k}), -1)
			}
		}
		d.accepted[name] = e
	}
	return true
}

// The plugin message size limits, copied from internal/wire because
// config does not import the plugin side; wire's tests check that the two
// agree. maxMessageSize is what the SDK's server accepts; the defaults are
// what an entry without the keys gets, quoted in messages.
const (
	maxMessageSize        = 256 << 20
	defaultMaxResultSize  = 4 << 20
	defaultMaxRequestSize = 16 << 20
)

// reattach takes the JSON a plugin started with HOOKHOST_PLUGIN_DEBUG=1
// prints; the plugin is then attached, not launched. Which plugin the JSON
// must be for is in the key, plugins.entries.<name>.reattach.
func (d *decoder) reattach(key toml.Key, v any, dst reflect.Value) bool {
	s, err := asString(nameOf(key), v)
	if err != nil || strings.TrimSpace(s) == "" {
		return d.report(key, err)
	}
	r, err := ParseReattach(key[len(key)-2], s)
	if err != nil {
		return d.report(key, fault("%v (or remove the key to launch the plugin's binary)", err))
	}
	dst.Set(reflect.ValueOf(&r))
	return true
}

func (d *decoder) unknown(key toml.Key, known []string, v any) {
	name := key[len(key)-1]
	table := key[:len(key)-1].String()
	var hint string
	if near := closest(name, known); near != "" {
		hint = fmt.Sprintf("did you mean %s?", near)
	} else if homes, ok := homeOf[name]; ok {
		if homes[0] == "" {
			hint = fmt.Sprintf("%s is a top-level table; move it out of [%s]", name, table)
		} else {
			hint = fmt.Sprintf("%s belongs in [%s]", name, strings.Join(homes, "] or ["))
		}
	} else if _, isTable := v.(map[string]any); isTable && table == "plugins" {
		hint = fmt.Sprintf("settings for a plugin go in [plugins.entries.%s]", key[len(key)-1:].String())
	} else if table == "" {
		hint = "remove it; the top-level tables are " + strings.Join(known, ", ")
	} else {
		hint = fmt.Sprintf("remove it; keys allowed in [%s] are %s", table, strings.Join(known, ", "))
	}
	d.fail(key, -1, "unknown key (%s)", hint)
}

// Suggest returns the candidate s is most likely a misspelling of, or ""
// when none is close: the suggestion config errors make for unknown keys,
// for others (the host, a plugin's declared config keys) to make the same.
func Suggest(s string, candidates []string) string { return closest(s, candidates) }

// closest returns the candidate within edit distance 2 of s, if any, so
// typos get a suggestion. Very short words are left alone: every short key
// is within 2 edits of them.
func closest(s string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(s), c); d < bestDist && d < len(s) {
			best, bestDist = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
