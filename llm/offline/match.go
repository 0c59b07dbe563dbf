package offline

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/hookhost/hookhost/llm"
)

type strength int

const (
	none strength = iota
	weak
	strong
)

const (
	nameWeight  = 3
	descWeight  = 1
	strongScore = 3
)

var stopwords = setOf(
	"a", "about", "all", "am", "an", "and", "any", "are", "as", "at", "be", "been", "by",
	"can", "could", "d", "did", "do", "does", "for", "from", "had", "has", "have", "how",
	"i", "if", "in", "is", "it", "its", "just", "ll", "m", "many", "me", "much", "my",
	"of", "on", "or", "our", "please", "re", "s", "so", "some", "t", "than", "that",
	"the", "their", "them", "then", "there", "these", "they", "this", "those", "to",
	"us", "ve", "was", "we", "were", "what", "when", "where", "which", "who", "why",
	"will", "with", "would", "you", "your",
)

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// words splits s into lowercase runs of letters and digits, in order.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// terms returns the stemmed content words of s, each once, in order of
// first appearance. Numbers are dropped because they say nothing about
// which tool fits; arithmetic is scored separately.
func terms(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range words(s) {
		if stopwords[w] || isNumber(w) {
			continue
		}
		w = stem(w)
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

func isNumber(w string) bool {
	for _, r := range w {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// stem folds common English endings so that "burned", "burns" and "burn"
// meet. It is deliberately crude: both sides of a comparison go through it,
// so consistency matters more than linguistic accuracy.
func stem(w string) string {
	cut := func(suffix, repl string) bool {
		if strings.HasSuffix(w, suffix) && len(w)-len(suffix)+len(repl) >= 3 {
			w = w[:len(w)-len(suffix)] + repl
			return true
		}
		return false
	}
	switch {
	case cut("ies", "y"), cut("ing", ""), cut("ed", ""):
	case strings.HasSuffix(w, "es") && hasAnySuffix(w[:len(w)-2], "s", "x", "z", "ch", "sh") && cut("es", ""):
	case strings.HasSuffix(w, "s") && !hasAnySuffix(w, "ss", "us", "is") && cut("s", ""):
	}
	if len(w) > 3 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}

func hasAnySuffix(s string, suffixes ...string) bool {
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}

// bestTool returns the index of the best-scoring tool and how well it
// matched the question.
func bestTool(question string, tools []llm.ToolSpec) (int, strength) {
	qterms := terms(question)
	arith := arithmetic(question) != ""
	best, bestScore, bestCovers := -1, 0, false
	for i, t := range tools {
		score, covers := scoreTool(qterms, arith, t)
		if score > bestScore {
			best, bestScore, bestCovers = i, score, covers
		}
	}
	switch {
	case best < 0:
		return -1, none
	case bestScore >= strongScore || bestCovers:
		return best, strong
	default:
		return best, weak
	}
}

// scoreTool returns the tool's score and whether it matched every term of
// the question.
func scoreTool(qterms []string, arith bool, t llm.ToolSpec) (int, bool) {
	name := setOf(terms(t.Name)...)
	desc := setOf(terms(t.Description)...)
	score, matched := 0, 0
	for _, w := range qterms {
		switch {
		case name[w]:
			score += nameWeight
			matched++
		case desc[w]:
			score += descWeight
			matched++
		}
	}
	if arith && hasExpressionParam(t) {
		score += nameWeight
	}
	return score, score > 0 && matched == len(qterms)
}

func hasExpressionParam(t llm.ToolSpec) bool {
	s, ok := parseSchema(t.InputSchema)
	if !ok {
		return false
	}
	for _, name := range s.Required {
		p := s.property(name)
		if isExpressionProp(name, p) && (p.typ() == "" || p.typ() == "string") {
			return true
		}
	}
	return false
}

var mathFuncs = setOf(
	"sqrt", "cbrt", "abs", "exp", "ln", "log", "log2", "log10", "sin", "cos", "tan",
	"asin", "acos", "atan", "floor", "ceil", "round", "min", "max", "pow", "pi",
)

var isoDate = regexp.MustCompile(`^\d{4}-\d{1,2}-\d{1,2}$`)

// arithmetic returns the longest arithmetic run in s, or "" when s holds no
// arithmetic worth computing.
func arithmetic(s string) string {
	rs := []rune(s)
	var best string
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		run := trimExpr(string(rs[start:end]))
		if len([]rune(run)) > len([]rune(best)) {
			best = run
		}
		start = -1
	}
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.IsDigit(r) || strings.ContainsRune("+-*/%^()., \t", r):
			if start < 0 {
				start = i
			}
			i++
		case isExponent(rs, i):
			i++
		case isASCIILetter(r):
			j := i
			for j < len(rs) && (isASCIILetter(rs[j]) || (j > i && unicode.IsDigit(rs[j]))) {
				j++
			}
			word := strings.ToLower(string(rs[i:j]))
			wordStart := i == 0 || !unicode.IsLetter(rs[i-1])
			if wordStart && mathFuncs[word] && (j == len(rs) || !unicode.IsLetter(rs[j])) {
				if start < 0 {
					start = i
				}
				i = j
				continue
			}
			flush(i)
			i = j
		default:
			flush(i)
			i++
		}
	}
	flush(len(rs))
	if !countsAsArithmetic(best) {
		return ""
	}
	return best
}

func isASCIILetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

// isExponent reports whether rs[i] is the "e" of a number like 1e-3, which
// is part of a run that has already started at the preceding digit.
func isExponent(rs []rune, i int) bool {
	if (rs[i] != 'e' && rs[i] != 'E') || i == 0 || !unicode.IsDigit(rs[i-1]) {
		return false
	}
	k := i + 1
	if k < len(rs) && (rs[k] == '+' || rs[k] == '-') {
		k++
	}
	return k < len(rs) && unicode.IsDigit(rs[k])
}

func trimExpr(s string) string {
	for {
		t := strings.Trim(s, " \t,.")
		for strings.HasSuffix(t, ")") && strings.Count(t, ")") > strings.Count(t, "(") {
			t = strings.TrimSuffix(t, ")")
		}
		for strings.HasPrefix(t, "(") && strings.Count(t, "(") > strings.Count(t, ")") {
			t = strings.TrimPrefix(t, "(")
		}
		if t == s {
			return s
		}
		s = t
	}
}

func countsAsArithmetic(expr string) bool {
	if !strings.ContainsFunc(expr, unicode.IsDigit) || isoDate.MatchString(expr) {
		return false
	}
	body := strings.TrimLeft(expr, "+-")
	if strings.ContainsAny(body, "+-*/%^") {
		return true
	}
	for _, w := range words(body) {
		if mathFuncs[w] {
			return true
		}
	}
	return false
}
