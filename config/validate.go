package config

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/hookhost/hookhost/llm"
)

var (
	entryKeys  = keysOf(PluginEntry{})
	serverKeys = keysOf(Server{})
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
			if k == "" {
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

const maxPluginName = 48

var (
	// Tool names are "<plugin>__<tool>", so a plugin name must not contain
	// "__" or the split would be ambiguous.
	pluginNameRE = regexp.MustCompile(`^[a-zA-Z0-9-]+(_[a-zA-Z0-9-]+)*$`)
	envNameRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

type decoder struct {
	file string
	pos  *positions
	errs []*Error
	// checkFS makes paths that must exist now be checked: a file that is
	// loaded describes this machine, data that is parsed may not.
	checkFS bool
	dir     string              // relative paths in the file start here
	entries map[string]rawEntry // the [plugins.entries.<name>] tables accepted
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

func (d *decoder) fail(key toml.Key, elem int, format string, args ...any) {
	d.errs = append(d.errs, &Error{
		File: d.file,
		Line: d.pos.line(key, elem),
		Key:  key.String(),
		Msg:  fmt.Sprintf(format, args...),
	})
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
	d := &decoder{file: filename, pos: scanPositions(string(data)), checkFS: checkFS, dir: dir, entries: map[string]rawEntry{}}
	c := newDefault(dir)
	c.file, c.pos = filename, d.pos
	c.Plugins.Dir = defaultPluginDir
	d.decodeTable(nil, root, c)

	d.aliasConflicts(c)
	c.Plugins.Dir = resolve(dir, c.Plugins.Dir)
	for name, e := range d.entries {
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
		d.strayEntries(c, d.entries)
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

func syntaxError(err error, src, filename string) error {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return &Error{File: filename, Msg: fmt.Sprintf("invalid TOML: %v", err)}
	}
	// The parser reports an error found at a line's closing newline on the
	// next line, which may not even exist; the byte offset is reliable.
	line := pe.Position.Line
	if start := pe.Position.Start; start > 0 && start <= len(src) {
		line = strings.Count(src[:start], "\n") + 1
	}
	key, value := syntaxKey(src, line)
	if strings.Trim(key, ".") == "" {
		key = pe.LastKey
	}
	if strings.Trim(key, ".") == "" {
		// No key can be read off a line this broken; the table it is in
		// is the closest thing to name.
		key = syntaxTable(src, line)
	}
	hint := "fix the TOML syntax on this line; config.toml.example shows every key"
	if value != "" && unquotedWord.MatchString(value) && !numberLike.MatchString(value) && value != "true" && value != "false" {
		name := key[strings.LastIndex(key, ".")+1:]
		switch name {
		case "gateway", "fail_closed", "allow_tool_override", "allow_no_key", "forward_client_key":
			hint = fmt.Sprintf("write %s = true or %s = false", name, name)
		case "max_iterations":
			hint = fmt.Sprintf("write a whole number, e.g. %s = %d", name, defaultMaxIterations)
		case "max_tokens":
			hint = fmt.Sprintf("write a whole number, e.g. %s = %d", name, defaultAnthropicMaxTokens)
		case "max_retries":
			hint = fmt.Sprintf("write a whole number, e.g. %s = %d", name, defaultMaxRetries)
		case "temperature":
			hint = fmt.Sprintf("write a number, e.g. %s = 0.2", name)
		case "max_body_size":
			hint = fmt.Sprintf("write the size in bytes, e.g. %s = %d", name, defaultMaxBodySize)
		case "max_concurrent":
			hint = fmt.Sprintf("write a whole number, e.g. %s = %d", name, defaultMaxConcurrent)
		case "state_entries":
			hint = fmt.Sprintf("write a whole number, e.g. %s = %d", name, defaultStateEntries)
		case "responses_entries":
			hint = fmt.Sprintf("write a whole number, e.g. %s = %d", name, DefaultResponsesEntries)
		case "responses_max_bytes":
			hint = fmt.Sprintf("write the size in bytes, e.g. %s = %d", name, DefaultResponsesMaxBytes)
		default:
			hint = fmt.Sprintf("strings need double quotes: %s = %q", name, value)
		}
	}
	return &Error{File: filename, Line: line, Key: key, Msg: fmt.Sprintf("invalid TOML: %s (%s)", pe.Message, hint)}
}

// provider is a name in llm's registry: the providers linked into the
// program register themselves there.
func (d *decoder) provider(key toml.Key, v any) (string, bool) {
	s, ok := d.str(key, v)
	providers := llm.ProviderNames()
	if ok && !slices.Contains(providers, s) {
		hint := ""
		if near := closest(s, providers); near != "" {
			hint = fmt.Sprintf("did you mean %q? ", near)
		}
		d.fail(key, -1, "unknown provider %q (%suse one of: %s)", s, hint, strings.Join(providers, ", "))
		return "", false
	}
	return s, ok
}

func (d *decoder) api(key toml.Key, v any) (string, bool) {
	s, ok := d.str(key, v)
	if ok && s != apiChat && s != apiResponses {
		d.fail(key, -1, "unknown api %q (use %q for Chat Completions or %q for the Responses API)", abbrev(s), apiChat, apiResponses)
		return "", false
	}
	return s, ok
}

func checkMaxTokens(d *decoder, key toml.Key, n int64) bool {
	switch {
	case n < 1:
		d.fail(key, -1, "must be at least 1, got %d (remove the key to let the provider decide; anthropic then uses %d)", n, defaultAnthropicMaxTokens)
	case n > math.MaxInt32:
		d.fail(key, -1, "must be at most %d, got %d (no model writes that much; anthropic's default is %d)", math.MaxInt32, n, defaultAnthropicMaxTokens)
	default:
		return true
	}
	return false
}

func checkMaxRetries(d *decoder, key toml.Key, n int64) bool {
	if n < 0 || n > maxRetriesLimit {
		d.fail(key, -1, "must be between 0 and %d, got %d (0 turns retries off; the default is %d)", maxRetriesLimit, n, defaultMaxRetries)
		return false
	}
	return true
}

func checkMaxIterations(d *decoder, key toml.Key, n int64) bool {
	switch {
	case n < 1:
		d.fail(key, -1, "must be at least 1, got %d (it caps model calls per user message; the default is %d)", n, defaultMaxIterations)
	case n > math.MaxInt32:
		d.fail(key, -1, "must be at most %d, got %d (it caps model calls per user message; the default is %d)", math.MaxInt32, n, defaultMaxIterations)
	default:
		return true
	}
	return false
}

func (d *decoder) temperature(key toml.Key, v any) (*float64, bool) {
	t, ok := d.number(key, v, 0.2)
	if ok && (t < 0 || t > 2 || math.IsNaN(t)) {
		d.fail(key, -1, "must be between 0 and 2, got %v (remove the key to use the model's default)", t)
		return nil, false
	}
	return &t, ok
}

// check fills in the defaults that depend on the provider and checks the
// keys that only make sense together, once every key is valid.
func (c *LLM) check(d *decoder, key toml.Key, set map[string]bool, ok, _ bool) bool {
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

func (t *Tiers) check(d *decoder, key toml.Key, _ map[string]bool, _, clean bool) bool {
	if clean && t.Small != "" && t.Small == t.Strong {
		d.fail(join(key, toml.Key{"strong"}), -1, "is the same model as small, %q (escalation needs a stronger model; remove strong if there is none)", abbrev(t.Small))
		return false
	}
	return clean
}

func (d *decoder) baseURL(key toml.Key, v any) (string, bool) {
	s, ok := d.str(key, v)
	if !ok {
		return "", false
	}
	u, err := url.Parse(strings.TrimSpace(s))
	switch {
	case s == "":
		d.fail(key, -1, "must not be empty (remove the key to use the provider's own API)")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		d.fail(key, -1, "%q is not an http or https URL (e.g. %q for a local Ollama)", abbrev(s), "http://localhost:11434/v1")
	case u.User != nil:
		// Never echo it: the user part is a credential.
		d.fail(key, -1, "must not contain a user name or password (the key comes from the variable named by api_key_env)")
	case u.RawQuery != "" || u.Fragment != "":
		d.fail(key, -1, "%q must not have a query or fragment (the endpoint path is appended to it)", abbrev(s))
	default:
		return strings.TrimRight(strings.TrimSpace(s), "/"), true
	}
	return "", false
}

func (d *decoder) apiKeyEnv(key toml.Key, v any) (string, bool) {
	s, ok := d.str(key, v)
	if !ok || s == "" || envNameRE.MatchString(s) {
		return s, ok
	}
	// Never echo the value: a key pasted here by mistake is a secret.
	d.fail(key, -1, "must be the name of an environment variable (letters, digits and \"_\", e.g. \"OPENAI_API_KEY\"), not the key itself; \"\" sends no key")
	return "", false
}

// headerNameRE is an HTTP token.
var headerNameRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// secretHeaders carry credentials, which come from api_key_env only.
var secretHeaders = []string{"authorization", "x-api-key", "api-key", "proxy-authorization"}

func (d *decoder) headers(key toml.Key, v any) (map[string]string, bool) {
	return d.stringMap(key, v, func(kk toml.Key, name, s string) bool {
		switch {
		case !headerNameRE.MatchString(name):
			d.fail(kk, -1, "%q is not a valid HTTP header name", abbrev(name))
		case slices.Contains(secretHeaders, strings.ToLower(name)):
			d.fail(kk, -1, "credentials do not go in this file (name the environment variable holding the key in api_key_env)")
		case strings.ContainsAny(s, "\r\n\x00"):
			d.fail(kk, -1, "header value must be a single line")
		default:
			return true
		}
		return false
	})
}

func (d *decoder) enabled(key toml.Key, v any) ([]string, bool) {
	first := map[string]int{}
	return d.list(key, v, func(i int, name string) bool {
		if !d.pluginName(key, i, name) {
			return false
		}
		if j, dup := first[name]; dup {
			d.fail(key, i, "plugin %q is enabled twice, as items %d and %d (list it once; the order sets priority)", name, j+1, i+1)
			return false
		}
		first[name] = i
		return true
	})
}

// entriesRule decodes [plugins.entries]: each valid table becomes an entry
// in d.entries, resolved once plugins.dir is known.
func (d *decoder) entriesRule(key toml.Key, v any, _ reflect.Value) bool {
	m, ok := d.table(key, v)
	if !ok {
		return false
	}
	for _, name := range sortedKeys(m) {
		nk := join(key, toml.Key{name})
		if !d.pluginName(nk, -1, name) {
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
		d.entries[name] = e
	}
	return true
}

func (d *decoder) pluginName(key toml.Key, elem int, name string) bool {
	switch {
	case name == "":
		d.fail(key, elem, "plugin name is empty (use letters, digits, \"-\" and single \"_\")")
	case len(name) > maxPluginName:
		d.fail(key, elem, "plugin name %q is %d characters long (at most %d)", name, len(name), maxPluginName)
	case strings.Contains(name, "__"):
		d.fail(key, elem, "bad plugin name %q: \"__\" separates a plugin's name from its tool names (use a single \"_\" or \"-\")", name)
	case !pluginNameRE.MatchString(name):
		d.fail(key, elem, "bad plugin name %q (use letters, digits, \"-\" and single \"_\" between them, at most %d characters)", name, maxPluginName)
	default:
		return true
	}
	return false
}

// The plugin message size limits, copied from internal/wire because
// config imports nothing of the project's; wire's tests check that the two
// agree. maxMessageSize is what the SDK's server accepts; the defaults are
// what an entry without the keys gets, quoted in messages.
const (
	maxMessageSize        = 256 << 20
	defaultMaxResultSize  = 4 << 20
	defaultMaxRequestSize = 16 << 20
)

func checkMessageSize(example int64) func(d *decoder, key toml.Key, n int64) bool {
	return func(d *decoder, key toml.Key, n int64) bool {
		if n < 1 || n > maxMessageSize {
			d.fail(key, -1, "must be between 1 and %d bytes (256 MiB), got %d (write the size in bytes, e.g. %s = %d)", maxMessageSize, n, key[len(key)-1], example)
			return false
		}
		return true
	}
}

func checkProtocol(d *decoder, key toml.Key, n int64) bool {
	if n < 0 || n > 2 {
		d.fail(key, -1, "must be 1 or 2 to pin the plugin protocol version, or 0 to use the highest the plugin speaks, got %d", n)
		return false
	}
	return true
}

// reattach takes the JSON a plugin started with HOOKHOST_PLUGIN_DEBUG=1
// prints; the plugin is then attached, not launched.
func (d *decoder) reattach(key toml.Key, name string, v any) (*Reattach, bool) {
	s, ok := d.str(key, v)
	if !ok {
		return nil, false
	}
	if strings.TrimSpace(s) == "" {
		return nil, true
	}
	r, err := ParseReattach(name, s)
	if err != nil {
		d.fail(key, -1, "%v (or remove the key to launch the plugin's binary)", err)
		return nil, false
	}
	return &r, true
}

func (d *decoder) sha256(key toml.Key, v any) (string, bool) {
	s, ok := d.str(key, v)
	if !ok || s == "" {
		return "", ok
	}
	if _, err := hex.DecodeString(s); err != nil || len(s) != 64 {
		d.fail(key, -1, "must be 64 hexadecimal characters, got %q (compute it with: sha256sum <plugin binary>; or remove the key to skip the check)", abbrev(s))
		return "", false
	}
	return strings.ToLower(s), true
}

func (d *decoder) env(key toml.Key, v any) ([]string, bool) {
	return d.list(key, v, func(i int, n string) bool {
		if envNameRE.MatchString(n) {
			return true
		}
		if name, _, found := strings.Cut(n, "="); found && envNameRE.MatchString(name) {
			// Never echo the value: it is probably a secret.
			d.fail(key, i, "item %d looks like NAME=value (list only the name %q; the plugin gets the value from the host's environment, so secrets stay out of this file)", i+1, name)
			return false
		}
		d.fail(key, i, "item %d, %q, is not an environment variable name (use letters, digits and \"_\", not starting with a digit)", i+1, abbrev(n))
		return false
	})
}

// pluginConfig turns the free-form table into JSON, which is how the plugin
// receives it.
func (d *decoder) pluginConfig(key toml.Key, v any) (json.RawMessage, bool) {
	m, ok := d.table(key, v)
	if !ok {
		return nil, false
	}
	jv, ok := d.jsonValue(key, m)
	if !ok {
		return nil, false
	}
	b, err := json.Marshal(jv)
	if err != nil {
		d.fail(key, -1, "cannot be converted to JSON: %v", err)
		return nil, false
	}
	return b, true
}

// jsonValue converts TOML values that JSON has no faithful form for.
func (d *decoder) jsonValue(key toml.Key, v any) (any, bool) {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		ok := true
		for k, x := range v {
			var good bool
			out[k], good = d.jsonValue(join(key, toml.Key{k}), x)
			ok = ok && good
		}
		return out, ok
	case []map[string]any:
		out := make([]any, len(v))
		ok := true
		for i, x := range v {
			var good bool
			out[i], good = d.jsonValue(key, x)
			ok = ok && good
		}
		return out, ok
	case []any:
		out := make([]any, len(v))
		ok := true
		for i, x := range v {
			var good bool
			out[i], good = d.jsonValue(key, x)
			ok = ok && good
		}
		return out, ok
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			d.fail(key, -1, "%v cannot be represented in JSON (use a finite number or a string)", v)
			return nil, false
		}
		return v, true
	case time.Time:
		// Local date-times carry no zone; keep them as TOML wrote them
		// rather than inventing an offset.
		switch v.Location().String() {
		case "datetime-local":
			return v.Format("2006-01-02T15:04:05.999999999"), true
		case "date-local":
			return v.Format("2006-01-02"), true
		case "time-local":
			return v.Format("15:04:05.999999999"), true
		}
		return v.Format(time.RFC3339Nano), true
	}
	return v, true
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

// Typed accessors. Each reports a mismatch itself, with an example of the
// right form, and returns ok=false.

func (d *decoder) table(key toml.Key, v any) (map[string]any, bool) {
	if m, ok := v.(map[string]any); ok {
		return m, true
	}
	d.fail(key, -1, "expected a table, got %s (write a [%s] header and put its keys below it)", describe(v), key)
	return nil, false
}

func (d *decoder) str(key toml.Key, v any) (string, bool) {
	if s, ok := v.(string); ok {
		return s, true
	}
	d.fail(key, -1, "expected a string, got %s (put the value in double quotes: %s = \"...\")", describe(v), key[len(key)-1])
	return "", false
}

// nonEmpty is a string key whose empty value would only be a mistake.
func (d *decoder) nonEmpty(key toml.Key, v any, def string) (string, bool) {
	s, ok := d.str(key, v)
	if ok && s == "" {
		d.fail(key, -1, "must not be empty (remove the key to use the default %q)", def)
		return "", false
	}
	return s, ok
}

func (d *decoder) boolean(key toml.Key, v any) (bool, bool) {
	if b, ok := v.(bool); ok {
		return b, true
	}
	name := key[len(key)-1]
	d.fail(key, -1, "expected true or false, got %s (write %s = true or %s = false, without quotes)", describe(v), name, name)
	return false, false
}

func (d *decoder) integer(key toml.Key, v any, example int64) (int64, bool) {
	if n, ok := v.(int64); ok {
		return n, true
	}
	if s, ok := v.(string); ok {
		if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
			example = n
		}
	}
	d.fail(key, -1, "expected an integer, got %s (write a whole number without quotes: %s = %d)", describe(v), key[len(key)-1], example)
	return 0, false
}

// number accepts integers too: temperature = 1 is as natural as 1.0.
func (d *decoder) number(key toml.Key, v any, example float64) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int64:
		return float64(n), true
	}
	d.fail(key, -1, "expected a number, got %s (write it without quotes: %s = %v)", describe(v), key[len(key)-1], example)
	return 0, false
}

func (d *decoder) stringList(key toml.Key, v any) ([]string, bool) {
	name := key[len(key)-1]
	arr, ok := v.([]any)
	if !ok {
		example := `["..."]`
		if s, isStr := v.(string); isStr {
			example = fmt.Sprintf("[%q]", s)
		}
		d.fail(key, -1, "expected an array of strings, got %s (write %s = %s)", describe(v), name, example)
		return nil, false
	}
	out := make([]string, len(arr))
	for i, x := range arr {
		s, isStr := x.(string)
		if !isStr {
			d.fail(key, i, "item %d: expected a string, got %s (put every item in double quotes)", i+1, describe(x))
			ok = false
			continue
		}
		out[i] = s
	}
	return out, ok
}

// list is an array of strings each of which item accepts (reporting the
// problem itself when it does not); an empty one is nil. The result is
// whole only when ok.
func (d *decoder) list(key toml.Key, v any, item func(i int, s string) bool) ([]string, bool) {
	names, ok := d.stringList(key, v)
	if !ok {
		return nil, false
	}
	for i, s := range names {
		ok = item(i, s) && ok
	}
	return nilIfEmpty(names), ok
}

// stringMap is a table of strings each of which item accepts; an empty one
// is nil. The result holds the accepted entries; it is whole only when ok.
func (d *decoder) stringMap(key toml.Key, v any, item func(kk toml.Key, name, s string) bool) (map[string]string, bool) {
	m, ok := d.table(key, v)
	if !ok {
		return nil, false
	}
	out := map[string]string{}
	for _, name := range sortedKeys(m) {
		kk := join(key, toml.Key{name})
		s, good := d.str(kk, m[name])
		if good = good && item(kk, name, s); good {
			out[name] = s
		}
		ok = ok && good
	}
	if len(out) == 0 {
		out = nil
	}
	return out, ok
}

func (d *decoder) duration(key toml.Key, v any, def time.Duration) (time.Duration, bool) {
	s, ok := v.(string)
	if !ok {
		d.fail(key, -1, "expected a duration string, got %s (write %s = %q; use Go durations such as \"500ms\" or \"2s\")", describe(v), key[len(key)-1], def.String())
		return 0, false
	}
	dur, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil && durationSyntax.MatchString(strings.TrimSpace(s)) {
		// Well formed, so it can only have overflowed.
		d.fail(key, -1, "%q is too large (at most %s, about 292 years; the default is %q)", abbrev(s), time.Duration(math.MaxInt64), def.String())
		return 0, false
	}
	if err != nil {
		d.fail(key, -1, "bad duration %q (use Go durations such as \"500ms\" or \"2s\")", abbrev(s))
		return 0, false
	}
	if dur <= 0 {
		d.fail(key, -1, "must be greater than zero, got %q (use e.g. \"500ms\" or \"2s\"; the default is %q)", s, def.String())
		return 0, false
	}
	return dur, true
}

// durationSyntax is what time.ParseDuration accepts, whatever the size.
var durationSyntax = regexp.MustCompile(`^[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`)

func describe(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("string %q", abbrev(v))
	case int64:
		return fmt.Sprintf("integer %d", v)
	case float64:
		return fmt.Sprintf("float %v", v)
	case bool:
		return fmt.Sprintf("boolean %t", v)
	case time.Time:
		return "date-time"
	case []any, []map[string]any:
		return "array"
	case map[string]any:
		return "table"
	}
	return fmt.Sprintf("%T", v)
}

// abbrev keeps echoed values short; a long value is more likely pasted by
// mistake, and perhaps sensitive.
func abbrev(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
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

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
