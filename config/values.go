package config

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/hookhost/hookhost/llm"
)

// The value types below decode and check one key's value by themselves, as
// toml.Unmarshaler: a field's Go type (time.Duration, bool, string) or its
// rule tag picks one. The value is stored only when it is accepted, so a
// field keeps its default otherwise, and the default is what messages
// quote. What is wrong comes back as problems, which the walk places at
// the key's line.

// problem is one thing wrong with a value. msg is told the full key, so
// that the hint can name it; at is the part of the value to blame, below
// the key (a header's name), and item the array item, or -1.
type problem struct {
	at   toml.Key
	item int
	msg  func(key toml.Key) string
}

func (p *problem) Error() string { return p.msg(toml.Key{"value"}) }

// fault is a problem whose message does not name the key.
func fault(format string, args ...any) *problem {
	msg := fmt.Sprintf(format, args...)
	return &problem{item: -1, msg: func(toml.Key) string { return msg }}
}

// named is a problem whose message names the key as written, e.g. in
// "write timeout = ...".
func named(format string, args func(name string) []any) *problem {
	return &problem{item: -1, msg: func(k toml.Key) string { return fmt.Sprintf(format, args(k[len(k)-1])...) }}
}

func (p *problem) onItem(i int) *problem      { p.item = i; return p }
func (p *problem) under(k ...string) *problem { p.at = append(toml.Key(k), p.at...); return p }

// Typed accessors: each returns the value, or a problem with an example of
// the right form.

func asTable(v any) (map[string]any, error) {
	if m, ok := v.(map[string]any); ok {
		return m, nil
	}
	return nil, &problem{item: -1, msg: func(k toml.Key) string {
		return fmt.Sprintf("expected a table, got %s (write a [%s] header and put its keys below it)", describe(v), k)
	}}
}

func asString(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	return "", named("expected a string, got %s (put the value in double quotes: %s = \"...\")", func(n string) []any { return []any{describe(v), n} })
}

// asNonEmpty is a string whose empty value would only be a mistake.
func asNonEmpty(v any, def string) (string, error) {
	s, err := asString(v)
	if err == nil && s == "" {
		return "", fault("must not be empty (remove the key to use the default %q)", def)
	}
	return s, err
}

func asInt(v any, example int64) (int64, error) {
	if n, ok := v.(int64); ok {
		return n, nil
	}
	if s, ok := v.(string); ok {
		if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
			example = n
		}
	}
	return 0, named("expected an integer, got %s (write a whole number without quotes: %s = %d)", func(n string) []any { return []any{describe(v), n, example} })
}

// asStrings is an array of strings; an empty one is nil.
func asStrings(v any) ([]string, error) {
	arr, ok := v.([]any)
	if !ok {
		example := `["..."]`
		if s, isStr := v.(string); isStr {
			example = fmt.Sprintf("[%q]", s)
		}
		return nil, named("expected an array of strings, got %s (write %s = %s)", func(n string) []any { return []any{describe(v), n, example} })
	}
	out := make([]string, len(arr))
	var errs []error
	for i, x := range arr {
		s, isStr := x.(string)
		if !isStr {
			errs = append(errs, fault("item %d: expected a string, got %s (put every item in double quotes)", i+1, describe(x)).onItem(i))
		}
		out[i] = s
	}
	return nilIfEmpty(out), errors.Join(errs...)
}

// asListOf is an array of strings each of which item accepts.
func asListOf[T ~[]string](v any, item func(i int, s string) error) (T, error) {
	list, err := asStrings(v)
	if err != nil {
		return nil, err
	}
	var errs []error
	for i, s := range list {
		errs = append(errs, item(i, s))
	}
	return T(list), errors.Join(errs...)
}

