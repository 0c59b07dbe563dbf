package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hooks"
)

// maxExpressionLen matches the schema's maxLength; Run re-checks it because
// the parser's cost should not depend on someone else having validated.
const maxExpressionLen = 1000

// maxNesting bounds parser recursion (parentheses, function calls, chains of
// unary signs) so that hostile input cannot exhaust the stack.
const maxNesting = 100

var calculateSchema = compactJSON(`{
	"type": "object",
	"properties": {
		"expression": {
			"type": "string",
			"minLength": 1,
			"maxLength": 1000,
			"description": "The arithmetic expression to evaluate, for example \"(2 + 3) * 4\", \"2^10 / 1e3\" or \"sqrt(16) + max(1, 5, 3)\"."
		}
	},
	"required": ["expression"],
	"additionalProperties": false
}`)

// Calculate returns the "calculate" tool, which evaluates an arithmetic
// expression with its own parser; no code is ever executed.
//
// Grammar, loosest binding first: + and -; *, / and % (remainder, with the
// sign of the dividend); unary - and +; ^ (power, right-associative). Unary
// minus binds looser than ^, as in mathematics, so -2^2 is -4 and 2^-1 is
// 0.5. ** is accepted for ^, and × ÷ for * /. Names are case-insensitive.
//
// Any step whose result is not a finite number fails with the column of the
// operator or function at fault. A non-integer result is rounded to 15
// significant digits so that binary floating-point noise (0.1+0.2 giving
// 0.30000000000000004) does not reach the model as if it were meaningful.
//
// An expression may be at most 1000 characters long and nest at most 100
// levels (parentheses, calls, signs, powers); past either it is refused
// with an error saying so. Evaluation is a single pass, linear in the
// length, so no expression within the limits can take long.
func Calculate() dispatch.Tool {
	return dispatch.Tool{
		Spec: hooks.ToolSpec{
			Name: "calculate",
			Description: "Calculator: compute the exact value of an arithmetic or math expression instead of working it out by hand. " +
				"Use it to add, subtract, multiply or divide numbers, take powers, square roots, percentages of a total (as 0.15 * 80) and sums. " +
				"Supports + - * / % (remainder) ^ (power), parentheses, decimals and scientific notation like 1e3, " +
				"the constants pi and e, and the functions sqrt, abs, floor, ceil, round, min, max (any number of arguments), " +
				"ln, log10, sin, cos and tan (angles in radians).",
			InputSchema: calculateSchema,
		},
		Run: runCalculate,
	}
}

type calculateArgs struct {
	Expression string `json:"expression"`
}

type calculateResult struct {
	Expression string  `json:"expression"`
	Value      float64 `json:"value"`
}

func runCalculate(_ context.Context, raw json.RawMessage) (any, error) {
	var args calculateArgs
	if err := decodeArgs(raw, &args); err != nil {
		return nil, err
	}
	if strings.TrimSpace(args.Expression) == "" {
		return nil, fmt.Errorf("expression is empty; give an arithmetic expression such as \"2 + 3 * 4\"")
	}
	if n := utf8.RuneCountInString(args.Expression); n > maxExpressionLen {
		return nil, fmt.Errorf("expression is %d characters long; the limit is %d, so split the calculation into steps", n, maxExpressionLen)
	}
	v, err := evaluate(args.Expression)
	if err != nil {
		return nil, err
	}
	return calculateResult{Expression: args.Expression, Value: tidy(v)}, nil
}

