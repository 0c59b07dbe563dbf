package config

import (
	"errors"
	"strings"
	"testing"
)

func TestPluginMessageSizeLimits(t *testing.T) {
	c, err := Parse([]byte("[plugins.entries.big]\nmax_result_size = 67108864\nmax_request_size = 1024\n"), "t.toml", "")
	if err != nil {
		t.Fatal(err)
	}
	if e := c.Plugins.Entries["big"]; e.MaxResultSize != 64<<20 || e.MaxRequestSize != 1024 {
		t.Fatalf("limits = %d, %d; want 64 MiB, 1024", e.MaxResultSize, e.MaxRequestSize)
	}
	if e := c.Entry("other"); e.MaxResultSize != 0 || e.MaxRequestSize != 0 {
		t.Fatalf("an entry without limits has %d, %d; want 0 (the defaults)", e.MaxResultSize, e.MaxRequestSize)
	}

	for _, src := range []string{
		"[plugins.entries.big]\nmax_result_size = 0\n",
		"[plugins.entries.big]\nmax_result_size = 268435457\n",
		"[plugins.entries.big]\nmax_result_size = \"4MiB\"\n",
		"[plugins.entries.big]\nmax_request_size = -1\n",
	} {
		_, err := Parse([]byte(src), "t.toml", "")
		var ce *Error
		if !errors.As(err, &ce) || ce.Line != 2 || !strings.HasPrefix(ce.Key, "plugins.entries.big.max_re") {
			t.Errorf("%q: got %v, want an error on line 2 naming the key", src, err)
		}
	}
}
