package config

import (
	"cmp"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/BurntSushi/toml"

	"github.com/hookhost/hookhost/llm"
)

// A rule decodes and checks one key's value. decode gets the field's
// default, which messages quote, and returns what the field is set to,
// only once the value is accepted: a field keeps its default otherwise.
// What is wrong comes back as problems, which the walk places at the
// key's line. hint, when set, is the form of a value written without
// quotes that is no number and no boolean, a format of the key's name and
// example (or, when 0, the default).
type rule struct {
	decode  func(key toml.Key, v any, def reflect.Value) (any, error)
	hint    string
	example int64
}

// rules maps a rule tag to its rule.
var rules = map[string]rule{
	"provider": text(func(s string) error {
		providers := llm.ProviderNames()
		return when(!slices.Contains(providers, s), "unknown provider %q (%suse one of: %s)", s, didYouMean(s, providers), strings.Join(providers, ", "))
	}),
	"model":      nonEmpty(defaultModel),
	"tier":       nonEmpty(""),
	"plugin_dir": nonEmpty(defaultPluginDir),
	"read_root":  nonEmpty(defaultReadRoot),
	"api": text(func(s string) error {
		return when(s != apiChat && s != apiResponses, "unknown api %q (use %q for Chat Completions or %q for the Responses API)", abbrev(s), apiChat, apiResponses)
	}),
	"base_url": text(func(s string) error {
		u, err := url.Parse(strings.TrimSpace(s))
		notURL := err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == ""
		return cmp.Or(
			when(s == "", "must not be empty (remove the key to use the provider's own API)"),
			when(notURL, "%q is not an http or https URL (e.g. %q for a local Ollama)", abbrev(s), "http://localhost:11434/v1"),
			// Never echo it: the user part is a credential.
			when(u != nil && u.User != nil, "must not contain a user name or password (the key comes from the variable named by api_key_env)"),
			when(u != nil && (u.RawQuery != "" || u.Fragment != ""), "%q must not have a query or fragment (the endpoint path is appended to it)", abbrev(s)))
	}, func(s string) string { return strings.TrimRight(strings.TrimSpace(s), "/") }),
	// An environment variable holding a key; "" sends none. Never echo
	// the value: a key pasted here by mistake is a secret.
	"api_key_env": text(func(s string) error {
		return when(s != "" && !envNameRE.MatchString(s), "must be the name of an environment variable (letters, digits and \"_\", e.g. \"OPENAI_API_KEY\"), not the key itself; \"\" sends no key")
	}),
	"state_url_env": text(func(s string) error {
		bad := s != "" && !envNameRE.MatchString(s)
		return cmp.Or(
			// Never echo the value: the URL may carry a password.
			when(bad && strings.Contains(s, "://"), "must be the name of an environment variable holding the URL (e.g. %q), not the URL itself, which carries the password; set the variable to the redis:// or rediss:// URL", exampleStateURLEnv),
			when(bad, "%q is not an environment variable name (letters, digits and \"_\", not starting with a digit, e.g. %q)", abbrev(s), exampleStateURLEnv))
	}),
	"state_backend": text(func(s string) error {
		return when(s != StateMemory && s != StateRedis, "unknown state backend %q (%suse %q to keep state in this process, or %q for a Redis or Valkey server shared by several replicas)", abbrev(s), didYouMean(s, []string{StateMemory, StateRedis}), StateMemory, StateRedis)
	}).with(`strings need double quotes: %[1]s = "` + StateRedis + `"`),
	"on_ask": text(func(s string) error {
		return when(s != OnAskBlock && s != OnAskAllow, "unknown value %q (%suse %q to block a plugin's or an MCP server's tool call a plugin asks a person to approve, since the gateway has no one to ask, or %q to run it)", abbrev(s), didYouMean(s, []string{OnAskBlock, OnAskAllow}), OnAskBlock, OnAskAllow)
	}).with(`strings need double quotes: %[1]s = "` + OnAskBlock + `"`),
	"state_prefix": text(func(s string) error {
		odd := strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0
		return when(len(s) > 64 || odd, "%q must be at most 64 characters without spaces or control characters (e.g. prefix = %q)", abbrev(s), defaultStatePrefix)
	}),
	"sha256": text(func(s string) error {
		_, err := hex.DecodeString(s)
		return when(s != "" && (err != nil || len(s) != 64), "must be 64 hexadecimal characters, got %q (compute it with: sha256sum <plugin binary>; or remove the key to skip the check)", abbrev(s))
	}, strings.ToLower),
	// host:port, host possibly empty (every interface) and port possibly
	// 0 (any free port).
	"listen": text(func(s string) error {
		s = strings.TrimSpace(s)
		host, port, err := net.SplitHostPort(s)
		n, nerr := strconv.ParseUint(port, 10, 16)
		return cmp.Or(
			when(err != nil, "%q is not host:port (write e.g. listen = %q; an IPv6 host goes in brackets, \"[::1]:8080\")", abbrev(s), defaultListen),
			when(nerr != nil || (n == 0 && port != "0"), "port %q is not a number between 0 and 65535 (write e.g. listen = %q)", abbrev(port), defaultListen),
			when(strings.ContainsAny(host, " /\\\t"), "host %q is not a host name or IP address (write e.g. listen = %q)", abbrev(host), defaultListen))
	}, strings.TrimSpace),
	"headers": stringMap(func(name, s string) error {
		return cmp.Or(
			when(!headerNameRE.MatchString(name), "%q is not a valid HTTP header name", abbrev(name)),
			when(slices.Contains(secretHeaders, strings.ToLower(name)), "credentials do not go in this file (name the environment variable holding the key in api_key_env)"),
			when(strings.ContainsAny(s, "\r\n\x00"), "header value must be a single line"))
	}),
	"model_aliases": {decode: decodeAliases},
	"string_map":    stringMap(nil),
	// temperature = 1 is as natural as 1.0.
	"temperature": rule{decode: func(key toml.Key, v any, _ reflect.Value) (any, error) {
		f, isFloat := v.(float64)
		if n, isInt := v.(int64); isInt {
			f, isFloat = float64(n), true
		}
		if !isFloat {
			return nil, fault("expected a number, got %s (write it without quotes: %s = %v)", describe(v), nameOf(key), 0.2)
		}
		return f, when(f < 0 || f > 2 || math.IsNaN(f), "must be between 0 and 2, got %v (remove the key to use the model's default)", f)
	}}.with("write a number, e.g. %[1]s = 0.2"),
	"max_tokens": integer(defaultAnthropicMaxTokens, wholeNumber, func(_ string, n, _ int64) error {
		return cmp.Or(
			when(n < 1, "must be at least 1, got %d (remove the key to let the provider decide; anthropic then uses %d)", n, defaultAnthropicMaxTokens),
			when(n > math.MaxInt32, "must be at most %d, got %d (no model writes that much; anthropic's default is %d)", math.MaxInt32, n, defaultAnthropicMaxTokens))
	}),
	"max_retries": integer(defaultMaxRetries, wholeNumber, func(_ string, n, _ int64) error {
		return when(n < 0 || n > maxRetriesLimit, "must be between 0 and %d, got %d (0 turns retries off; the default is %d)", maxRetriesLimit, n, defaultMaxRetries)
	}),
	"max_iterations": integer(defaultMaxIterations, wholeNumber, func(_ string, n, _ int64) error {
		return cmp.Or(
			when(n < 1, "must be at least 1, got %d (it caps model calls per user message; the default is %d)", n, defaultMaxIterations),
			when(n > math.MaxInt32, "must be at most %d, got %d (it caps model calls per user message; the default is %d)", math.MaxInt32, n, defaultMaxIterations))
	}),
	"max_result_size":  messageSize(defaultMaxResultSize),
	"max_request_size": messageSize(defaultMaxRequestSize),
	"protocol": integer(2, wholeNumber, func(_ string, n, _ int64) error {
		return when(n < 0 || n > 2, "must be 1 or 2 to pin the plugin protocol version, or 0 to use the highest the plugin speaks, got %d", n)
	}),
	// plugins.enabled: valid names, each once.
	"enabled": list(func(_ int, name string) error { return checkPluginName(name) }, func(name string, j, i int) error {
		return fault("plugin %q is enabled twice, as items %d and %d (list it once; the order sets priority)", name, j+1, i+1)
	}),
	// The variables passed to a plugin: names only. Never echo a value:
	// it is probably a secret.
	"env": list(func(i int, n string) error {
		name, _, found := strings.Cut(n, "=")
		bad := !envNameRE.MatchString(n)
		return cmp.Or(
			when(bad && found && envNameRE.MatchString(name), "item %d looks like NAME=value (list only the name %q; the plugin gets the value from the host's environment, so secrets stay out of this file)", i+1, name),
			when(bad, "item %d, %q, is not an environment variable name (use letters, digits and \"_\", not starting with a digit)", i+1, abbrev(n)))
	}, nil),
	"models": list(func(i int, n string) error {
		return when(strings.TrimSpace(n) == "", "item %d is empty (name a model clients may ask for, e.g. %q)", i+1, exampleClientModel)
	}, func(n string, j, i int) error {
		return fault("model %q is listed twice, as items %d and %d (list it once)", abbrev(n), j+1, i+1)
	}),
	"strings":       list(func(int, string) error { return nil }, nil),
	"plugin_config": {decode: decodePluginConfig},
	"switch":        byGoType[reflect.TypeFor[bool]()],
	"key_env":       keyEnv,
	"tool_globs":    toolGlobs,
	"per_minute":    perMinute,
}