// tidy hides floating-point representation noise in fractional results.
// Integral values are left alone: up to 2^53 they are exact, and beyond it
// the float is still closer to the truth than a 15-digit rounding would be.
func tidy(v float64) float64 {
	if v == 0 {
		return 0 // turns -0 into 0
	}
	if v == math.Trunc(v) {
		return v
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 15, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// evaluate parses and computes expr in one pass.
func evaluate(expr string) (float64, error) {
	v, _, err := evaluateCounted(expr)
	return v, err
}

// evaluateCounted is evaluate that also reports the parser's work, which
// must stay linear in the number of tokens whatever the input.
func evaluateCounted(expr string) (float64, work, error) {
	toks, err := lex(expr)
	if err != nil {
		return 0, work{}, err
	}
	p := &parser{toks: toks}
	v, err := p.expr(0)
	w := work{tokens: len(toks), steps: p.steps, deepest: p.deepest}
	if err != nil {
		return 0, w, err
	}
	if t := p.peek(); t.kind != tokEOF {
		err := p.unexpected(t)
		if t.kind == tokNum || t.kind == tokIdent || t.kind == tokLParen {
			err = fmt.Errorf("%v; write * between factors to multiply", err)
		}
		return 0, w, err
	}
	return v, w, nil
}

// work is what one evaluation cost: tokens lexed, parser steps (calls to
// expr and turns of its operator loop) and the deepest recursion reached.
type work struct {
	tokens, steps, deepest int
}

// --- lexer ----------------------------------------------------------------

type tokKind int

const (
	tokEOF tokKind = iota
	tokNum
	tokIdent
	tokOp // one of + - * / % ^
	tokLParen
	tokRParen
	tokComma
)

type token struct {
	kind tokKind
	text string
	op   rune
	num  float64
	col  int // 1-based, counted in characters
}

func lex(expr string) ([]token, error) {
	src := []rune(expr)
	var toks []token
	i := 0
	for i < len(src) {
		c := src[i]
		col := i + 1
		switch {
		case unicode.IsSpace(c):
			i++
		case isDigit(c) || (c == '.' && i+1 < len(src) && isDigit(src[i+1])):
			j := scanNumber(src, i)
			text := string(src[i:j])
			v, err := strconv.ParseFloat(text, 64)
			if err != nil || math.IsInf(v, 0) {
				return nil, fmt.Errorf("number %s at column %d is too large to compute with", text, col)
			}
			toks = append(toks, token{kind: tokNum, text: text, num: v, col: col})
			i = j
		case unicode.IsLetter(c) || c == '_':
			j := i
			for j < len(src) && (unicode.IsLetter(src[j]) || unicode.IsDigit(src[j]) || src[j] == '_') {
				j++
			}
			text := string(src[i:j])
			toks = append(toks, token{kind: tokIdent, text: text, col: col})
			i = j
		case c == '*' && i+1 < len(src) && src[i+1] == '*':
			toks = append(toks, token{kind: tokOp, text: "**", op: '^', col: col})
			i += 2
		case strings.ContainsRune("+-*/%^", c):
			toks = append(toks, token{kind: tokOp, text: string(c), op: c, col: col})
			i++
		case c == '×':
			toks = append(toks, token{kind: tokOp, text: string(c), op: '*', col: col})
			i++
		case c == '÷':
			toks = append(toks, token{kind: tokOp, text: string(c), op: '/', col: col})
			i++
		case c == '(':
			toks = append(toks, token{kind: tokLParen, text: "(", col: col})
			i++
		case c == ')':
			toks = append(toks, token{kind: tokRParen, text: ")", col: col})
			i++
		case c == ',':
			toks = append(toks, token{kind: tokComma, text: ",", col: col})
			i++
		default:
			return nil, fmt.Errorf("unexpected character %q at column %d; use numbers, + - * / %% ^, parentheses and the listed functions", c, col)
		}
	}
	toks = append(toks, token{kind: tokEOF, col: len(src) + 1})
	return toks, nil
}

func isDigit(c rune) bool { return c >= '0' && c <= '9' }

// scanNumber returns the end of the literal starting at i: digits, an
// optional fraction, and an exponent only when digits follow it, so that
// "2e" stays a number followed by the constant e.
func scanNumber(src []rune, i int) int {
	j := i
	for j < len(src) && isDigit(src[j]) {
		j++
	}
	if j < len(src) && src[j] == '.' {
		j++
		for j < len(src) && isDigit(src[j]) {
			j++
		}
	}
	if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
		k := j + 1
		if k < len(src) && (src[k] == '+' || src[k] == '-') {
			k++
		}
		if k < len(src) && isDigit(src[k]) {
			for k < len(src) && isDigit(src[k]) {
				k++
			}
			j = k
		}
	}
	return j
}

// --- parser ---------------------------------------------------------------

// Binding powers for the Pratt parser.
const (
	bpAdd   = 10
	bpMul   = 20
	bpUnary = 30
	bpPow   = 40
)

type parser struct {
	toks    []token
	pos     int
	depth   int
	deepest int
	steps   int
}

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tokEOF {
		p.pos++
	}
	return t
}

