package config

import (
	"reflect"
	"time"

	"github.com/BurntSushi/toml"
)

// The schema of the file is the config structs themselves: each field
// that a key sets carries that key's name in a toml tag, so the key is
// written once, the list of keys a table allows (for the did-you-mean and
// wrong-table hints) is read off the struct, and the defaults are the
// values the struct holds before decoding. The toml package itself decodes
// the text into plain maps only: it stops at the first value of the wrong
// type, with no dependable position and no way to name the fix, while this
// walk reports every problem with its key, its line and a hint.
//
// A field is decoded by its Go type: bool, int64-like integers (bounded by
// its range tag when it has one), time.Duration and string; a nested struct
// is a nested table. A field whose key needs more than its type says (an
// enumerated string, a list with unique items, a free-form table) names the
// rule that decodes it in a rule tag.

// rule decodes the value v written at key into dst, reporting each problem
// with d.fail, and says whether v was accepted. dst is left as it was when
// it was not.
type rule func(d *decoder, key toml.Key, v any, dst reflect.Value) bool

// crossChecked is a table with rules that span its keys, checked once they
// are decoded: set holds the keys written, each true when accepted; ok says
// every known key was accepted, clean that moreover none was unknown.
type crossChecked interface {
	check(d *decoder, key toml.Key, set map[string]bool, ok, clean bool) bool
}

// rules maps a rule tag to its rule; filled in by init, since rules decode
// nested tables through decodeTable, which looks rules up.
var rules map[string]rule

// bound is an integer key's range; unit names what it counts in the
// message.
type bound struct {
	lo, hi int64
	unit   string
}

// bounds maps a range tag to its range.
var bounds = map[string]bound{
	"body_size":      {1, maxBodySizeLimit, "bytes (1 GiB)"},
	"body_bytes":     {1, maxBodyBytesLimit, "bytes (1 TiB)"},
	"concurrent":     {1, maxConcurrentLimit, "requests"},
	"entries":        {1, maxStateEntries, "entries"},
	"response_bytes": {0, maxBodyBytesLimit, "bytes (1 TiB; 0 keeps no responses)"},
}

// setter turns a function that decodes and checks one value into a rule.
func setter[T any](decode func(d *decoder, key toml.Key, v any) (T, bool)) rule {
	return func(d *decoder, key toml.Key, v any, dst reflect.Value) bool {
		x, ok := decode(d, key, v)
		if ok {
			dst.Set(reflect.ValueOf(&x).Elem())
		}
		return ok
	}
}

