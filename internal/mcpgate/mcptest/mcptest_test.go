package mcptest

import (
	"regexp"
	"testing"
)

func TestPathOutside(t *testing.T) {
	re := regexp.MustCompile(PathOutside("/srv/work/allowed"))
	for args, want := range map[string]bool{
		`{"content":"x","path":"/srv/work/allowed/a.txt"}`:             false,
		`{"content":"x","path":"/srv/work/allowed/sub/b"}`:             false,
		`{"content":"x","path":"/srv/work/notes.txt"}`:                 true,
		`{"content":"x","path":"/srv/work/allowed"}`:                   true,
		`{"content":"x","path":"/srv/work/allowedness/a"}`:             true,
		`{"content":"x","path":"/etc/passwd"}`:                         true,
		`{"content":"x","path":"relative/allowed/a.txt"}`:              true,
		`{"content":"/srv/work/allowed/","path":"/tmp/x"}`:             true,
		`{"content":"\"path\":\"/etc\"","path":"/srv/work/allowed/a"}`: false,
	} {
		if got := re.MatchString(args); got != want {
			t.Errorf("%s: matched %v, want %v", args, got, want)
		}
	}
}
