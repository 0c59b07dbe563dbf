package config

import (
	"errors"
	"os"
	"testing"
)

// leafErrors flattens errors.Join.
func leafErrors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leafErrors(e)...)
		}
		return out
	}
	return []error{err}
}

// FuzzParse checks that whatever a config file holds, Parse does not panic,
// and every problem it reports names the file, a line and a key.
func FuzzParse(f *testing.F) {
	if example, err := os.ReadFile("../config.toml.example"); err == nil {
		f.Add(string(example))
	}
	for _, s := range []string{
		"",
		"[llm]\nprovider = \"openai\"\n",
		"[llm]\nprovider = \"offline\n",
		"[conversation]\nmax_iterations = 9223372036854775807\n",
		"[llm]\ntimeout = \"9999999999h\"\ncall_timeout = 5\n",
		"[plugins]\nenabled = [\"a\", \"a\", \"b__c\", 3]\n[plugins.entries.a]\nenv = [\"K=v\"]\nsha256 = \"zz\"\n",
		"[[llm]]\nprovider = \"offline\"\n",
		"llm = 3\nrouting = []\n",
		"[tools]\nread_root = \"\"\n",
		"a.b.c = 1\n[x]\ny = {z = [1, {w = 2}]}\n",
		"[llm.headers]\nAuthorization = \"Bearer x\"\n\"bad name\" = \"v\"\n",
		"[plugins.entries.k.config]\nn = nan\nd = 1979-05-27\n",
		"= 1\n",
		"[llm]\n\"provider\" = 'anthropic'\napi = \"chat\"\nbase_url = \"https://u:p@h/v1\"\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		_, err := Parse([]byte(src), "fuzz.toml", "/nonexistent/fuzz")
		if err == nil {
			return
		}
		for _, e := range leafErrors(err) {
			var ce *Error
			if !errors.As(e, &ce) {
				t.Fatalf("error %q (%T) is not a *config.Error", e, e)
			}
			if ce.File != "fuzz.toml" || ce.Line < 1 || ce.Key == "" {
				t.Fatalf("error %q does not name the file, a line and a key (file %q, line %d, key %q)\ninput: %q", e, ce.File, ce.Line, ce.Key, src)
			}
		}
	})
}
