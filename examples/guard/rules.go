package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

// config is the guard's [plugins.entries.guard.config] table.
type config struct {
	// Message is the block message template; see placeholders.
	Message string `json:"message"`
	// Deny rules, checked in order; the first that matches blocks.
	Deny []ruleConfig `json:"deny"`
}

type ruleConfig struct {
	Tool string `json:"tool"` // path.Match glob of tool names; "" matches any
	// Origin is a path.Match glob of where the call goes: "native",
	// "plugin", "client" or "mcp:SERVER" ("mcp:*" for every MCP
	// server); "" matches any. A rule names a tool, an origin or both.
	Origin    string `json:"origin"`
	ArgsMatch string `json:"args_match"` // regexp over the arguments; "" matches any
	Reason    string `json:"reason"`     // {reason} in the message
}

const defaultMessage = "blocked by guard: {reason} (rule deny[{rule}], tool {tool})"

// placeholders are the fields a message template may use.
var placeholders = []string{"{tool}", "{rule}", "{reason}"}

var placeholderRE = regexp.MustCompile(`\{[^{}\s]*\}`)

type rule struct {
	index  int
	tool   string         // "" matches any
	origin string         // "" matches any
	args   *regexp.Regexp // nil: any arguments
	reason string
}

type ruleset struct {
	template string
	deny     []rule
}

// parseRules checks the whole config before any of it takes effect, and
// names the rule at fault by its index in deny.
func parseRules(raw json.RawMessage) (*ruleset, error) {
	var c config
	// A misspelt key (arg_match) would otherwise silently widen what the
	// guard lets through.
	if err := sdk.DecodeConfig(raw, &c); err != nil {
		return nil, err
	}
	rs := &ruleset{template: c.Message}
	if rs.template == "" {
		rs.template = defaultMessage
	}
	for _, p := range placeholderRE.FindAllString(rs.template, -1) {
		if !slices.Contains(placeholders, p) {
			return nil, fmt.Errorf("message: unknown placeholder %s (use %s)", p, strings.Join(placeholders, ", "))
		}
	}
	for i, rc := range c.Deny {
		r := rule{index: i, tool: rc.Tool, origin: rc.Origin, reason: rc.Reason}
		if rc.Tool == "" && rc.Origin == "" {
			return nil, fmt.Errorf("deny[%d]: tool or origin is required (a tool name or a glob such as \"*\"; an origin such as \"mcp:fs\" or \"client\")", i)
		}
		if _, err := path.Match(rc.Tool, ""); err != nil {
			return nil, fmt.Errorf("deny[%d]: tool %q is not a valid glob: %v", i, rc.Tool, err)
		}
		if _, err := path.Match(rc.Origin, ""); err != nil {
			return nil, fmt.Errorf("deny[%d]: origin %q is not a valid glob: %v", i, rc.Origin, err)
		}
		if rc.ArgsMatch != "" {
			re, err := regexp.Compile(rc.ArgsMatch)
			if err != nil {
				return nil, fmt.Errorf("deny[%d]: args_match %q is not a valid regular expression: %v", i, rc.ArgsMatch, err)
			}
			r.args = re
		}
		if r.reason == "" {
			r.reason = "this tool is not allowed"
			if r.args != nil {
				r.reason = "these arguments are not allowed for this tool"
			}
		}
		rs.deny = append(rs.deny, r)
	}
	return rs, nil
}

// match returns the first rule that denies the call.
func (rs *ruleset) match(tool string, origin hooks.Origin, args json.RawMessage) (rule, bool) {
	var canon string // computed once, and only if a rule needs it
	for _, r := range rs.deny {
		if !globMatch(r.tool, tool) || !globMatch(r.origin, string(origin)) {
			continue
		}
		if r.args == nil {
			return r, true
		}
		if canon == "" {
			canon = canonicalJSON(args)
		}
		if r.args.MatchString(canon) {
			return r, true
		}
	}
	return rule{}, false
}

// globMatch matches a rule's glob; an empty one matches anything.
func globMatch(glob, s string) bool {
	if glob == "" {
		return true
	}
	ok, _ := path.Match(glob, s)
	return ok
}

func (rs *ruleset) message(r rule, tool string) string {
	return strings.NewReplacer("{tool}", tool, "{rule}", strconv.Itoa(r.index), "{reason}", r.reason).Replace(rs.template)
}

// canonicalJSON re-encodes arguments compactly, with sorted keys and no
// escapes JSON does not require, so that a pattern sees one spelling of
// every value: "\u0073ecret" and "secret" must not be told apart by a
// guard. Arguments that are not JSON are matched as they are.
func canonicalJSON(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep numbers as written rather than as float64
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return string(raw)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
