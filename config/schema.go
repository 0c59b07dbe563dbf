package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
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
// A field is decoded by a value type (values.go) that checks the value
// itself: the one its rule tag names, or else the one for its Go type
// (time.Duration, bool, string); an integer is bounded by its range tag,
// and a nested struct is a nested table, whose validate method checks the
// rules that span its keys.

// valueTypes maps a rule tag to the value type that decodes the key.
var valueTypes = map[string]reflect.Type{
	"provider":         reflect.TypeFor[providerName](),
	"model":            reflect.TypeFor[modelName](),
	"tier":             reflect.TypeFor[tierName](),
	"plugin_dir":       reflect.TypeFor[pluginDir](),
	"read_root":        reflect.TypeFor[readRoot](),
	"api":              reflect.TypeFor[apiName](),
	"base_url":         reflect.TypeFor[baseURL](),
	"api_key_env":      reflect.TypeFor[envName](),
	"state_url_env":    reflect.TypeFor[stateURLEnv](),
	"state_backend":    reflect.TypeFor[stateBackend](),
	"state_prefix":     reflect.TypeFor[statePrefix](),
	"headers":          reflect.TypeFor[httpHeaders](),
	"temperature":      reflect.TypeFor[temperature](),
	"max_tokens":       reflect.TypeFor[maxTokens](),
	"max_retries":      reflect.TypeFor[maxRetries](),
	"max_iterations":   reflect.TypeFor[maxIterations](),
	"enabled":          reflect.TypeFor[pluginNames](),
	"sha256":           reflect.TypeFor[sha256Hex](),
	"env":              reflect.TypeFor[envNames](),
	"plugin_config":    reflect.TypeFor[pluginConfig](),
	"max_result_size":  reflect.TypeFor[resultSize](),
	"max_request_size": reflect.TypeFor[requestSize](),
	"protocol":         reflect.TypeFor[protocolPin](),
	"listen":           reflect.TypeFor[hostPort](),
	"models":           reflect.TypeFor[modelNames](),
	"model_aliases":    reflect.TypeFor[modelAliases](),
	"switch":           reflect.TypeFor[boolValue](),
	"strings":          reflect.TypeFor[stringList](),
	"string_map":       reflect.TypeFor[stringMap](),
}

// byGoType is the value type of a field without a rule tag.
var byGoType = map[reflect.Type]reflect.Type{
	reflect.TypeFor[time.Duration](): reflect.TypeFor[durationValue](),
	reflect.TypeFor[bool]():          reflect.TypeFor[boolValue](),
	reflect.TypeFor[string]():        reflect.TypeFor[stringValue](),
}

// validated is a table with rules that span its keys, checked once they
// are decoded: set holds the keys written, each true when accepted; ok says
// every known key was accepted, clean that moreover none was unknown.
type validated interface {
	validate(d *decoder, key toml.Key, set map[string]bool, ok, clean bool) bool
}

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

// keysOf lists the keys a struct's fields take, in field order.
func keysOf(v any) []string {
	var keys []string
	t := reflect.TypeOf(v)
	for i := range t.NumField() {
		if k := t.Field(i).Tag.Get("toml"); k != "" && k != "-" {
			keys = append(keys, k)
		}
	}
	return keys
}