// asStringMap is a table of strings each of which item accepts; an empty
// one is nil.
func asStringMapOf[T ~map[string]string](v any, item func(name, s string) error) (T, error) {
	m, err := asTable(v)
	if err != nil {
		return nil, err
	}
	out := T{}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(m)) {
		s, err := asString(m[name])
		if err == nil {
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
}

type durationValue time.Duration

func (t *durationValue) UnmarshalTOML(v any) error {
	def := time.Duration(*t).String()
	s, ok := v.(string)
	if !ok {
		return named("expected a duration string, got %s (write %s = %q; use Go durations such as \"500ms\" or \"2s\")", func(n string) []any { return []any{describe(v), n, def} })
	}
	dur, err := time.ParseDuration(strings.TrimSpace(s))
	switch {
	case err != nil && durationSyntax.MatchString(strings.TrimSpace(s)):
		// Well formed, so it can only have overflowed.
		return fault("%q is too large (at most %s, about 292 years; the default is %q)", abbrev(s), time.Duration(math.MaxInt64), def)
	case err != nil:
		return fault("bad duration %q (use Go durations such as \"500ms\" or \"2s\")", abbrev(s))
	case dur <= 0:
		return fault("must be greater than zero, got %q (use e.g. \"500ms\" or \"2s\"; the default is %q)", s, def)
	}
	*t = durationValue(dur)
	return nil
}

// durationSyntax is what time.ParseDuration accepts, whatever the size.
var durationSyntax = regexp.MustCompile(`^[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`)

type boolValue bool

func (b *boolValue) UnmarshalTOML(v any) error {
	x, ok := v.(bool)
	if !ok {
		return named("expected true or false, got %s (write %s = true or %s = false, without quotes)", func(n string) []any { return []any{describe(v), n, n} })
	}
	*b = boolValue(x)
	return nil
}

func (*boolValue) example(n string) string { return fmt.Sprintf("write %s = true or %s = false", n, n) }

type stringValue string

func (s *stringValue) UnmarshalTOML(v any) error {
	return set(s, v, func(v any) (stringValue, error) { x, err := asString(v); return stringValue(x), err })
}

// set stores what decode makes of v in dst when it is accepted.
func set[T any](dst *T, v any, decode func(any) (T, error)) error {
	x, err := decode(v)
	if err == nil {
		*dst = x
	}
	return err
}

type providerName string

// UnmarshalTOML accepts the providers registered with llm: those linked
// into the program.
func (p *providerName) UnmarshalTOML(v any) error {
	return set(p, v, func(v any) (providerName, error) {
		s, err := asString(v)
		if providers := llm.ProviderNames(); err == nil && !slices.Contains(providers, s) {
			hint := ""
			if near := closest(s, providers); near != "" {
				hint = fmt.Sprintf("did you mean %q? ", near)
			}
			return "", fault("unknown provider %q (%suse one of: %s)", s, hint, strings.Join(providers, ", "))
		}
		return providerName(s), err
	})
}

type (
	modelName string // a model; "" would only be a mistake
	tierName  string
	pluginDir string
	readRoot  string
)

func (m *modelName) UnmarshalTOML(v any) error { return set(m, v, nonEmpty[modelName](defaultModel)) }
func (m *tierName) UnmarshalTOML(v any) error  { return set(m, v, nonEmpty[tierName]("")) }
func (d *pluginDir) UnmarshalTOML(v any) error {
	return set(d, v, nonEmpty[pluginDir](defaultPluginDir))
}
func (d *readRoot) UnmarshalTOML(v any) error { return set(d, v, nonEmpty[readRoot](defaultReadRoot)) }

func nonEmpty[T ~string](def string) func(any) (T, error) {
	return func(v any) (T, error) { s, err := asNonEmpty(v, def); return T(s), err }
}

type apiName string

func (a *apiName) UnmarshalTOML(v any) error {
	return set(a, v, func(v any) (apiName, error) {
		s, err := asString(v)
		if err == nil && s != apiChat && s != apiResponses {
			return "", fault("unknown api %q (use %q for Chat Completions or %q for the Responses API)", abbrev(s), apiChat, apiResponses)
		}
		return apiName(s), err
	})
}

type baseURL string

func (b *baseURL) UnmarshalTOML(v any) error {
	return set(b, v, func(v any) (baseURL, error) {
		s, err := asString(v)
		if err != nil {
			return "", err
		}
		u, err := url.Parse(strings.TrimSpace(s))
		switch {
		case s == "":
			return "", fault("must not be empty (remove the key to use the provider's own API)")
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			return "", fault("%q is not an http or https URL (e.g. %q for a local Ollama)", abbrev(s), "http://localhost:11434/v1")
		case u.User != nil:
			// Never echo it: the user part is a credential.
			return "", fault("must not contain a user name or password (the key comes from the variable named by api_key_env)")
		case u.RawQuery != "" || u.Fragment != "":
			return "", fault("%q must not have a query or fragment (the endpoint path is appended to it)", abbrev(s))
		}
		return baseURL(strings.TrimRight(strings.TrimSpace(s), "/")), nil
	})
}

// envName names an environment variable holding a key; "" sends none.
type envName string

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (e *envName) UnmarshalTOML(v any) error {
	return set(e, v, func(v any) (envName, error) {
		s, err := asString(v)
		if err != nil || s == "" || envNameRE.MatchString(s) {
			return envName(s), err
		}
		// Never echo the value: a key pasted here by mistake is a secret.
		return "", fault("must be the name of an environment variable (letters, digits and \"_\", e.g. \"OPENAI_API_KEY\"), not the key itself; \"\" sends no key")
	})
}

// envNames are the variables passed to a plugin: names only.
type envNames []string

func (e *envNames) UnmarshalTOML(v any) error {
	return set(e, v, func(v any) (envNames, error) {
		return asListOf[envNames](v, func(i int, n string) error {
			if envNameRE.MatchString(n) {
				return nil
			}
			if name, _, found := strings.Cut(n, "="); found && envNameRE.MatchString(name) {
				// Never echo the value: it is probably a secret.
				return fault("item %d looks like NAME=value (list only the name %q; the plugin gets the value from the host's environment, so secrets stay out of this file)", i+1, name).onItem(i)
			}
			return fault("item %d, %q, is not an environment variable name (use letters, digits and \"_\", not starting with a digit)", i+1, abbrev(n)).onItem(i)
		})
	})
}

type httpHeaders map[string]string

// headerNameRE is an HTTP token.
var headerNameRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// secretHeaders carry credentials, which come from api_key_env only.
var secretHeaders = []string{"authorization", "x-api-key", "api-key", "proxy-authorization"}

func (h *httpHeaders) UnmarshalTOML(v any) error {
	return set(h, v, func(v any) (httpHeaders, error) {
		return asStringMapOf[httpHeaders](v, func(name, s string) error {
			switch {
			case !headerNameRE.MatchString(name):
				return fault("%q is not a valid HTTP header name", abbrev(name))
			case slices.Contains(secretHeaders, strings.ToLower(name)):
				return fault("credentials do not go in this file (name the environment variable holding the key in api_key_env)")
			case strings.ContainsAny(s, "\r\n\x00"):
				return fault("header value must be a single line")
			}
			return nil
		})
	})
}

type temperature float64

// UnmarshalTOML accepts integers too: temperature = 1 is as natural as 1.0.
func (t *temperature) UnmarshalTOML(v any) error {
	var x float64
	switch n := v.(type) {
	case float64:
		x = n
	case int64:
		x = float64(n)
	default:
		return named("expected a number, got %s (write it without quotes: %s = %v)", func(n string) []any { return []any{describe(v), n, 0.2} })
	}
	if x < 0 || x > 2 || math.IsNaN(x) {
		return fault("must be between 0 and 2, got %v (remove the key to use the model's default)", x)
	}
	*t = temperature(x)
	return nil
}

// Integers with their own range. Each decodes through checked, with the
// example a message for a non-integer suggests.
type (
	maxTokens     int
	maxRetries    int
	maxIterations int
	resultSize    int
	requestSize   int
	protocolPin   int
)

func checked[T ~int](dst *T, v any, example int64, check func(n int64) error) error {
	n, err := asInt(v, example)
	if err == nil {
		err = check(n)
	}
	if err == nil {
		*dst = T(n)
	}
	return err
}

func (*maxTokens) example(n string) string     { return wholeNumber(n, defaultAnthropicMaxTokens) }
func (*maxRetries) example(n string) string    { return wholeNumber(n, defaultMaxRetries) }
func (*maxIterations) example(n string) string { return wholeNumber(n, defaultMaxIterations) }
func (*resultSize) example(n string) string    { return sizeInBytes(n, defaultMaxResultSize) }
func (*requestSize) example(n string) string   { return sizeInBytes(n, defaultMaxRequestSize) }
func (*protocolPin) example(n string) string   { return wholeNumber(n, 2) }
func (*temperature) example(n string) string   { return fmt.Sprintf("write a number, e.g. %s = 0.2", n) }

func (m *maxTokens) UnmarshalTOML(v any) error {
	return checked(m, v, defaultAnthropicMaxTokens, func(n int64) error {
		switch {
		case n < 1:
			return fault("must be at least 1, got %d (remove the key to let the provider decide; anthropic then uses %d)", n, defaultAnthropicMaxTokens)
		case n > math.MaxInt32:
			return fault("must be at most %d, got %d (no model writes that much; anthropic's default is %d)", math.MaxInt32, n, defaultAnthropicMaxTokens)
		}
		return nil
	})
}

func (m *maxRetries) UnmarshalTOML(v any) error {
	return checked(m, v, defaultMaxRetries, func(n int64) error {
		if n < 0 || n > maxRetriesLimit {
			return fault("must be between 0 and %d, got %d (0 turns retries off; the default is %d)", maxRetriesLimit, n, defaultMaxRetries)
		}
		return nil
	})
}

func (m *maxIterations) UnmarshalTOML(v any) error {
	return checked(m, v, defaultMaxIterations, func(n int64) error {
		switch {
		case n < 1:
			return fault("must be at least 1, got %d (it caps model calls per user message; the default is %d)", n, defaultMaxIterations)
		case n > math.MaxInt32:
			return fault("must be at most %d, got %d (it caps model calls per user message; the default is %d)", math.MaxInt32, n, defaultMaxIterations)
		}
		return nil
	})
}

func (s *resultSize) UnmarshalTOML(v any) error {
	return checked(s, v, defaultMaxResultSize, messageSize(defaultMaxResultSize))
}

func (s *requestSize) UnmarshalTOML(v any) error {
	return checked(s, v, defaultMaxRequestSize, messageSize(defaultMaxRequestSize))
}

func messageSize(example int64) func(n int64) error {
	return func(n int64) error {
		if n < 1 || n > maxMessageSize {
			return named("must be between 1 and %d bytes (256 MiB), got %d (write the size in bytes, e.g. %s = %d)", func(name string) []any { return []any{maxMessageSize, n, name, example} })
		}
		return nil
	}
}

func (p *protocolPin) UnmarshalTOML(v any) error {
	return checked(p, v, 2, func(n int64) error {
		if n < 0 || n > 2 {
			return fault("must be 1 or 2 to pin the plugin protocol version, or 0 to use the highest the plugin speaks, got %d", n)
		}
		return nil
	})
}

// pluginNames is plugins.enabled: valid names, each once.
type pluginNames []string

const maxPluginName = 48

// Tool names are "<plugin>__<tool>", so a plugin name must not contain
// "__" or the split would be ambiguous.
var pluginNameRE = regexp.MustCompile(`^[a-zA-Z0-9-]+(_[a-zA-Z0-9-]+)*$`)

func (p *pluginNames) UnmarshalTOML(v any) error {
	first := map[string]int{}
	return set(p, v, func(v any) (pluginNames, error) {
		return asListOf[pluginNames](v, func(i int, name string) error {
			if err := checkPluginName(name); err != nil {
				return err.onItem(i)
			}
			if j, dup := first[name]; dup {
				return fault("plugin %q is enabled twice, as items %d and %d (list it once; the order sets priority)", name, j+1, i+1).onItem(i)
			}
			first[name] = i
			return nil
		})
	})
}

func checkPluginName(name string) *problem {
	switch {
	case name == "":
		return fault("plugin name is empty (use letters, digits, \"-\" and single \"_\")")
	case len(name) > maxPluginName:
		return fault("plugin name %q is %d characters long (at most %d)", name, len(name), maxPluginName)
	case strings.Contains(name, "__"):
		return fault("bad plugin name %q: \"__\" separates a plugin's name from its tool names (use a single \"_\" or \"-\")", name)
	case !pluginNameRE.MatchString(name):
		return fault("bad plugin name %q (use letters, digits, \"-\" and single \"_\" between them, at most %d characters)", name, maxPluginName)
	}
	return nil
}

type sha256Hex string

func (h *sha256Hex) UnmarshalTOML(v any) error {
	return set(h, v, func(v any) (sha256Hex, error) {
		s, err := asString(v)
		if err != nil || s == "" {
			return "", err
		}
		if _, err := hex.DecodeString(s); err != nil || len(s) != 64 {
			return "", fault("must be 64 hexadecimal characters, got %q (compute it with: sha256sum <plugin binary>; or remove the key to skip the check)", abbrev(s))
		}
		return sha256Hex(strings.ToLower(s)), nil
	})
}

// pluginConfig is the free-form table a plugin gets as JSON.
type pluginConfig json.RawMessage

func (c *pluginConfig) UnmarshalTOML(v any) error {
	return set(c, v, func(v any) (pluginConfig, error) {
		m, err := asTable(v)
		if err != nil {
			return nil, err
		}
		var errs []error
		jv := jsonValue(m, nil, &errs)
		if len(errs) > 0 {
			return nil, errors.Join(errs...)
		}
		b, err := json.Marshal(jv)
		if err != nil {
			return nil, fault("cannot be converted to JSON: %v", err)
		}
		return pluginConfig(b), nil
	})
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
	case []map[string]any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = jsonValue(x, at, errs)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = jsonValue(x, at, errs)
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
		switch v.Location().String() {
		case "datetime-local":
			return v.Format("2006-01-02T15:04:05.999999999")
		case "date-local":
			return v.Format("2006-01-02")
		case "time-local":
			return v.Format("15:04:05.999999999")
		}
		return v.Format(time.RFC3339Nano)
	}
	return v
}