// keysOf lists the keys a struct's fields take, in field order.
func keysOf(v any) []string {
	var keys []string
	t := reflect.TypeOf(v)
	for i := range t.NumField() {
		if k := t.Field(i).Tag.Get("toml"); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// decodeTable decodes the table v, written at key, onto the struct dst
// points to. It returns the keys the table sets validly, whether every value of a
// known key was accepted (ok), and whether moreover no key was unknown
// (clean).
func (d *decoder) decodeTable(key toml.Key, v any, dst any) (set map[string]bool, ok, clean bool) {
	m, ok := d.table(key, v)
	if !ok {
		return nil, false, false
	}
	rv := reflect.ValueOf(dst).Elem()
	fields := map[string]int{}
	for i := range rv.NumField() {
		if k := rv.Type().Field(i).Tag.Get("toml"); k != "" {
			fields[k] = i
		}
	}
	set, clean = map[string]bool{}, true
	for _, k := range sortedKeys(m) {
		kk := join(key, toml.Key{k})
		i, known := fields[k]
		if !known {
			d.unknown(kk, keysOf(rv.Interface()), m[k])
			clean = false
			continue
		}
		set[k] = d.decodeField(kk, m[k], rv.Type().Field(i), rv.Field(i))
		ok = ok && set[k]
	}
	return set, ok, ok && clean
}

func (d *decoder) decodeField(key toml.Key, v any, f reflect.StructField, dst reflect.Value) bool {
	if name := f.Tag.Get("rule"); name != "" {
		return rules[name](d, key, v, dst)
	}
	switch {
	case dst.Type() == reflect.TypeOf(time.Duration(0)):
		dur, ok := d.duration(key, v, time.Duration(dst.Int()))
		if ok {
			dst.SetInt(int64(dur))
		}
		return ok
	case dst.Kind() == reflect.Bool:
		b, ok := d.boolean(key, v)
		if ok {
			dst.SetBool(b)
		}
		return ok
	case dst.Kind() == reflect.String:
		s, ok := d.str(key, v)
		if ok {
			dst.SetString(s)
		}
		return ok
	case dst.CanInt():
		def := dst.Int()
		n, ok := d.integer(key, v, def)
		if b, bounded := bounds[f.Tag.Get("range")]; ok && bounded && (n < b.lo || n > b.hi) {
			d.fail(key, -1, "must be between %d and %d %s, got %d (the default is %d)", b.lo, b.hi, b.unit, n, def)
			ok = false
		}
		if ok {
			dst.SetInt(n)
		}
		return ok
	case dst.Kind() == reflect.Struct:
		set, ok, clean := d.decodeTable(key, v, dst.Addr().Interface())
		if c, checked := dst.Addr().Interface().(crossChecked); checked && set != nil {
			return c.check(d, key, set, ok, clean)
		}
		return ok
	}
	panic("config: no decoder for field " + f.Name + " of type " + dst.Type().String())
}

// nonEmpty is the rule of a string key whose empty value would only be a
// mistake; def is the default the message quotes.
func nonEmptyRule(def string) rule {
	return setter(func(d *decoder, key toml.Key, v any) (string, bool) { return d.nonEmpty(key, v, def) })
}

func init() {
	rules = map[string]rule{
		"entries":        (*decoder).entriesRule,
		"provider":       setter((*decoder).provider),
		"model":          nonEmptyRule(defaultModel),
		"tier":           nonEmptyRule(""),
		"plugin_dir":     nonEmptyRule(defaultPluginDir),
		"api":            setter((*decoder).api),
		"base_url":       setter((*decoder).baseURL),
		"api_key_env":    setter((*decoder).apiKeyEnv),
		"headers":        setter((*decoder).headers),
		"temperature":    setter((*decoder).temperature),
		"max_tokens":     intRule(defaultAnthropicMaxTokens, checkMaxTokens),
		"max_retries":    intRule(defaultMaxRetries, checkMaxRetries),
		"max_iterations": intRule(defaultMaxIterations, checkMaxIterations),
		"read_root": func(d *decoder, key toml.Key, v any, dst reflect.Value) bool {
			s, ok := d.nonEmpty(key, v, defaultReadRoot)
			if ok {
				dst.SetString(resolve(d.dir, s))
				d.directory(key, dst.String())
			}
			return ok
		},
		"enabled":          setter((*decoder).enabled),
		"sha256":           setter((*decoder).sha256),
		"env":              setter((*decoder).env),
		"plugin_config":    setter((*decoder).pluginConfig),
		"max_result_size":  intRule(defaultMaxResultSize, checkMessageSize(defaultMaxResultSize)),
		"max_request_size": intRule(defaultMaxRequestSize, checkMessageSize(defaultMaxRequestSize)),
		"protocol":         intRule(2, checkProtocol),
		"reattach": setter(func(d *decoder, key toml.Key, v any) (*Reattach, bool) {
			return d.reattach(key, key[len(key)-2], v)
		}),
		"listen":        setter((*decoder).listen),
		"models":        setter((*decoder).modelList),
		"model_aliases": setter((*decoder).modelAliases),
	}
}

// intRule decodes an integer key; example is the value the message for a
// non-integer suggests, and check reports a value out of range.
func intRule(example int64, check func(d *decoder, key toml.Key, n int64) bool) rule {
	return func(d *decoder, key toml.Key, v any, dst reflect.Value) bool {
		n, ok := d.integer(key, v, example)
		if ok = ok && check(d, key, n); ok {
			dst.SetInt(n)
		}
		return ok
	}
}

// nilIfEmpty makes an empty list nil, which the config structs use for
// none.
func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}