func (p *parser) unexpected(t token) error {
	if t.kind == tokEOF {
		return fmt.Errorf("unexpected end of expression at column %d; a number or '(' is missing", t.col)
	}
	return fmt.Errorf("unexpected '%s' at column %d", t.text, t.col)
}

func infixPower(t token) int {
	if t.kind != tokOp {
		return -1
	}
	switch t.op {
	case '+', '-':
		return bpAdd
	case '*', '/', '%':
		return bpMul
	case '^':
		return bpPow
	}
	return -1
}

// expr parses operators that bind tighter than minBP.
func (p *parser) expr(minBP int) (float64, error) {
	p.depth++
	defer func() { p.depth-- }()
	p.steps++
	p.deepest = max(p.deepest, p.depth)
	if p.depth > maxNesting {
		return 0, fmt.Errorf("expression is nested too deeply at column %d (more than %d levels); simplify it", p.peek().col, maxNesting)
	}
	left, err := p.prefix()
	if err != nil {
		return 0, err
	}
	for {
		op := p.peek()
		bp := infixPower(op)
		if bp <= minBP {
			return left, nil
		}
		p.next()
		p.steps++
		rbp := bp
		if op.op == '^' {
			rbp = bp - 1 // right-associative: 2^3^2 is 2^(3^2)
		}
		right, err := p.expr(rbp)
		if err != nil {
			return 0, err
		}
		if left, err = binary(op, left, right); err != nil {
			return 0, err
		}
	}
}

func (p *parser) prefix() (float64, error) {
	t := p.next()
	switch t.kind {
	case tokNum:
		return t.num, nil
	case tokOp:
		if t.op != '-' && t.op != '+' {
			return 0, p.unexpected(t)
		}
		v, err := p.expr(bpUnary)
		if err != nil {
			return 0, err
		}
		if t.op == '-' {
			return -v, nil
		}
		return v, nil
	case tokLParen:
		v, err := p.expr(0)
		if err != nil {
			return 0, err
		}
		if err := p.closing(t); err != nil {
			return 0, err
		}
		return v, nil
	case tokIdent:
		if p.peek().kind == tokLParen {
			return p.call(t)
		}
		name := strings.ToLower(t.text)
		switch name {
		case "pi":
			return math.Pi, nil
		case "e":
			return math.E, nil
		}
		if _, ok := functions[name]; ok {
			return 0, fmt.Errorf("function %s at column %d needs its arguments in parentheses, as %s(...)", t.text, t.col, name)
		}
		return 0, fmt.Errorf("unknown name %q at column %d; the only constants are pi and e", t.text, t.col)
	}
	return 0, p.unexpected(t)
}

// closing consumes the ')' matching open.
func (p *parser) closing(open token) error {
	t := p.next()
	if t.kind == tokRParen {
		return nil
	}
	if t.kind == tokEOF {
		return fmt.Errorf("missing ')' for the '(' at column %d", open.col)
	}
	return fmt.Errorf("unexpected '%s' at column %d; expected ')' to close the '(' at column %d", t.text, t.col, open.col)
}

