package wire

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/config"
)

// config may not import wire (plugins import wire, and must not carry the
// host's config), so it keeps its own copy of the size limits for its
// checks and messages. They must say what wire does.
func TestConfigSizeLimitsMatchTheWire(t *testing.T) {
	parse := func(key string, n int) error {
		_, err := config.Parse([]byte(fmt.Sprintf("[plugins.entries.p]\n%s = %d\n", key, n)), "t.toml", "")
		return err
	}
	for _, c := range []struct {
		key  string
		dflt int
	}{
		{"max_result_size", defaultMaxResultSize},
		{"max_request_size", defaultMaxRequestSize},
	} {
		if err := parse(c.key, MaxMessageSize); err != nil {
			t.Errorf("%s = %d (wire's ceiling) is refused by config: %v", c.key, MaxMessageSize, err)
		}
		err := parse(c.key, MaxMessageSize+1)
		if err == nil {
			t.Fatalf("%s = %d (over wire's ceiling) is accepted by config", c.key, MaxMessageSize+1)
		}
		// The message's example is the default a user would get.
		msg := err.Error()
		if !strings.Contains(msg, fmt.Sprintf("between 1 and %d bytes", MaxMessageSize)) ||
			!strings.Contains(msg, fmt.Sprintf("%s = %d)", c.key, c.dflt)) {
			t.Errorf("config's message %q does not give wire's ceiling %d and default %s = %d", msg, MaxMessageSize, c.key, c.dflt)
		}
	}
}
