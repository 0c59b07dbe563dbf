package config

import (
	"maps"
	"reflect"
	"slices"

	"github.com/BurntSushi/toml"
)

// The schema of the file is the config structs themselves: each field
// that a key sets carries that key's name in a toml tag, so the key is
// written once, the keys a table allows (for the did-you-mean and
// wrong-table hints) are read off the struct, and the defaults are the
// values the struct holds before decoding. The toml package decodes the
// text into plain maps only: it stops at the first value of the wrong type,
// with no dependable position and no way to name the fix, while this walk
// reports every problem with its key, its line and a hint. A field is
// decoded by the rule (values.go) its tags or Go type pick; a nested
// struct is a nested table, whose validate method checks rules across keys.

// validated is a table with rules that span its keys, checked once they
// are decoded: set holds the keys written, each true when accepted; ok says
// every known key was accepted, clean that moreover none was unknown.
type validated interface {
	validate(d *decoder, key toml.Key, set map[string]bool, ok, clean bool) bool
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

func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if f := t.Field(i); key != "" && key != "-" && f.Tag.Get("toml") == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// decodeTable decodes the table v, written at key, onto the struct dst
// points to. It returns the keys the table sets validly, whether every
// value of a known key was accepted (ok), and whether moreover no key was
// unknown (clean).
func (d *decoder) decodeTable(key toml.Key, v any, dst any) (set map[string]bool, ok, clean bool) {
	m, err := asTable(key, v)
	if !d.report(key, err) {
		return nil, false, false
	}
	rv := reflect.ValueOf(dst).Elem()
	set, ok, clean = map[string]bool{}, true, true
	for _, k := range slices.Sorted(maps.Keys(m)) {
		f, known := fieldByKey(rv.Type(), k)
		if !known {
			d.unknown(join(key, toml.Key{k}), keysOf(rv.Interface()), m[k])
			clean = false
			continue
		}
		set[k] = d.decodeField(join(key, toml.Key{k}), m[k], f, rv.FieldByIndex(f.Index))
		ok = ok && set[k]
	}
	return set, ok, ok && clean
}

func (d *decoder) decodeField(key toml.Key, v any, f reflect.StructField, dst reflect.Value) bool {
	switch f.Tag.Get("rule") {
	case "entries":
		return d.entries(key, v)
	case "reattach":
		return d.reattach(key, v, dst)
	case "mcp_servers":
		return d.mcpServers(key, v, dst)
	case "server_keys":
		return d.serverKeys(key, v, dst)
	}
	if dst.Kind() == reflect.Struct {
		set, ok, clean := d.decodeTable(key, v, dst.Addr().Interface())
		if c, checked := dst.Addr().Interface().(validated); checked && set != nil {
			return c.validate(d, key, set, ok, clean)
		}
		return ok
	}
	r, found := ruleOf(f, dst.Type())
	if !found {
		panic("config: no decoder for field " + f.Name + " of type " + dst.Type().String())
	}
	x, err := r.decode(key, v, dst)
	if !d.report(key, err) {
		return false
	}
	// A pointer field is allocated only once the value is accepted.
	if t := dst.Type(); t.Kind() == reflect.Pointer {
		dst.Set(reflect.New(t.Elem()))
		dst = dst.Elem()
	}
	dst.Set(reflect.ValueOf(x).Convert(dst.Type()))
	if f.Tag.Get("rule") == "read_root" {
		dst.SetString(resolve(d.dir, dst.String()))
		d.directory(key, dst.String())
	}
	return true
}