// ranges maps a range tag to the bounds of an integer key.
var ranges = map[string]rule{
	"body_size":      between(1, maxBodySizeLimit, inBytes, "bytes (1 GiB)"),
	"body_bytes":     between(1, maxBodyBytesLimit, inBytes, "bytes (1 TiB)"),
	"concurrent":     between(1, maxConcurrentLimit, wholeNumber, "requests"),
	"entries":        between(1, maxStateEntries, wholeNumber, "entries"),
	"response_bytes": between(0, maxBodyBytesLimit, inBytes, "bytes (1 TiB; 0 keeps no responses)"),
	"trace_size":     between(minTraceMaxSize, maxTraceMaxSize, inBytes, "bytes (4 KiB to 1 TiB)"),
	"trace_keep":     between(0, maxTraceKeep, wholeNumber, "files"),
	"trace_queue":    between(1, maxTraceQueue, wholeNumber, "records"),
}

// byGoType is the rule of a field with neither tag.
var byGoType = map[reflect.Type]rule{
	reflect.TypeFor[time.Duration](): {decode: decodeDuration},
	reflect.TypeFor[string]():        text(func(string) error { return nil }),
	reflect.TypeFor[bool](): rule{decode: func(key toml.Key, v any, _ reflect.Value) (any, error) {
		b, ok := v.(bool)
		return b, when(!ok, "expected true or false, got %s (write %s = true or %s = false, without quotes)", describe(v), nameOf(key), nameOf(key))
	}}.with("write %[1]s = true or %[1]s = false"),
}

