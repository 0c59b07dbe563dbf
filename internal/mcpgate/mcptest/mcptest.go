// Package mcptest holds what the tests that run real MCP software through
// hookhost share. Its folder is also the npm project that pins that
// software (the official TypeScript SDK's client, the reference servers).
package mcptest

import (
	"fmt"
	"regexp"
	"strings"
)

// PathOutside is a regular expression for the guard example's args_match
// that matches a tool call whose "path" argument is not under dir. Go's
// regexp has no negative lookahead, so it lists every way a path can part
// from dir + "/": equal up to some byte, then ending or differing there.
func PathOutside(dir string) string {
	prefix := dir + "/"
	alts := make([]string, 0, len(prefix))
	for i := 0; i < len(prefix); i++ {
		alts = append(alts, fmt.Sprintf(`%s(?:"|[^"\x{%x}])`, regexp.QuoteMeta(prefix[:i]), prefix[i]))
	}
	return `"path":"(?:` + strings.Join(alts, "|") + `)`
}
