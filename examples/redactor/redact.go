package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/hookhost/hookhost/plugins/sdk"
)

// config is the redactor's [plugins.entries.redactor.config] table.
type config struct {
	Mask     string          `json:"mask"`     // replacement; {kind} is the pattern's name
	Disable  []string        `json:"disable"`  // built-in patterns to turn off
	Patterns []patternConfig `json:"patterns"` // the operator's own, after the built-ins
}

type patternConfig struct {
	Name  string `json:"name"`
	Regex string `json:"regex"`
}

const defaultMask = "[REDACTED:{kind}]"

// secretKeyWords are key names whose value is a secret. A key matches when
// it ends with one of them at a word boundary: db_password and
// AWS_SECRET_ACCESS_KEY do, max_tokens and token_type do not.
const secretKeyWords = `api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key|client[_-]?secret|secret|token|password|passwd`

// builtins are the patterns on by default, most specific first: where two
// overlap, the one listed first names the mask. A group named "secret"
// limits the mask to that part of the match.
var builtins = []patternConfig{
	{"openai_key", `\bsk-[A-Za-z0-9_-]{20,}`},
	{"aws_access_key", `\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`},
	{"github_token", `\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b`},
	{"bearer_token", `(?i)\bbearer\s+(?P<secret>[A-Za-z0-9._~+/-]{8,}=*)`},
	{"secret_assignment", `(?i)\b[A-Za-z0-9_.-]*?(?:` + secretKeyWords + `)\b["']?\s*[:=]\s*["']?(?P<secret>[^\s"',;&]+)`},
	{"email", `\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b`},
}

// secretKey matches a JSON object key whose string value is masked whole,
// as part of secret_assignment.
var secretKey = regexp.MustCompile(`(?i)^[A-Za-z0-9_.-]*?(?:` + secretKeyWords + `)$`)

var patternName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

type pattern struct {
	name   string
	re     *regexp.Regexp
	secret int // the "secret" group's index; 0: mask the whole match
}

type rules struct {
	mask       string
	patterns   []pattern
	secretKeys bool // secret_assignment is on
}

var defaultRules = func() *rules {
	rs, err := parseRules(json.RawMessage(`{}`))
	if err != nil {
		panic(err)
	}
	return rs
}()

func parseRules(raw json.RawMessage) (*rules, error) {
	var c config
	if err := sdk.DecodeConfig(raw, &c); err != nil {
		return nil, err
	}
	rs := &rules{mask: c.Mask}
	if rs.mask == "" {
		rs.mask = defaultMask
	}
	if p := regexp.MustCompile(`\{[^{}\s]*\}`).FindString(strings.ReplaceAll(rs.mask, "{kind}", "")); p != "" {
		return nil, fmt.Errorf("mask: unknown placeholder %s (use {kind})", p)
	}
	var names []string
	for _, b := range builtins {
		names = append(names, b.Name)
	}
	for _, d := range c.Disable {
		if !slices.Contains(names, d) {
			return nil, fmt.Errorf("disable: unknown pattern %q (built-in patterns: %s)", d, strings.Join(names, ", "))
		}
	}
	for _, b := range builtins {
		if slices.Contains(c.Disable, b.Name) {
			continue
		}
		rs.patterns = append(rs.patterns, compile(b.Name, regexp.MustCompile(b.Regex)))
		rs.secretKeys = rs.secretKeys || b.Name == "secret_assignment"
	}
	for i, p := range c.Patterns {
		switch {
		case !patternName.MatchString(p.Name):
			return nil, fmt.Errorf("patterns[%d]: name %q must be lower case letters, digits and _, starting with a letter", i, p.Name)
		case slices.Contains(names, p.Name):
			return nil, fmt.Errorf("patterns[%d]: name %q is already taken (built-in patterns and earlier patterns: %s)", i, p.Name, strings.Join(names, ", "))
		case p.Regex == "":
			return nil, fmt.Errorf("patterns[%d] (%s): regex is required", i, p.Name)
		}
		re, err := regexp.Compile(p.Regex)
		if err != nil {
			return nil, fmt.Errorf("patterns[%d] (%s): regex %q is not a valid regular expression: %v", i, p.Name, p.Regex, err)
		}
		names = append(names, p.Name)
		rs.patterns = append(rs.patterns, compile(p.Name, re))
	}
	return rs, nil
}

