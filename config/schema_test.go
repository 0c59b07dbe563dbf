package config

import (
	"reflect"
	"testing"

	"github.com/BurntSushi/toml"
)

// TestSchemaDecodesEveryKey checks that each key of the config structs has
// a way to be decoded, so that no file can reach the walk's panic: a named
// value type that exists, that the field converts to and that decodes
// itself; a range that exists; or a type the walk decodes.
func TestSchemaDecodesEveryKey(t *testing.T) {
	unmarshaler := reflect.TypeFor[toml.Unmarshaler]()
	var walk func(path string, typ reflect.Type)
	walk = func(path string, typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			key := f.Tag.Get("toml")
			if key == "" {
				continue
			}
			at := path + key
			vt := byGoType[f.Type]
			if name := f.Tag.Get("rule"); name != "" {
				if vt = valueTypes[name]; vt == nil && name != "entries" && name != "reattach" {
					t.Errorf("%s: rule %q has no value type", at, name)
				}
			}
			if vt != nil {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if !reflect.PointerTo(ft).ConvertibleTo(reflect.PointerTo(vt)) || !reflect.PointerTo(vt).Implements(unmarshaler) {
					t.Errorf("%s: a %s field cannot be decoded as %s", at, f.Type, vt)
				}
				continue
			}
			if r := f.Tag.Get("range"); r != "" {
				if _, ok := bounds[r]; !ok {
					t.Errorf("%s: range %q does not exist", at, r)
				}
			}
			switch k := f.Type.Kind(); {
			case f.Tag.Get("rule") != "", k >= reflect.Int && k <= reflect.Int64:
			case k == reflect.Struct:
				walk(at+".", f.Type)
			default:
				t.Errorf("%s: no value type for a field of type %s", at, f.Type)
			}
		}
	}
	walk("", reflect.TypeOf(Config{}))
	walk("plugins.entries.<name>.", reflect.TypeOf(PluginEntry{}))
}

func TestHomeOfFollowsTheStructs(t *testing.T) {
	for key, want := range map[string][]string{
		"timeout":   {"llm", "plugins.entries.<name>"},
		"server":    {""},
		"small":     {"llm.tiers"},
		"read_root": {"tools"},
		"listen":    {"server"},
	} {
		if got := homeOf[key]; !reflect.DeepEqual(got, want) {
			t.Errorf("homeOf[%q] = %q, want %q", key, got, want)
		}
	}
}