func (r rule) with(hint string) rule { r.hint = hint; return r }

// ruleOf is the rule of field f, whose value has type t.
func ruleOf(f reflect.StructField, t reflect.Type) (rule, bool) {
	for _, r := range []rule{rules[f.Tag.Get("rule")], ranges[f.Tag.Get("range")], byGoType[t]} {
		if r.decode != nil {
			return r, true
		}
	}
	return rule{}, false
}

// text is a string that check accepts, set to tidy(s) when tidy is given.
func text(check func(s string) error, tidy ...func(string) string) rule {
	return rule{decode: func(key toml.Key, v any, _ reflect.Value) (any, error) {
		s, err := asString(nameOf(key), v)
		if err != nil {
			return nil, err
		}
		if err := check(s); err != nil {
			return nil, err
		}
		for _, f := range tidy {
			s = f(s)
		}
		return s, nil
	}}
}

// nonEmpty is a string whose empty value would only be a mistake.
func nonEmpty(def string) rule {
	return text(func(s string) error {
		return when(s == "", "must not be empty (remove the key to use the default %q)", def)
	})
}

// integer is a whole number that check accepts, given the key's default;
// form is how to write it. Messages suggest example, or the default when
// it is 0.
func integer(example int64, form string, check func(name string, n, def int64) error) rule {
	return rule{hint: "write " + form + ", e.g. %[1]s = %[2]d", example: example, decode: func(key toml.Key, v any, def reflect.Value) (any, error) {
		n, isInt := v.(int64)
		if isInt {
			return n, check(nameOf(key), n, def.Int())
		}
		suggest := cmp.Or(example, def.Int())
		if s, isStr := v.(string); isStr {
			if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
				suggest = n
			}
		}
		return nil, fault("expected an integer, got %s (write a whole number without quotes: %s = %d)", describe(v), nameOf(key), suggest)
	}}
}

const wholeNumber, inBytes = "a whole number", "the size in bytes"

func between(lo, hi int64, form, unit string) rule {
	return integer(0, form, func(_ string, n, def int64) error {
		return when(n < lo || n > hi, "must be between %d and %d %s, got %d (the default is %d)", lo, hi, unit, n, def)
	})
}

