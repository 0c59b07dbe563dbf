package config

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// positions records where each key of a TOML document is written. The toml
// package tracks this but does not export it, and errors about values that
// decoded fine (a bad duration, a duplicate plugin) must still point at a
// line. It is built by a small scanner that only needs to cope with
// documents the toml package has already accepted.
type positions struct {
	lineStarts []int            // byte offset at which each line begins
	keys       map[string]int   // key → offset where it is written
	implied    map[string]int   // key → offset of the first key that implies it ([a.b] implies a)
	items      map[string][]int // array key → offset of each item
}

// line returns the 1-based line of key, or of item elem of the array at key
// when elem >= 0. A key that is not written anywhere (or an item the scanner
// missed) falls back to its nearest written ancestor; 0 means unknown.
func (p *positions) line(key toml.Key, elem int) int {
	if elem >= 0 {
		if offs := p.items[key.String()]; elem < len(offs) {
			return p.lineOf(offs[elem])
		}
	}
	for n := len(key); n > 0; n-- {
		k := key[:n].String()
		if off, ok := p.keys[k]; ok {
			return p.lineOf(off)
		}
		if off, ok := p.implied[k]; ok {
			return p.lineOf(off)
		}
	}
	return 0
}

func (p *positions) lineOf(off int) int {
	return sort.Search(len(p.lineStarts), func(i int) bool { return p.lineStarts[i] > off })
}

// define records key at off, keeping the first definition: for arrays of
// tables that is the first element, which is the best single answer.
func (p *positions) define(key toml.Key, off int) {
	if _, ok := p.keys[key.String()]; !ok {
		p.keys[key.String()] = off
	}
	for n := 1; n < len(key); n++ {
		if _, ok := p.implied[key[:n].String()]; !ok {
			p.implied[key[:n].String()] = off
		}
	}
}

func scanPositions(src string) *positions {
	p := &positions{
		lineStarts: []int{0},
		keys:       map[string]int{},
		implied:    map[string]int{},
		items:      map[string][]int{},
	}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			p.lineStarts = append(p.lineStarts, i+1)
		}
	}
	s := &scanner{src: src, p: p}
	s.document()
	return p
}

type scanner struct {
	src string
	i   int
	p   *positions
}

func (s *scanner) peek() byte {
	if s.i < len(s.src) {
		return s.src[s.i]
	}
	return 0
}

func (s *scanner) has(prefix string) bool { return strings.HasPrefix(s.src[s.i:], prefix) }

func (s *scanner) skipBlank() {
	for s.peek() == ' ' || s.peek() == '\t' {
		s.i++
	}
}

// skipTrivia skips whitespace, newlines and comments.
func (s *scanner) skipTrivia() {
	for s.i < len(s.src) {
		switch s.src[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		case '#':
			for s.i < len(s.src) && s.src[s.i] != '\n' {
				s.i++
			}
		default:
			return
		}
	}
}

// document scans top-level statements. It stops quietly at anything it does
// not understand; lines it could not attribute then fall back to ancestors.
func (s *scanner) document() {
	var table toml.Key
	if s.has("\ufeff") {
		s.i += len("\ufeff")
	}
	for {
		s.skipTrivia()
		if s.i >= len(s.src) {
			return
		}
		start := s.i
		switch {
		case s.has("[["):
			s.i += 2
			key, ok := s.key()
			s.skipBlank()
			if !ok || !s.has("]]") {
				return
			}
			s.i += 2
			table = key
			s.p.define(key, start)
		case s.peek() == '[':
			s.i++
			key, ok := s.key()
			s.skipBlank()
			if !ok || s.peek() != ']' {
				return
			}
			s.i++
			table = key
			s.p.define(key, start)
		default:
			key, ok := s.key()
			if !ok {
				return
			}
			full := join(table, key)
			s.p.define(full, start)
			s.skipBlank()
			if s.peek() != '=' {
				return
			}
			s.i++
			s.skipBlank()
			s.value(full, true)
		}
		if s.i == start {
			return
		}
	}
}

// value skips one value. Items of an array are recorded only when the array
// is a key's own value (direct); nested arrays would otherwise interleave.
func (s *scanner) value(key toml.Key, direct bool) {
	switch {
	case s.has(`"""`):
		s.multiline(`"""`, true)
	case s.has(`'''`):
		s.multiline(`'''`, false)
	case s.peek() == '"':
		s.quoted('"', true)
	case s.peek() == '\'':
		s.quoted('\'', false)
	case s.peek() == '[':
		s.i++
		for {
			s.skipTrivia()
			if s.i >= len(s.src) {
				return
			}
			if s.peek() == ']' {
				s.i++
				return
			}
			start := s.i
			if direct {
				k := key.String()
				s.p.items[k] = append(s.p.items[k], start)
			}
			s.value(key, false)
			s.skipTrivia()
			if s.peek() == ',' {
				s.i++
			}
			if s.i == start {
				return
			}
		}
	case s.peek() == '{':
		s.i++
		for {
			s.skipTrivia()
			if s.i >= len(s.src) {
				return
			}
			if s.peek() == '}' {
				s.i++
				return
			}
			start := s.i
			k, ok := s.key()
			if !ok {
				return
			}
			full := join(key, k)
			s.p.define(full, start)
			s.skipBlank()
			if s.peek() != '=' {
				return
			}
			s.i++
			s.skipBlank()
			s.value(full, true)
			s.skipTrivia()
			if s.peek() == ',' {
				s.i++
			}
		}
	default:
		// Numbers, booleans and date-times; the latter may contain a space.
		for s.i < len(s.src) && !strings.ContainsRune(",]}#\n", rune(s.src[s.i])) {
			s.i++
		}
	}
}

