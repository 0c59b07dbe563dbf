// Package termtext makes text that someone else wrote (a plugin's version,
// matchers, errors) safe to print on an operator's terminal.
package termtext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable escapes what is not printable text (line breaks, tabs,
// terminal escape sequences, invalid UTF-8) as Go's quoted strings do: a
// plugin's words must neither forge a row of a table nor reach the
// terminal as commands.
func Printable(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case unicode.IsPrint(r):
			b.WriteString(s[:n])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		s = s[n:]
	}
	return b.String()
}