// hostPort is host:port, host possibly empty (every interface) and port
// possibly 0 (any free port).
type hostPort string

func (h *hostPort) UnmarshalTOML(v any) error {
	return set(h, v, func(v any) (hostPort, error) {
		s, err := asString(v)
		if err != nil {
			return "", err
		}
		s = strings.TrimSpace(s)
		host, port, err := net.SplitHostPort(s)
		if err != nil {
			return "", fault("%q is not host:port (write e.g. listen = %q; an IPv6 host goes in brackets, \"[::1]:8080\")", abbrev(s), defaultListen)
		}
		if n, err := strconv.ParseUint(port, 10, 16); err != nil || (n == 0 && port != "0") {
			return "", fault("port %q is not a number between 0 and 65535 (write e.g. listen = %q)", abbrev(port), defaultListen)
		}
		if strings.ContainsAny(host, " /\\\t") {
			return "", fault("host %q is not a host name or IP address (write e.g. listen = %q)", abbrev(host), defaultListen)
		}
		return hostPort(s), nil
	})
}

// modelNames is a list of distinct, non-empty model names.
type modelNames []string

func (m *modelNames) UnmarshalTOML(v any) error {
	first := map[string]int{}
	return set(m, v, func(v any) (modelNames, error) {
		return asListOf[modelNames](v, func(i int, n string) error {
			if strings.TrimSpace(n) == "" {
				return fault("item %d is empty (name a model clients may ask for, e.g. %q)", i+1, exampleClientModel).onItem(i)
			}
			if j, dup := first[n]; dup {
				return fault("model %q is listed twice, as items %d and %d (list it once)", abbrev(n), j+1, i+1).onItem(i)
			}
			first[n] = i
			return nil
		})
	})
}

// modelAliases is a table of client model name → upstream model, both
// non-empty; an alias of itself, or one whose target is another alias, is
// refused (aliases are not followed in chains).
type modelAliases map[string]string

func (m *modelAliases) UnmarshalTOML(v any) error {
	return set(m, v, func(v any) (modelAliases, error) {
		out, err := asStringMapOf[modelAliases](v, func(name, target string) error {
			switch {
			case strings.TrimSpace(name) == "":
				return fault("an empty model name cannot be an alias (write e.g. \"claude-sonnet-4-5-20250929\" = %q)", exampleClientModel)
			case strings.TrimSpace(target) == "":
				return fault("names no upstream model (write the model the upstream serves, e.g. %q)", exampleClientModel)
			case target == name:
				return fault("%q is an alias of itself; list it in server.models instead", abbrev(name))
			}
			return nil
		})
		errs := []error{err}
		for _, name := range slices.Sorted(maps.Keys(out)) {
			if next, chained := out[out[name]]; chained {
				errs = append(errs, fault("its target %q is itself an alias (of %q), and aliases are not followed in chains; name the upstream model %q directly", abbrev(out[name]), abbrev(next), abbrev(next)).under(name))
			}
		}
		return out, errors.Join(errs...)
	})
}

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
