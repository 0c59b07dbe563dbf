package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// DecodeConfig decodes the config table the host hands to Configure into v,
// strictly: an unknown key is an error, because a misspelt key silently
// ignored is how a guard ends up letting through what it was meant to stop.
// Errors speak the config's language (keys, lists, tables), not Go's, so a
// plugin can return them from Configure as they are and the operator sees,
// through `hookhost plugins check`, which key to fix (the host adds which
// plugin rejected its config).
func DecodeConfig(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := te.Type.Kind().String()
		switch te.Type.Kind() {
		case reflect.Slice, reflect.Array:
			want = "list"
		case reflect.Struct, reflect.Map:
			want = "table"
		}
		return fmt.Errorf("%s: wrong type: got %s, want %s", te.Field, te.Value, want)
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	return errors.New(strings.Replace(msg, "unknown field", "unknown key", 1))
}

// ConfigKeysOf returns the keys of a config table that decodes into v, a
// struct or a pointer to one, by encoding/json's rules (which DecodeConfig
// follows): a key per exported field, named by its json tag ("-" skips
// it, omitempty changes nothing), with the fields of embedded structs
// promoted, and of two fields with one name the shallower, or the tagged,
// winning. The keys are sorted. This is what Info.Config declares.
func ConfigKeysOf(v any) ([]string, error) {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("sdk: Info.Config must be a struct or a pointer to one, got %v (leave it nil for a config the plugin checks itself)", reflect.TypeOf(v))
	}
	unmarshaler := reflect.TypeFor[json.Unmarshaler]()
	if t.Implements(unmarshaler) || reflect.PointerTo(t).Implements(unmarshaler) {
		return nil, fmt.Errorf("sdk: Info.Config's type %v decodes itself (UnmarshalJSON), so its keys cannot be read off its fields (leave Info.Config nil)", t)
	}
	type field struct {
		depth  int
		tagged bool
	}
	found := map[string][]field{}
	var walk func(t reflect.Type, depth int, visiting map[reflect.Type]bool)
	walk = func(t reflect.Type, depth int, visiting map[reflect.Type]bool) {
		visiting[t] = true
		defer delete(visiting, t)
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if sf.Anonymous && name == "" && ft.Kind() == reflect.Struct {
				if !visiting[ft] {
					walk(ft, depth+1, visiting)
				}
				continue
			}
			if !sf.IsExported() {
				continue
			}
			tagged := name != ""
			if !tagged {
				name = sf.Name
			}
			found[name] = append(found[name], field{depth, tagged})
		}
	}
	walk(t, 0, map[reflect.Type]bool{})
	keys := make([]string, 0, len(found))
	for name, fs := range found {
		shallowest := fs[0].depth
		for _, f := range fs {
			shallowest = min(shallowest, f.depth)
		}
		var top, tagged int
		for _, f := range fs {
			if f.depth == shallowest {
				top++
				if f.tagged {
					tagged++
				}
			}
		}
		// encoding/json ignores a name that two fields share at the same
		// depth, unless exactly one of them is tagged.
		if top == 1 || tagged == 1 {
			keys = append(keys, name)
		}
	}
	slices.Sort(keys)
	return keys, nil
}