func compile(name string, re *regexp.Regexp) pattern {
	p := pattern{name: name, re: re}
	if i := re.SubexpIndex("secret"); i > 0 {
		p.secret = i
	}
	return p
}

// redact masks the secrets in a tool result's content and returns the new
// content and the sorted names of the patterns that matched (none:
// unchanged).
//
// Content that is a JSON document, as most tool results are, is redacted
// value by value rather than as text: the patterns see a file's contents
// with its real newlines and quotes rather than JSON escapes, and a mask
// can never break the document.
func (rs *rules) redact(content string) (string, []string) {
	var kinds []string
	trimmed := strings.TrimSpace(content)
	if trimmed != "" && strings.ContainsRune(`{["`, rune(trimmed[0])) && json.Valid([]byte(trimmed)) {
		content, kinds = rs.redactJSON(content)
	} else {
		content, kinds = rs.redactText(content)
	}
	slices.Sort(kinds)
	return content, slices.Compact(kinds)
}

func (rs *rules) maskOf(kind string) string { return strings.ReplaceAll(rs.mask, "{kind}", kind) }

// redactText masks every match of every pattern in s. Matches are found
// in the original text, so no pattern ever sees another's mask, and
// overlapping matches are masked once.
func (rs *rules) redactText(s string) (string, []string) {
	type span struct {
		start, end int
		kind       string
	}
	var spans []span
	for _, p := range rs.patterns {
		for _, m := range p.re.FindAllStringSubmatchIndex(s, -1) {
			start, end := m[0], m[1]
			if p.secret > 0 && m[2*p.secret] >= 0 {
				start, end = m[2*p.secret], m[2*p.secret+1]
			}
			if start < end {
				spans = append(spans, span{start, end, p.name})
			}
		}
	}
	if len(spans) == 0 {
		return s, nil
	}
	// Stable, so that of two spans starting together the longer, then the
	// earlier pattern, names the mask.
	sort.SliceStable(spans, func(i, j int) bool {
		if spans[i].start != spans[j].start {
			return spans[i].start < spans[j].start
		}
		return spans[i].end > spans[j].end
	})
	var b strings.Builder
	var kinds []string
	last := 0
	for _, sp := range spans {
		if sp.start < last { // overlaps a mask already written: widen it
			last = max(last, sp.end)
			continue
		}
		b.WriteString(s[last:sp.start])
		b.WriteString(rs.maskOf(sp.kind))
		kinds = append(kinds, sp.kind)
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String(), kinds
}

// redactJSON redacts the string values of a valid JSON document, leaving
// everything else byte for byte: each string literal is decoded, redacted
// as text, and re-encoded only if something was masked. Object keys are
// kept; the string value of a key naming a secret ("password": "…") is
// masked whole.
func (rs *rules) redactJSON(doc string) (string, []string) {
	var b strings.Builder
	var kinds []string
	last, maskWhole := 0, -1
	for i := 0; i < len(doc); i++ {
		if doc[i] != '"' {
			continue
		}
		end := stringEnd(doc, i)
		var s string
		_ = json.Unmarshal([]byte(doc[i:end]), &s) // cannot fail: the document is valid
		if j := skipSpace(doc, end); j < len(doc) && doc[j] == ':' {
			if k := skipSpace(doc, j+1); rs.secretKeys && k < len(doc) && doc[k] == '"' && secretKey.MatchString(s) {
				maskWhole = k
			}
			i = end - 1
			continue
		}
		var out string
		var found []string
		if i == maskWhole && s != "" {
			out, found = rs.maskOf("secret_assignment"), []string{"secret_assignment"}
		} else {
			out, found = rs.redactText(s)
		}
		if len(found) > 0 {
			b.WriteString(doc[last:i])
			b.WriteString(quote(out))
			last = end
			kinds = append(kinds, found...)
		}
		i = end - 1
	}
	if len(kinds) == 0 {
		return doc, nil
	}
	b.WriteString(doc[last:])
	return b.String(), kinds
}

// stringEnd returns the index just past the string literal opening at i.
func stringEnd(doc string, i int) int {
	for j := i + 1; j < len(doc); j++ {
		switch doc[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(doc)
}

func skipSpace(doc string, i int) int {
	for i < len(doc) && strings.ContainsRune(" \t\r\n", rune(doc[i])) {
		i++
	}
	return i
}

// quote encodes s as a JSON string without escaping <, > and &, which
// would only make the result harder to read.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
