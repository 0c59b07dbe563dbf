package config

import (
	"reflect"
	"testing"
	"time"
)

// TestSchemaDecodesEveryKey checks that each key of the config structs has
// a way to be decoded, so that no file can reach the walk's panic: a named
// rule that exists, a range that exists, or a type the walk decodes.
func TestSchemaDecodesEveryKey(t *testing.T) {
	var walk func(path string, typ reflect.Type)
	walk = func(path string, typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			key := f.Tag.Get("toml")
			if key == "" {
				continue
			}
			at := path + key
			if name := f.Tag.Get("rule"); name != "" {
				if rules[name] == nil {
					t.Errorf("%s: rule %q does not exist", at, name)
				}
				continue
			}
			if r := f.Tag.Get("range"); r != "" {
				if _, ok := bounds[r]; !ok {
					t.Errorf("%s: range %q does not exist", at, r)
				}
			}
			switch k := f.Type.Kind(); {
			case f.Type == reflect.TypeOf(time.Duration(0)), k == reflect.Bool, k == reflect.String,
				k >= reflect.Int && k <= reflect.Int64:
			case k == reflect.Struct:
				walk(at+".", f.Type)
			default:
				t.Errorf("%s: no rule for a field of type %s", at, f.Type)
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
