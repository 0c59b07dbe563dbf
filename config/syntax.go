package config

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// syntaxError is what a file the toml package cannot parse is told: the
// line and key it stops at, and the fix. No value is decoded then, but an
// unquoted word is most likely a value of the key's type missing its
// form, which the key's rule knows.
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
		hint = syntaxHint(strings.Split(key, "."), value)
	}
	return &Error{File: filename, Line: line, Key: key, Msg: fmt.Sprintf("invalid TOML: %s (%s)", pe.Message, hint)}
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
	if r, ok := ruleOf(f, v.Type()); found && ok && r.hint != "" {
		if r.example == 0 && v.CanInt() {
			r.example = v.Int()
		}
		return fmt.Sprintf(r.hint, name, r.example)
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