// quoted skips a single-line string and returns its raw contents.
func (s *scanner) quoted(q byte, escapes bool) string {
	s.i++
	start := s.i
	for s.i < len(s.src) {
		c := s.src[s.i]
		switch {
		case escapes && c == '\\':
			s.i += 2
			continue
		case c == q:
			s.i++
			return s.src[start : s.i-1]
		case c == '\n':
			return s.src[start:s.i]
		}
		s.i++
	}
	return s.src[start:]
}

func (s *scanner) multiline(delim string, escapes bool) {
	s.i += len(delim)
	for s.i < len(s.src) {
		if escapes && s.src[s.i] == '\\' {
			s.i += 2
			continue
		}
		if s.has(delim) {
			s.i += len(delim)
			// Up to two quotes right before the delimiter belong to the
			// string: """a""""" is a"" .
			for n := 0; n < 2 && s.peek() == delim[0]; n++ {
				s.i++
			}
			return
		}
		s.i++
	}
}

// key reads a possibly dotted key of bare and quoted parts.
func (s *scanner) key() (toml.Key, bool) {
	var key toml.Key
	for {
		s.skipBlank()
		switch c := s.peek(); {
		case c == '"':
			raw := s.quoted('"', true)
			if u, err := strconv.Unquote(`"` + raw + `"`); err == nil {
				raw = u
			}
			key = append(key, raw)
		case c == '\'':
			key = append(key, s.quoted('\'', false))
		default:
			start := s.i
			for s.i < len(s.src) && isBare(s.src[s.i]) {
				s.i++
			}
			if s.i == start {
				return key, false
			}
			key = append(key, s.src[start:s.i])
		}
		s.skipBlank()
		if s.peek() != '.' {
			return key, true
		}
		s.i++
	}
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func join(a, b toml.Key) toml.Key {
	k := make(toml.Key, 0, len(a)+len(b))
	return append(append(k, a...), b...)
}

var (
	syntaxHeader = regexp.MustCompile(`^\s*\[\[?\s*([A-Za-z0-9_\-. ]+?)\s*(\]\]?\s*(#.*)?)?$`)
	syntaxKeyVal = regexp.MustCompile(`^\s*([A-Za-z0-9_\-]+(?:\s*\.\s*[A-Za-z0-9_\-]+)*)\s*=\s*([^#]*)`)
	unquotedWord = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:/\-]*$`)
	numberLike   = regexp.MustCompile(`^[+-]?(\d[\d_]*(\.\d+)?([eE][+-]?\d+)?|0x[0-9a-fA-F_]+|0o[0-7_]+|0b[01_]+|inf|nan)$`)
)

// syntaxKey guesses the full key written on a line the toml parser rejected.
// The document is broken, so this works line by line: the key on the line
// itself, under the nearest table header above it. It also returns the
// value text written after "=", if any.
func syntaxKey(src string, line int) (key, value string) {
	lines := strings.Split(src, "\n")
	if line < 1 || line > len(lines) {
		return "", ""
	}
	text := strings.TrimRight(lines[line-1], "\r")
	if m := syntaxHeader.FindStringSubmatch(text); m != nil {
		return tidyKey(m[1]), ""
	}
	m := syntaxKeyVal.FindStringSubmatch(text)
	if m == nil {
		return "", ""
	}
	key = tidyKey(m[1])
	for j := line - 2; j >= 0; j-- {
		if h := syntaxHeader.FindStringSubmatch(strings.TrimRight(lines[j], "\r")); h != nil && h[2] != "" {
			key = tidyKey(h[1]) + "." + key
			break
		}
	}
	return key, strings.TrimSpace(m[2])
}

// topLevel stands for the key of a problem outside every table whose own
// key cannot be made out.
const topLevel = "(top level)"

// syntaxTable names the table of the nearest header at or above line, or
// topLevel when there is none.
func syntaxTable(src string, line int) string {
	lines := strings.Split(src, "\n")
	for j := min(line, len(lines)) - 1; j >= 0; j-- {
		if h := syntaxHeader.FindStringSubmatch(strings.TrimRight(lines[j], "\r")); h != nil && h[2] != "" && strings.Trim(tidyKey(h[1]), ".") != "" {
			return tidyKey(h[1])
		}
	}
	return topLevel
}

func tidyKey(k string) string {
	parts := strings.Split(k, ".")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return strings.Join(parts, ".")
}
