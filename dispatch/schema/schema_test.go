package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"testing"
)

const searchSchema = `{
	"type": "object",
	"properties": {
		"query":  {"type": "string", "minLength": 1, "maxLength": 10, "description": "words"},
		"limit":  {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
		"window": {"type": "string", "enum": ["today", "7d", "all"]},
		"score":  {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
		"tags":   {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}, "minItems": 1, "maxItems": 3},
		"strict": {"type": "boolean"},
		"cursor": {"type": ["string", "null"]},
		"mode":   {"const": "fast"},
		"filter": {
			"type": "object",
			"properties": {"owner": {"type": "string"}},
			"required": ["owner"],
			"additionalProperties": false
		},
		"labels": {"type": "object", "additionalProperties": {"type": "integer"}},
		"content-type": {"type": "string"}
	},
	"required": ["query"],
	"additionalProperties": false
}`

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		args    string
		wantErr string // substring; empty means valid
	}{
		{"minimal", searchSchema, `{"query":"go"}`, ""},
		{"everything", searchSchema, `{"query":"go","limit":50,"window":"7d","score":0.5,"tags":["a","bc"],"strict":true,"cursor":null,"mode":"fast","filter":{"owner":"x"},"labels":{"a":1},"content-type":"x"}`, ""},
		{"integer as float", searchSchema, `{"query":"go","limit":3.0}`, ""},
		{"integer in exponent form", searchSchema, `{"query":"go","limit":3e1}`, ""},
		{"cursor string", searchSchema, `{"query":"go","cursor":"abc"}`, ""},

		{"missing required", searchSchema, `{}`, `args: missing required property "query"`},
		{"below minimum", searchSchema, `{"query":"go","limit":0}`, `args.limit: must be >= 1, got 0`},
		{"above maximum", searchSchema, `{"query":"go","limit":51}`, `args.limit: must be <= 50, got 51`},
		{"not integer", searchSchema, `{"query":"go","limit":3.5}`, `args.limit: must be an integer, got number 3.5`},
		{"integer as string", searchSchema, `{"query":"go","limit":"3"}`, `args.limit: must be an integer, got string "3"`},
		{"enum", searchSchema, `{"query":"go","window":"month"}`, `args.window: must be one of "today", "7d", "all"`},
		{"exclusive minimum", searchSchema, `{"query":"go","score":0}`, `args.score: must be > 0, got 0`},
		{"exclusive maximum", searchSchema, `{"query":"go","score":1.0}`, `args.score: must be < 1, got 1.0`},
		{"too short", searchSchema, `{"query":""}`, `args.query: must be at least 1 characters long, got 0`},
		{"too long", searchSchema, `{"query":"abcdefghijk"}`, `args.query: must be at most 10 characters long, got 11`},
		{"length counts characters", searchSchema, `{"query":"ééééééééé"}`, ""},
		{"pattern", searchSchema, `{"query":"go","tags":["ok","Bad"]}`, `args.tags[1]: must match the pattern "^[a-z]+$", got "Bad"`},
		{"too few items", searchSchema, `{"query":"go","tags":[]}`, `args.tags: must have at least 1 items, got 0`},
		{"too many items", searchSchema, `{"query":"go","tags":["a","b","c","d"]}`, `args.tags: must have at most 3 items, got 4`},
		{"boolean", searchSchema, `{"query":"go","strict":"yes"}`, `args.strict: must be a boolean, got string "yes"`},
		{"type list", searchSchema, `{"query":"go","cursor":5}`, `args.cursor: must be a string or null, got number 5`},
		{"const", searchSchema, `{"query":"go","mode":"slow"}`, `args.mode: must be "fast"`},
		{"nested required", searchSchema, `{"query":"go","filter":{}}`, `args.filter: missing required property "owner"`},
		{"nested closed", searchSchema, `{"query":"go","filter":{"owner":"x","team":"y"}}`, `args.filter: unexpected property "team"; allowed properties are "owner"`},
		{"additional schema", searchSchema, `{"query":"go","labels":{"a":"one"}}`, `args.labels.a: must be an integer, got string "one"`},
		{"odd key path", searchSchema, `{"query":"go","content-type":1}`, `args["content-type"]: must be a string, got number 1`},
		{"unexpected top-level", searchSchema, `{"query":"go","extra":1}`, `args: unexpected property "extra"`},
		{"several errors reported", searchSchema, `{"limit":0,"window":"x"}`, "args: missing required property \"query\"\nargs.limit: must be >= 1, got 0\nargs.window: must be one of"},

		{"invalid JSON", searchSchema, `{"query":`, "arguments are not valid JSON: "},
		{"empty args", searchSchema, ``, "arguments are not valid JSON: empty input"},
		{"trailing data", searchSchema, `{"query":"go"} {}`, "arguments are not valid JSON: "},
		{"array args", searchSchema, `["go"]`, "args: must be a JSON object, got array"},
		{"null args", searchSchema, `null`, "args: must be a JSON object, got null"},
		{"string args", ``, `"go"`, "args: must be a JSON object, got string"},

		{"empty schema accepts objects", ``, `{"anything":[1,2,{"x":null}]}`, ""},
		{"null schema accepts objects", `null`, `{}`, ""},
		{"empty object schema", `{}`, `{"a":1}`, ""},
		{"no-argument tool", `{"type":"object","properties":{},"additionalProperties":false}`, `{"a":1}`, `args: unexpected property "a"; this tool takes no arguments, send {}`},
		{"false subschema", `{"type":"object","properties":{"a":false}}`, `{"a":1}`, `args.a: no value is allowed here`},
		{"true subschema", `{"type":"object","properties":{"a":true}}`, `{"a":[1]}`, ""},

		{"big integers keep precision", `{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740992}}}`, `{"n":9007199254740993}`, "must be <= 9007199254740992, got 9007199254740993"},
		{"tiny fraction is not integer", `{"type":"object","properties":{"n":{"type":"integer"}}}`, `{"n":1.0000000000000000000000001}`, "must be an integer"},
		{"negative numbers", `{"type":"object","properties":{"n":{"type":"number","minimum":-5}}}`, `{"n":-5.5}`, "must be >= -5, got -5.5"},
		{"huge exponent", `{"type":"object","properties":{"n":{"type":"number","maximum":1e308}}}`, `{"n":1e999999999999999999999}`, "must be <= 1e308"},
		{"tiny exponent passes", `{"type":"object","properties":{"n":{"type":"number","exclusiveMinimum":0}}}`, `{"n":1e-999999999999999999999}`, ""},
		{"enum numbers compare by value", `{"type":"object","properties":{"n":{"enum":[1,2]}}}`, `{"n":2.0}`, ""},
		{"enum objects", `{"type":"object","properties":{"n":{"enum":[{"a":[1,"x"]}]}}}`, `{"n":{"a":[1.0,"x"]}}`, ""},
		{"enum mismatch object", `{"type":"object","properties":{"n":{"enum":[{"a":1}]}}}`, `{"n":{"a":1,"b":2}}`, `args.n: must be one of {"a":1}`},
		{"unanchored pattern", `{"type":"object","properties":{"s":{"type":"string","pattern":"b+"}}}`, `{"s":"abbc"}`, ""},
		{"keywords of other types ignored", `{"type":"object","properties":{"s":{"minimum":3,"minLength":2}}}`, `{"s":1}`, `args.s: must be >= 3, got 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(json.RawMessage(tt.schema), json.RawMessage(tt.args))
			// A compiled schema must answer exactly as the one-shot form.
			sch, cerr := Compile(json.RawMessage(tt.schema))
			if cerr != nil {
				t.Fatalf("Compile: %v", cerr)
			}
			if again := sch.Validate(json.RawMessage(tt.args)); fmt.Sprint(again) != fmt.Sprint(err) {
				t.Fatalf("compiled Validate(%s) = %v, one-shot Validate = %v", tt.args, again, err)
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate(%s) = %v, want nil", tt.args, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate(%s) = nil, want error containing %q", tt.args, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate(%s) = %q, want it to contain %q", tt.args, err, tt.wantErr)
			}
		})
	}
}

func TestValidateErrorType(t *testing.T) {
	err := Validate(json.RawMessage(searchSchema), json.RawMessage(`{"query":"go","limit":0}`))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not a *schema.Error", err)
	}
	if e.Path != "args.limit" || e.Message != "must be >= 1, got 0" {
		t.Fatalf("got path %q message %q", e.Path, e.Message)
	}
	if got := err.Error(); got != "args.limit: must be >= 1, got 0" {
		t.Fatalf("single error text = %q", got)
	}
}

func TestValidateCapsErrors(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 50 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + strings.Repeat("x", i) + `":1`)
	}
	b.WriteString("}")
	err := Validate(json.RawMessage(`{"type":"object","additionalProperties":{"type":"string"}}`), json.RawMessage(b.String()))
	if err == nil {
		t.Fatal("want errors")
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != maxErrors {
		t.Fatalf("got %d error lines, want %d", n, maxErrors)
	}
}

func TestCompileInvalidSchema(t *testing.T) {
	for _, bad := range []string{`{"type":"objekt"}`, `{"anyOf":[]}`, `[1]`, `{"type":"string"}`} {
		if sch, err := Compile(json.RawMessage(bad)); !errors.Is(err, ErrInvalidSchema) || sch != nil {
			t.Errorf("Compile(%s) = %v, %v; want ErrInvalidSchema", bad, sch, err)
		}
	}
	// Empty and null schemas accept any object, and only objects.
	for _, empty := range []string{``, `null`} {
		sch, err := Compile(json.RawMessage(empty))
		if err != nil {
			t.Fatalf("Compile(%q): %v", empty, err)
		}
		if err := sch.Validate(json.RawMessage(`{"any":1}`)); err != nil {
			t.Errorf("schema %q rejects an object: %v", empty, err)
		}
		if err := sch.Validate(json.RawMessage(`[]`)); err == nil {
			t.Errorf("schema %q accepts an array", empty)
		}
	}
}

func TestValidateInvalidSchema(t *testing.T) {
	err := Validate(json.RawMessage(`{"type":"objekt"}`), json.RawMessage(`{}`))
	if !errors.Is(err, ErrInvalidSchema) {
		t.Fatalf("Validate with a bad schema = %v, want ErrInvalidSchema", err)
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		wantErr string // substring; empty means usable
	}{
		{"search schema", searchSchema, ""},
		{"empty", ``, ""},
		{"null", `null`, ""},
		{"empty object", `{}`, ""},
		{"annotations and unknown keywords ignored", `{"type":"object","title":"t","description":"d","$schema":"x","x-vendor":{"anyOf":1},"properties":{"a":{"type":"string","format":"uri","examples":["x"],"default":"y"}}}`, ""},
		{"type list", `{"type":["object","null"]}`, ""},
		{"integer-valued counts", `{"type":"object","properties":{"a":{"type":"string","maxLength":10.0}}}`, ""},

		{"invalid JSON", `{"type":`, "schema is not valid JSON"},
		{"not an object", `[]`, "schema: must be a JSON object, got array"},
		{"boolean root", `true`, "schema: must be a JSON object"},
		{"top-level not object", `{"type":"string"}`, `top-level type must be "object"`},
		{"unknown type", `{"type":"object","properties":{"a":{"type":"text"}}}`, `schema.properties.a.type: unknown type "text"`},
		{"type not string", `{"type":3}`, "schema.type: must be a type name"},
		{"empty type list", `{"type":[]}`, "must list at least one type"},
		{"duplicate type", `{"type":["object","object"]}`, "listed twice"},
		{"properties not object", `{"properties":[]}`, "schema.properties: must be an object"},
		{"property not schema", `{"properties":{"a":"string"}}`, `schema.properties.a: must be a schema`},
		{"required not array", `{"properties":{"a":{}},"required":"a"}`, "schema.required: must be an array"},
		{"required not string", `{"properties":{"a":{}},"required":[1]}`, "schema.required[0]: must be a property name string"},
		{"required undeclared", `{"properties":{"a":{}},"required":["b"]}`, `required property "b" is not declared in properties`},
		{"required without properties", `{"required":["a"]}`, `required property "a" is not declared`},
		{"required twice", `{"properties":{"a":{}},"required":["a","a"]}`, "listed twice"},
		{"additionalProperties bad", `{"additionalProperties":"no"}`, "schema.additionalProperties: must be a schema"},
		{"enum empty", `{"properties":{"a":{"enum":[]}}}`, "must be a non-empty array"},
		{"enum not array", `{"properties":{"a":{"enum":"x"}}}`, "must be a non-empty array"},
		{"enum wrong type", `{"properties":{"a":{"type":"string","enum":["x",1]}}}`, "schema.properties.a.enum[1]: value 1 does not have the schema's type string"},
		{"const wrong type", `{"properties":{"a":{"type":"integer","const":1.5}}}`, "does not have the schema's type integer"},
		{"minimum not number", `{"properties":{"a":{"minimum":"1"}}}`, "schema.properties.a.minimum: must be a number"},
		{"boolean exclusiveMinimum", `{"properties":{"a":{"exclusiveMinimum":true}}}`, "boolean draft-04 form is not supported"},
		{"min above max", `{"properties":{"a":{"minimum":5,"maximum":1}}}`, "lower bound 5 is greater than upper bound 1"},
		{"negative minLength", `{"properties":{"a":{"minLength":-1}}}`, "minLength: must be a non-negative integer"},
		{"fractional maxItems", `{"properties":{"a":{"maxItems":1.5}}}`, "maxItems: must be a non-negative integer"},
		{"huge maxLength", `{"properties":{"a":{"maxLength":1e30}}}`, "maxLength: must be a non-negative integer"},
		{"minLength above maxLength", `{"properties":{"a":{"minLength":3,"maxLength":2}}}`, "minLength 3 is greater than maxLength 2"},
		{"minItems above maxItems", `{"properties":{"a":{"minItems":3,"maxItems":2}}}`, "minItems 3 is greater than maxItems 2"},
		{"bad pattern", `{"properties":{"a":{"pattern":"("}}}`, "not a valid Go regular expression"},
		{"pattern not string", `{"properties":{"a":{"pattern":1}}}`, "must be a regular expression string"},
		{"tuple items", `{"properties":{"a":{"items":[{}]}}}`, "tuple form"},
		{"items not schema", `{"properties":{"a":{"items":1}}}`, "schema.properties.a.items: must be a schema"},
		{"unsupported keyword", `{"properties":{"a":{"anyOf":[{"type":"string"}]}}}`, `schema.properties.a: keyword "anyOf" is not supported`},
		{"unsupported ref", `{"properties":{"a":{"$ref":"#/$defs/x"}}}`, `keyword "$ref" is not supported`},
		{"too deep", strings.Repeat(`{"items":`, 100) + `{}` + strings.Repeat(`}`, 100), "nested more than 64 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(json.RawMessage(tt.schema))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Check = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestDecimalCompare(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"0", "-0", 0},
		{"0.0", "0e10", 0},
		{"1", "1.0", 0},
		{"100", "1e2", 0},
		{"0.001", "1e-3", 0},
		{"1.5", "1.25", 1},
		{"-1.5", "-1.25", -1},
		{"10", "9.999", 1},
		{"0.1", "0.09", 1},
		{"-1", "0", -1},
		{"9007199254740993", "9007199254740992", 1},
		{"1e1000000000000000000000", "1e308", 1},
		{"-1e1000000000000000000000", "-1e308", -1},
		{"1e-1000000000000000000000", "0", 1},
	}
	for _, tt := range tests {
		a, ok1 := parseDecimal(json.Number(tt.a))
		b, ok2 := parseDecimal(json.Number(tt.b))
		if !ok1 || !ok2 {
			t.Fatalf("parse %s / %s failed", tt.a, tt.b)
		}
		if got := a.cmp(b); got != tt.want {
			t.Errorf("cmp(%s, %s) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := b.cmp(a); got != -tt.want {
			t.Errorf("cmp(%s, %s) = %d, want %d", tt.b, tt.a, got, -tt.want)
		}
	}
	for _, s := range []string{"3", "3.0", "30e-1", "0", "-0.0", "1e100", "12.5e1"} {
		if d, _ := parseDecimal(json.Number(s)); !d.isInteger() {
			t.Errorf("%s should be an integer", s)
		}
	}
	for _, s := range []string{"3.5", "0.1", "1e-1", "125e-2", "1e-1000000000000000000000"} {
		if d, _ := parseDecimal(json.Number(s)); d.isInteger() {
			t.Errorf("%s should not be an integer", s)
		}
	}
}

// FuzzValidate feeds arbitrary schemas and arguments. Besides never
// panicking, validation must be deterministic, report an unusable schema as
// the schema's fault, name a path under args in every complaint about the
// arguments, stop at maxErrors, and, with no schema, accept exactly the
// single JSON objects.
func FuzzValidate(f *testing.F) {
	f.Add(searchSchema, `{"query":"go","limit":0}`)
	f.Add(``, `{}`)
	f.Add(`{"type":["object","null"],"properties":{"a":{"type":"integer","minimum":-1e5}}}`, `{"a":1e-400}`)
	f.Add(`{"properties":{"a":{"items":{"enum":[1,"x",null]}}}}`, `{"a":[1.0,"x",null,{}]}`)
	f.Add(`{"properties":{"a":{"pattern":"^(a+)+$","maxLength":3}}}`, `{"a":"aaaaaaaaaaaaaaaaaaaaaaaaaaaa!"}`)
	f.Add(`{"additionalProperties":{"type":"object","additionalProperties":false}}`, `{"x":{"y":1}}`)
	f.Add(`{"additionalProperties":false}`, `{"a\n\u2028b":1,"`+strings.Repeat("k", 300)+`":2}`)
	f.Add(`{"properties":{"a":{"items":{"type":"string"}}}}`, `{"a":[`+strings.Repeat("1,", 40)+`1]}`)
	f.Add(`{"properties":{"n":{"minimum":1e999999999999999999999,"maximum":1e1000000000000000000000}}}`, `{"n":1e1152921504606846977}`)
	f.Add(`{"properties":{"n":{"type":"integer","exclusiveMaximum":-0.0}}}`, `{"n":-0e-99999999999999999999}`)
	f.Add(`{"properties":{"s":{"pattern":"((((((((((a{1000}){1000}){1000})))))))))"}}}`, `{"s":"a"}`)
	f.Add(`{"items":`+strings.Repeat(`{"items":`, 70)+`{}`+strings.Repeat(`}`, 71), `{}`)
	f.Add(`{"enum":[{"a":[1,{"b":null}]}]}`, `{"a":[1.0,{"b":null}]}`)
	f.Add(`{"const":{"a":1}}`, `{"a":1e0} `)
	f.Add(``, `{}{}`)
	f.Add(``, "{\"a\":\"\xff\"}")
	f.Fuzz(func(t *testing.T, s, args string) {
		checkErr := Check(json.RawMessage(s))
		err := Validate(json.RawMessage(s), json.RawMessage(args))
		if checkErr != nil && !errors.Is(err, ErrInvalidSchema) {
			t.Fatalf("Check failed (%v) but Validate did not report ErrInvalidSchema: %v", checkErr, err)
		}
		if checkErr == nil && errors.Is(err, ErrInvalidSchema) {
			t.Fatalf("Check accepted the schema but Validate blamed it: %v", err)
		}
		if again := Validate(json.RawMessage(s), json.RawMessage(args)); fmt.Sprint(again) != fmt.Sprint(err) {
			t.Fatalf("two validations disagree:\n%v\n%v", err, again)
		}
		if err != nil {
			msg := err.Error()
			if msg == "" {
				t.Fatal("empty error message")
			}
			if checkErr == nil && !strings.HasPrefix(msg, "arguments are not valid JSON") {
				lines := strings.Split(msg, "\n")
				if len(lines) > maxErrors {
					t.Fatalf("%d errors reported, more than the limit of %d", len(lines), maxErrors)
				}
				for _, l := range lines {
					if !strings.HasPrefix(l, "args") {
						t.Fatalf("error line does not name a path under args: %q", l)
					}
				}
			}
		}
		// JSON whitespace is these four only: a form feed before "{" makes
		// the arguments invalid, as json.Valid agrees.
		trimmed := strings.TrimLeft(args, " \t\r\n")
		isObject := json.Valid([]byte(args)) && strings.HasPrefix(trimmed, "{")
		if err := Validate(nil, json.RawMessage(args)); (err == nil) != isObject {
			t.Fatalf("with no schema, args %q: err = %v, but a single JSON object: %v", args, err, isObject)
		}
	})
}

// jsonNumber is the JSON number grammar: sign, integer part, fraction,
// exponent.
var jsonNumber = regexp.MustCompile(`^(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$`)

// exactNumber is a JSON number as mant × 10^exp with both parts unbounded,
// so that comparing two of them can be done without any shortcut.
type exactNumber struct{ mant, exp *big.Int }

func parseExact(n string) (exactNumber, bool) {
	m := jsonNumber.FindStringSubmatch(n)
	if m == nil {
		return exactNumber{}, false
	}
	mant, _ := new(big.Int).SetString(m[1]+m[2]+m[3], 10)
	exp := big.NewInt(0)
	if m[4] != "" {
		exp.SetString(m[4], 10)
	}
	exp.Sub(exp, big.NewInt(int64(len(m[3]))))
	return exactNumber{mant, exp}, true
}

// cmpExact compares numbers whose mantissas have at most maxDigits digits.
func cmpExact(a, b exactNumber, maxDigits int) int {
	sa, sb := a.mant.Sign(), b.mant.Sign()
	if sa != sb || sa == 0 {
		return cmpInt(sa, sb)
	}
	d := new(big.Int).Sub(a.exp, b.exp)
	if d.CmpAbs(big.NewInt(int64(maxDigits))) > 0 {
		// Mantissas of at most maxDigits digits cannot make up for a
		// larger difference in exponents.
		return sa * d.Sign()
	}
	x, y := new(big.Int).Abs(a.mant), new(big.Int).Abs(b.mant)
	scale := new(big.Int).Exp(big.NewInt(10), new(big.Int).Abs(d), nil)
	if d.Sign() > 0 {
		x.Mul(x, scale)
	} else {
		y.Mul(y, scale)
	}
	return sa * x.Cmp(y)
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// FuzzNumberBounds checks minimum, maximum and their exclusive forms, which
// compare decimals without converting them to float64, against exact
// integer arithmetic, exponents of any size included.
func FuzzNumberBounds(f *testing.F) {
	for _, s := range [][2]string{
		{"1", "1"}, {"1", "1.0"}, {"0", "-0"}, {"9007199254740992", "9007199254740993"},
		{"0.1", "0.10000000000000001"}, {"1e2", "100.0"}, {"-1e-5", "-0.00001"}, {"12.5e1", "125"},
		{"1e308", "1e309"}, {"1e-400", "0"}, {"-3", "-2.99999999999999999999"}, {"123456789e-9", "0.123456789"},
		{"-1e-99999999999999999999", "0"}, {"1e1000", "2e99999999999999999999"}, {"-1e-1000", "-1e-99999999999999999999"},
	} {
		f.Add(s[0], s[1])
	}
	const maxLen = 500
	f.Fuzz(func(t *testing.T, bound, value string) {
		if len(bound) > maxLen || len(value) > maxLen {
			return
		}
		b, ok1 := parseExact(bound)
		v, ok2 := parseExact(value)
		if !ok1 || !ok2 {
			return
		}
		c := cmpExact(v, b, maxLen)
		for _, s := range []string{`{"properties":{"n":{"const":` + bound + `}}}`, `{"properties":{"n":{"enum":[[` + bound + `]]}}}`} {
			arg := `{"n":` + value + `}`
			if strings.Contains(s, "enum") {
				arg = `{"n":[` + value + `]}`
			}
			err := Validate(json.RawMessage(s), json.RawMessage(arg))
			if errors.Is(err, ErrInvalidSchema) {
				if !strings.Contains(err.Error(), "too large") {
					t.Fatalf("%s refused without saying why: %v", s, err)
				}
				continue
			}
			if (err == nil) != (c == 0) {
				t.Fatalf("%s, value %s: err = %v, want passing %v", s, value, err, c == 0)
			}
		}
		for _, k := range []struct {
			keyword string
			passes  bool
		}{
			{"minimum", c >= 0}, {"maximum", c <= 0}, {"exclusiveMinimum", c > 0}, {"exclusiveMaximum", c < 0},
		} {
			s := `{"properties":{"n":{"` + k.keyword + `":` + bound + `}}}`
			err := Validate(json.RawMessage(s), json.RawMessage(`{"n":`+value+`}`))
			if errors.Is(err, ErrInvalidSchema) {
				if !strings.Contains(err.Error(), "too large") {
					t.Fatalf("%s %s refused without saying why: %v", k.keyword, bound, err)
				}
				return
			}
			if (err == nil) != k.passes {
				t.Fatalf("%s %s, value %s: err = %v, want passing %v", k.keyword, bound, value, err, k.passes)
			}
		}
	})
}