func (p *parser) call(name token) (float64, error) {
	fn, ok := functions[strings.ToLower(name.text)]
	if !ok {
		hint := ""
		if strings.EqualFold(name.text, "log") {
			hint = " (use ln for the natural logarithm or log10 for base 10)"
		}
		return 0, fmt.Errorf("unknown function %q at column %d%s; available functions: %s", name.text, name.col, hint, strings.Join(functionNames(), ", "))
	}
	open := p.next()
	var args []float64
	if p.peek().kind == tokRParen {
		p.next()
	} else {
		for {
			v, err := p.expr(0)
			if err != nil {
				return 0, err
			}
			args = append(args, v)
			if p.peek().kind == tokComma {
				p.next()
				continue
			}
			if err := p.closing(open); err != nil {
				return 0, err
			}
			break
		}
	}
	lname := strings.ToLower(name.text)
	switch {
	case fn.variadic && len(args) == 0:
		return 0, fmt.Errorf("%s at column %d needs at least one argument", lname, name.col)
	case !fn.variadic && len(args) != 1:
		return 0, fmt.Errorf("%s at column %d takes exactly one argument, got %d", lname, name.col, len(args))
	}
	v, err := fn.eval(args)
	if err != nil {
		return 0, fmt.Errorf("%s at column %d: %v", lname, name.col, err)
	}
	if err := finite(v, lname, name.col); err != nil {
		return 0, err
	}
	return v, nil
}

func binary(op token, a, b float64) (float64, error) {
	var v float64
	switch op.op {
	case '+':
		v = a + b
	case '-':
		v = a - b
	case '*':
		v = a * b
	case '/':
		if b == 0 {
			return 0, fmt.Errorf("division by zero at column %d", op.col)
		}
		v = a / b
	case '%':
		if b == 0 {
			return 0, fmt.Errorf("remainder of division by zero at column %d", op.col)
		}
		v = math.Mod(a, b)
	case '^':
		v = math.Pow(a, b)
	}
	return v, finite(v, "'"+op.text+"'", op.col)
}

func finite(v float64, what string, col int) error {
	switch {
	case math.IsNaN(v):
		return fmt.Errorf("result of %s at column %d is not a real number", what, col)
	case math.IsInf(v, 0):
		return fmt.Errorf("result of %s at column %d is too large to represent", what, col)
	}
	return nil
}

type function struct {
	variadic bool
	eval     func(args []float64) (float64, error)
}

func unary(f func(float64) float64) function {
	return function{eval: func(a []float64) (float64, error) { return f(a[0]), nil }}
}

func positive(name string, f func(float64) float64) function {
	return function{eval: func(a []float64) (float64, error) {
		if a[0] <= 0 {
			return 0, fmt.Errorf("%s is only defined for positive numbers, got %s", name, strconv.FormatFloat(a[0], 'g', -1, 64))
		}
		return f(a[0]), nil
	}}
}

var functions = map[string]function{
	"sqrt": {eval: func(a []float64) (float64, error) {
		if a[0] < 0 {
			return 0, fmt.Errorf("square root of a negative number (%s) is not a real number", strconv.FormatFloat(a[0], 'g', -1, 64))
		}
		return math.Sqrt(a[0]), nil
	}},
	"abs":   unary(math.Abs),
	"floor": unary(math.Floor),
	"ceil":  unary(math.Ceil),
	"round": unary(math.Round), // halves round away from zero
	"ln":    positive("the natural logarithm", math.Log),
	"log10": positive("the base-10 logarithm", math.Log10),
	"sin":   unary(math.Sin),
	"cos":   unary(math.Cos),
	"tan":   unary(math.Tan),
	"min": {variadic: true, eval: func(a []float64) (float64, error) {
		return slices.Min(a), nil
	}},
	"max": {variadic: true, eval: func(a []float64) (float64, error) {
		return slices.Max(a), nil
	}},
}

func functionNames() []string {
	names := make([]string, 0, len(functions))
	for n := range functions {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