func messageSize(example int64) rule {
	return integer(example, inBytes, func(name string, n, _ int64) error {
		return when(n < 1 || n > maxMessageSize, "must be between 1 and %d bytes (256 MiB), got %d (write the size in bytes, e.g. %s = %d)", maxMessageSize, n, name, example)
	})
}

// list is an array of strings, each of which item accepts; twice (when
// set) refuses an item listed again. An empty list is nil.
func list(item func(i int, s string) error, twice func(s string, first, i int) error) rule {
	return rule{decode: func(key toml.Key, v any, _ reflect.Value) (any, error) {
		arr, ok := v.([]any)
		if !ok {
			example := `["..."]`
			if s, isStr := v.(string); isStr {
				example = fmt.Sprintf("[%q]", s)
			}
			return nil, fault("expected an array of strings, got %s (write %s = %s)", describe(v), nameOf(key), example)
		}
		var l []string
		var errs []error
		for i, x := range arr {
			s, isStr := x.(string)
			if !isStr {
				errs = append(errs, fault("item %d: expected a string, got %s (put every item in double quotes)", i+1, describe(x)).onItem(i))
			}
			l = append(l, s)
		}
		if len(errs) > 0 {
			return nil, errors.Join(errs...)
		}
		first := map[string]int{}
		for i, s := range l {
			err := item(i, s)
			if j, dup := first[s]; err == nil && dup && twice != nil {
				err = twice(s, j, i)
			}
			if err != nil {
				errs = append(errs, err.(*problem).onItem(i))
				continue
			}
			first[s] = i
		}
		return l, errors.Join(errs...)
	}}
}

// model_aliases maps client model names to upstream models, both
// non-empty; an alias of itself, or one whose target is another alias, is
// refused (aliases are not followed in chains).
func decodeAliases(key toml.Key, v any, _ reflect.Value) (any, error) {
	decoded, err := stringMap(func(name, target string) error {
		return cmp.Or(
			when(strings.TrimSpace(name) == "", "an empty model name cannot be an alias (write e.g. \"claude-sonnet-4-5-20250929\" = %q)", exampleClientModel),
			when(strings.TrimSpace(target) == "", "names no upstream model (write the model the upstream serves, e.g. %q)", exampleClientModel),
			when(target == name, "%q is an alias of itself; list it in server.models instead", abbrev(name)))
	}).decode(key, v, reflect.Value{})
	out, _ := decoded.(map[string]string)
	errs := []error{err}
	for _, name := range slices.Sorted(maps.Keys(out)) {
		if next, chained := out[out[name]]; chained {
			errs = append(errs, fault("its target %q is itself an alias (of %q), and aliases are not followed in chains; name the upstream model %q directly", abbrev(out[name]), abbrev(next), abbrev(next)).under(name))
		}
	}
	return out, errors.Join(errs...)
}

func decodeDuration(key toml.Key, v any, dv reflect.Value) (any, error) {
	def := time.Duration(dv.Int()).String()
	s, ok := v.(string)
	if !ok {
		return nil, fault("expected a duration string, got %s (write %s = %q; use Go durations such as \"500ms\" or \"2s\")", describe(v), nameOf(key), def)
	}
	dur, err := time.ParseDuration(strings.TrimSpace(s))
	return dur, cmp.Or(
		// Well formed, so it can only have overflowed.
		when(err != nil && durationSyntax.MatchString(strings.TrimSpace(s)), "%q is too large (at most %s, about 292 years; the default is %q)", abbrev(s), time.Duration(math.MaxInt64), def),
		when(err != nil, "bad duration %q (use Go durations such as \"500ms\" or \"2s\")", abbrev(s)),
		when(dur <= 0, "must be greater than zero, got %q (use e.g. \"500ms\" or \"2s\"; the default is %q)", s, def))
}

var (
	// durationSyntax is what time.ParseDuration accepts, whatever the size.
	durationSyntax = regexp.MustCompile(`^[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`)
	envNameRE      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	headerNameRE   = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$") // an HTTP token
	// secretHeaders carry credentials, which come from api_key_env only.
	secretHeaders = []string{"authorization", "x-api-key", "api-key", "proxy-authorization"}
	// Tool names are "<plugin>__<tool>", so a plugin name must not contain
	// "__" or the split would be ambiguous.
	pluginNameRE = regexp.MustCompile(`^[a-zA-Z0-9-]+(_[a-zA-Z0-9-]+)*$`)
)