// decodeTable decodes the table v, written at key, onto the struct dst
// points to. It returns the keys the table sets validly, whether every
// value of a known key was accepted (ok), and whether moreover no key was
// unknown (clean).
func (d *decoder) decodeTable(key toml.Key, v any, dst any) (set map[string]bool, ok, clean bool) {
	m, err := asTable(v)
	if !d.report(key, err) {
		return nil, false, false
	}
	rv := reflect.ValueOf(dst).Elem()
	fields := map[string]int{}
	for i := range rv.NumField() {
		if k := rv.Type().Field(i).Tag.Get("toml"); k != "" && k != "-" {
			fields[k] = i
		}
	}
	set, ok, clean = map[string]bool{}, true, true
	for _, k := range slices.Sorted(maps.Keys(m)) {
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
	switch rule := f.Tag.Get("rule"); {
	case rule == "entries":
		return d.entries(key, v)
	case rule == "reattach":
		return d.reattach(key, v, dst)
	case rule == "mcp_servers":
		return d.mcpServers(key, v, dst)
	case rule == "read_root":
		ok := d.decodeValue(key, v, dst, valueTypes[rule])
		if ok {
			dst.SetString(resolve(d.dir, dst.String()))
			d.directory(key, dst.String())
		}
		return ok
	case valueTypes[rule] != nil:
		return d.decodeValue(key, v, dst, valueTypes[rule])
	case byGoType[dst.Type()] != nil:
		return d.decodeValue(key, v, dst, byGoType[dst.Type()])
	case dst.CanInt():
		def := dst.Int()
		n, err := asInt(v, def)
		if b, bounded := bounds[f.Tag.Get("range")]; err == nil && bounded && (n < b.lo || n > b.hi) {
			err = fault("must be between %d and %d %s, got %d (the default is %d)", b.lo, b.hi, b.unit, n, def)
		}
		if err == nil {
			dst.SetInt(n)
		}
		return d.report(key, err)
	case dst.Kind() == reflect.Struct:
		set, ok, clean := d.decodeTable(key, v, dst.Addr().Interface())
		if c, checked := dst.Addr().Interface().(validated); checked && set != nil {
			return c.validate(d, key, set, ok, clean)
		}
		return ok
	}
	panic("config: no decoder for field " + f.Name + " of type " + dst.Type().String())
}

// decodeValue decodes v into dst, a field whose type has the value type t's
// underlying type, or points to one (allocated only once v is accepted).
func (d *decoder) decodeValue(key toml.Key, v any, dst reflect.Value, t reflect.Type) bool {
	if dst.Kind() == reflect.Pointer {
		elem := reflect.New(dst.Type().Elem())
		if !d.decodeValue(key, v, elem.Elem(), t) {
			return false
		}
		dst.Set(elem)
		return true
	}
	u := dst.Addr().Convert(reflect.PointerTo(t)).Interface().(toml.Unmarshaler)
	return d.report(key, u.UnmarshalTOML(v))
}

// exampled is a value type that shows the form a value takes, for one
// written without quotes that is no number and no boolean.
type exampled interface{ example(name string) string }

func wholeNumber(name string, n int64) string {
	return fmt.Sprintf("write a whole number, e.g. %s = %d", name, n)
}

func sizeInBytes(name string, n int64) string {
	return fmt.Sprintf("write the size in bytes, e.g. %s = %d", name, n)
}

// syntaxHint is the fix for value, written without quotes at the dotted
// key path: the form of the field the key sets, or quotes.
func syntaxHint(path []string, value string) string {
	name := path[len(path)-1]
	f, v, found := fieldAt(path)
	if homes := homeOf[name]; !found && len(homes) > 0 {
		// Written in the wrong table, it still takes the form it has at home.
		f, v, found = fieldAt(strings.Split(strings.TrimPrefix(homes[0]+"."+name, "."), "."))
	}
	t := valueTypes[f.Tag.Get("rule")]
	if t == nil && found {
		t = byGoType[v.Type()]
	}
	b, bounded := bounds[f.Tag.Get("range")]
	switch {
	case !found:
	case t != nil && reflect.PointerTo(t).Implements(reflect.TypeFor[exampled]()):
		return reflect.New(t).Interface().(exampled).example(name)
	case bounded && strings.HasPrefix(b.unit, "bytes"):
		return sizeInBytes(name, v.Int())
	case bounded:
		return wholeNumber(name, v.Int())
	}
	return fmt.Sprintf("strings need double quotes: %s = %q", name, value)
}

// fieldAt finds the field the dotted key path sets, and its default.
func fieldAt(path []string) (f reflect.StructField, v reflect.Value, found bool) {
	v = reflect.ValueOf(newDefault("")).Elem()
	for _, part := range path {
		switch v.Kind() {
		case reflect.Map: // a table of named tables: the part is the name
			v = reflect.New(v.Type().Elem()).Elem()
			if v.Type() == reflect.TypeFor[PluginEntry]() {
				v = reflect.ValueOf(defaultEntry("", "", ""))
			}
		case reflect.Struct:
			if f, found = fieldByKey(v.Type(), part); !found {
				return f, v, false
			}
			v = v.FieldByIndex(f.Index)
		default:
			return f, v, false
		}
	}
	return f, v, found
}

func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	return t.FieldByNameFunc(func(n string) bool {
		f, _ := t.FieldByName(n)
		return f.Tag.Get("toml") == key
	})
}

// nilIfEmpty makes an empty list nil, which the config structs use for
// none.
func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}