const maxPluginName = 48

func checkPluginName(name string) error {
	return cmp.Or(
		when(name == "", "plugin name is empty (use letters, digits, \"-\" and single \"_\")"),
		when(len(name) > maxPluginName, "plugin name %q is %d characters long (at most %d)", name, len(name), maxPluginName),
		when(strings.Contains(name, "__"), "bad plugin name %q: \"__\" separates a plugin's name from its tool names (use a single \"_\" or \"-\")", name),
		when(!pluginNameRE.MatchString(name), "bad plugin name %q (use letters, digits, \"-\" and single \"_\" between them, at most %d characters)", name, maxPluginName))
}

// decodePluginConfig makes the free-form table a plugin gets JSON.
func decodePluginConfig(key toml.Key, v any, _ reflect.Value) (any, error) {
	m, err := asTable(key, v)
	if err != nil {
		return nil, err
	}
	var errs []error
	b, _ := json.Marshal(jsonValue(m, nil, &errs)) // it fails only on what errs holds
	return b, errors.Join(errs...)
}

// jsonValue converts TOML values that JSON has no faithful form for; at is
// where v is below the config table.
func jsonValue(v any, at toml.Key, errs *[]error) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = jsonValue(x, join(at, toml.Key{k}), errs)
		}
		return out
	case []any, []map[string]any:
		a := reflect.ValueOf(v)
		out := make([]any, a.Len())
		for i := range out {
			out[i] = jsonValue(a.Index(i).Interface(), at, errs)
		}
		return out
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			*errs = append(*errs, fault("%v cannot be represented in JSON (use a finite number or a string)", v).under(at...))
		}
		return v
	case time.Time:
		// Local date-times carry no zone; keep them as TOML wrote them
		// rather than inventing an offset.
		return v.Format(cmp.Or(localLayouts[v.Location().String()], time.RFC3339Nano))
	}
	return v
}

var localLayouts = map[string]string{
	"datetime-local": "2006-01-02T15:04:05.999999999",
	"date-local":     "2006-01-02",
	"time-local":     "15:04:05.999999999",
}

// problem is one thing wrong with a value: at is the part of the value
// to blame, below the key (a header's name), and item the array item, or
// -1.
type problem struct {
	at   toml.Key
	item int
	msg  string
}

func (p *problem) Error() string { return p.msg }

func fault(format string, args ...any) *problem {
	return &problem{item: -1, msg: fmt.Sprintf(format, args...)}
}

// when is a problem if cond holds, else nil; cmp.Or picks the first of
// several.
func when(cond bool, format string, args ...any) error {
	if !cond {
		return nil
	}
	return fault(format, args...)
}

func (p *problem) onItem(i int) *problem      { p.item = i; return p }
func (p *problem) under(k ...string) *problem { p.at = append(toml.Key(k), p.at...); return p }

func asTable(key toml.Key, v any) (map[string]any, error) {
	if m, ok := v.(map[string]any); ok {
		return m, nil
	}
	return nil, fault("expected a table, got %s (write a [%s] header and put its keys below it)", describe(v), key)
}

func asString(name string, v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	return "", fault("expected a string, got %s (put the value in double quotes: %s = \"...\")", describe(v), name)
}

func nameOf(key toml.Key) string { return key[len(key)-1] }

// stringMap is a table of strings, each of which item (when set)
// accepts; an empty one is nil.
func stringMap(item func(name, s string) error) rule {
	return rule{decode: func(key toml.Key, v any, _ reflect.Value) (any, error) {
		m, err := asTable(key, v)
		if err != nil {
			return nil, err
		}
		out := map[string]string{}
		var errs []error
		for _, name := range slices.Sorted(maps.Keys(m)) {
			s, err := asString(name, m[name])
			if err == nil && item != nil {
				err = item(name, s)
			}
			if err != nil {
				errs = append(errs, err.(*problem).under(name))
				continue
			}
			out[name] = s
		}
		if len(out) == 0 {
			out = nil
		}
		return out, errors.Join(errs...)
	}}
}

func didYouMean(s string, candidates []string) string {
	if near := closest(s, candidates); near != "" {
		return fmt.Sprintf("did you mean %q? ", near)
	}
	return ""
}

func describe(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("string %q", abbrev(v))
	case int64, float64, bool:
		return fmt.Sprintf("%s %v", map[string]string{"int64": "integer", "float64": "float", "bool": "boolean"}[fmt.Sprintf("%T", v)], v)
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
