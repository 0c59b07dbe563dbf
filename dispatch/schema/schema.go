// Package schema validates tool arguments against the subset of JSON Schema
// that tool input schemas use in practice, so that a model's malformed call
// is answered with a precise, path-naming error it can correct instead of
// reaching the tool's code. It is deliberately small and dependency-free.
//
// Supported keywords: type (a name or a list of names among object, string,
// number, integer, boolean, array, null), properties, required,
// additionalProperties (false or a schema), enum, const, minimum, maximum,
// exclusiveMinimum and exclusiveMaximum (numeric form), minLength, maxLength,
// pattern (Go regexp syntax, unanchored as in JSON Schema), items (a single
// schema), minItems and maxItems. Annotations such as description, title,
// default, examples and format are ignored, as are unknown keywords.
//
// Standard validation keywords outside that subset (anyOf, $ref,
// multipleOf, ...) make Check fail rather than being ignored: a schema that
// silently validated less than its author wrote would let bad arguments
// through while appearing to guard them.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrInvalidSchema is wrapped by Validate's error when the schema itself is
// unusable; that is the tool author's fault, not the caller's.
var ErrInvalidSchema = errors.New("invalid input schema")

// Error is one way the arguments failed the schema. Path names the offending
// value, rooted at "args", such as args.items[2].name.
type Error struct {
	Path    string
	Message string
}

func (e *Error) Error() string { return e.Path + ": " + e.Message }

// maxErrors bounds how many problems one Validate call reports; past that the
// model is better served fixing the first ones and trying again.
const maxErrors = 20

// maxDepth bounds schema nesting; tool schemas are shallow, and the bound
// keeps recursion over hostile schemas cheap.
const maxDepth = 64

// Check reports whether s is a usable tool input schema: a JSON object whose
// keywords are well formed, whose "required" names only declared properties,
// whose bounds can be satisfied, and whose top-level type, if given, allows
// an object. An empty schema or JSON null is usable and accepts any object.
func Check(s json.RawMessage) error {
	_, err := compileRoot(s)
	return err
}

// Schema is a compiled tool input schema. Compiling once and validating
// many times spares every call the decoding and checking of the schema;
// a Schema is immutable and safe for concurrent use.
type Schema struct {
	root *node
}

// Compile compiles s, with the checks of Check; the error says what is
// wrong with the schema and wraps ErrInvalidSchema.
func Compile(s json.RawMessage) (*Schema, error) {
	root, err := compileRoot(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	return &Schema{root: root}, nil
}

// Validate reports whether args, the raw JSON of a tool call's arguments,
// satisfies schema s. Arguments must be a single JSON object. An empty or
// null schema accepts any object.
//
// If s is unusable the error wraps ErrInvalidSchema. Otherwise a failure is
// either a single *Error or, when several values are wrong, an errors.Join of
// them (at most 20), one per line, so the model can fix them all at once.
func Validate(s json.RawMessage, args json.RawMessage) error {
	sch, err := Compile(s)
	if err != nil {
		return err
	}
	return sch.Validate(args)
}

// Validate reports whether args satisfies the schema, with the errors of
// the package-level Validate.
func (s *Schema) Validate(args json.RawMessage) error {
	val, err := decodeOne(args)
	if err != nil {
		return fmt.Errorf("arguments are not valid JSON: %v; send a JSON object such as {}", err)
	}
	if _, ok := val.(map[string]any); !ok {
		return &Error{Path: "args", Message: "must be a JSON object, got " + describe(val)}
	}
	var v validator
	v.check(s.root, val, "args")
	switch len(v.errs) {
	case 0:
		return nil
	case 1:
		return v.errs[0]
	}
	errs := make([]error, len(v.errs))
	for i, e := range v.errs {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// decodeOne decodes exactly one JSON value, keeping numbers as their text so
// that no precision is lost before comparison.
func decodeOne(data []byte) (any, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("empty input")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the first JSON value")
	}
	return v, nil
}

// --- compiled schema ------------------------------------------------------

type bound struct {
	raw string
	d   decimal
}

type node struct {
	never      bool     // the boolean schema false
	types      []string // nil: any type
	props      map[string]*node
	required   []string
	closed     bool  // additionalProperties: false
	additional *node // schema for undeclared properties, nil: anything
	enum       []any
	hasConst   bool
	constVal   any
	min, max   *bound
	exMin      *bound
	exMax      *bound
	minLen     int // -1: unset
	maxLen     int
	minItems   int
	maxItems   int
	pattern    *regexp.Regexp
	items      *node
}

var knownTypes = []string{"object", "string", "number", "integer", "boolean", "array", "null"}

var unsupported = map[string]bool{
	"$ref": true, "$dynamicRef": true, "$recursiveRef": true,
	"allOf": true, "anyOf": true, "oneOf": true, "not": true,
	"if": true, "then": true, "else": true,
	"dependentRequired": true, "dependentSchemas": true, "dependencies": true,
	"patternProperties": true, "propertyNames": true,
	"minProperties": true, "maxProperties": true,
	"unevaluatedProperties": true, "unevaluatedItems": true,
	"prefixItems": true, "additionalItems": true,
	"contains": true, "minContains": true, "maxContains": true,
	"uniqueItems": true, "multipleOf": true,
}

func compileRoot(s json.RawMessage) (*node, error) {
	trimmed := bytes.TrimSpace(s)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return &node{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1}, nil
	}
	raw, err := decodeOne(trimmed)
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %v", err)
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema: must be a JSON object, got %s", describe(raw))
	}
	n, err := compile(obj, "schema", 0)
	if err != nil {
		return nil, err
	}
	if n.types != nil && !slices.Contains(n.types, "object") {
		return nil, fmt.Errorf(`schema.type: tool arguments are a JSON object, so the top-level type must be "object", got %s`, strings.Join(quoteAll(n.types), ", "))
	}
	return n, nil
}

func compileSub(raw any, path string, depth int) (*node, error) {
	switch r := raw.(type) {
	case bool:
		n := &node{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1}
		n.never = !r
		return n, nil
	case map[string]any:
		return compile(r, path, depth)
	}
	return nil, fmt.Errorf("%s: must be a schema (an object or a boolean), got %s", path, describe(raw))
}

func compile(obj map[string]any, path string, depth int) (*node, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%s: schema nested more than %d levels deep", path, maxDepth)
	}
	n := &node{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1}

	for _, k := range sortedKeys(obj) {
		if unsupported[k] {
			return nil, fmt.Errorf("%s: keyword %q is not supported; express the constraint with type, properties, required, enum, bounds, pattern or items", path, k)
		}
	}

	if t, ok := obj["type"]; ok {
		types, err := compileType(t, child(path, "type"))
		if err != nil {
			return nil, err
		}
		n.types = types
	}

	if p, ok := obj["properties"]; ok {
		props, ok := p.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: must be an object mapping property names to schemas, got %s", child(path, "properties"), describe(p))
		}
		n.props = make(map[string]*node, len(props))
		for _, name := range sortedKeys(props) {
			sub, err := compileSub(props[name], child(child(path, "properties"), name), depth+1)
			if err != nil {
				return nil, err
			}
			n.props[name] = sub
		}
	}

	if r, ok := obj["required"]; ok {
		rp := child(path, "required")
		list, ok := r.([]any)
		if !ok {
			return nil, fmt.Errorf("%s: must be an array of property names, got %s", rp, describe(r))
		}
		for i, item := range list {
			name, ok := item.(string)
			if !ok {
				return nil, fmt.Errorf("%s[%d]: must be a property name string, got %s", rp, i, describe(item))
			}
			if slices.Contains(n.required, name) {
				return nil, fmt.Errorf("%s: %q is listed twice", rp, name)
			}
			if _, declared := n.props[name]; !declared {
				return nil, fmt.Errorf("%s: required property %q is not declared in properties; declare it or drop it from required", rp, name)
			}
			n.required = append(n.required, name)
		}
	}

	if a, ok := obj["additionalProperties"]; ok {
		switch av := a.(type) {
		case bool:
			n.closed = !av
		default:
			sub, err := compileSub(a, child(path, "additionalProperties"), depth+1)
			if err != nil {
				return nil, err
			}
			n.additional = sub
		}
	}

	if e, ok := obj["enum"]; ok {
		list, ok := e.([]any)
		if !ok || len(list) == 0 {
			return nil, fmt.Errorf("%s: must be a non-empty array of allowed values, got %s", child(path, "enum"), describe(e))
		}
		for i, v := range list {
			if n.types != nil && !matchesAnyType(v, n.types) {
				return nil, fmt.Errorf("%s[%d]: value %s does not have the schema's type %s, so it could never be accepted", child(path, "enum"), i, jsonText(v), strings.Join(n.types, " or "))
			}
		}
		if err := checkComparable(list, child(path, "enum")); err != nil {
			return nil, err
		}
		n.enum = list
	}

	if c, ok := obj["const"]; ok {
		if n.types != nil && !matchesAnyType(c, n.types) {
			return nil, fmt.Errorf("%s: value %s does not have the schema's type %s, so it could never be accepted", child(path, "const"), jsonText(c), strings.Join(n.types, " or "))
		}
		if err := checkComparable(c, child(path, "const")); err != nil {
			return nil, err
		}
		n.hasConst, n.constVal = true, c
	}

	var err error
	if n.min, err = compileBound(obj, "minimum", path); err != nil {
		return nil, err
	}
	if n.max, err = compileBound(obj, "maximum", path); err != nil {
		return nil, err
	}
	if n.exMin, err = compileBound(obj, "exclusiveMinimum", path); err != nil {
		return nil, err
	}
	if n.exMax, err = compileBound(obj, "exclusiveMaximum", path); err != nil {
		return nil, err
	}
	lo, hi := n.min, n.max
	if lo == nil {
		lo = n.exMin
	}
	if hi == nil {
		hi = n.exMax
	}
	if lo != nil && hi != nil && lo.d.cmp(hi.d) > 0 {
		return nil, fmt.Errorf("%s: lower bound %s is greater than upper bound %s, so no number can satisfy it", path, lo.raw, hi.raw)
	}

	if n.minLen, err = compileCount(obj, "minLength", path); err != nil {
		return nil, err
	}
	if n.maxLen, err = compileCount(obj, "maxLength", path); err != nil {
		return nil, err
	}
	if n.maxLen >= 0 && n.minLen > n.maxLen {
		return nil, fmt.Errorf("%s: minLength %d is greater than maxLength %d", path, n.minLen, n.maxLen)
	}
	if n.minItems, err = compileCount(obj, "minItems", path); err != nil {
		return nil, err
	}
	if n.maxItems, err = compileCount(obj, "maxItems", path); err != nil {
		return nil, err
	}
	if n.maxItems >= 0 && n.minItems > n.maxItems {
		return nil, fmt.Errorf("%s: minItems %d is greater than maxItems %d", path, n.minItems, n.maxItems)
	}

	if p, ok := obj["pattern"]; ok {
		src, ok := p.(string)
		if !ok {
			return nil, fmt.Errorf("%s: must be a regular expression string, got %s", child(path, "pattern"), describe(p))
		}
		re, err := regexp.Compile(src)
		if err != nil {
			return nil, fmt.Errorf("%s: not a valid Go regular expression: %v", child(path, "pattern"), err)
		}
		n.pattern = re
	}

	if it, ok := obj["items"]; ok {
		if _, isList := it.([]any); isList {
			return nil, fmt.Errorf("%s: the tuple form (an array of schemas) is not supported; give one schema for every item", child(path, "items"))
		}
		sub, err := compileSub(it, child(path, "items"), depth+1)
		if err != nil {
			return nil, err
		}
		n.items = sub
	}
	return n, nil
}

func compileType(t any, path string) ([]string, error) {
	var names []string
	switch tv := t.(type) {
	case string:
		names = []string{tv}
	case []any:
		if len(tv) == 0 {
			return nil, fmt.Errorf("%s: must list at least one type", path)
		}
		for i, item := range tv {
			s, ok := item.(string)
			if !ok {
				return nil, fmt.Errorf("%s[%d]: must be a type name, got %s", path, i, describe(item))
			}
			if slices.Contains(names, s) {
				return nil, fmt.Errorf("%s: type %q is listed twice", path, s)
			}
			names = append(names, s)
		}
	default:
		return nil, fmt.Errorf("%s: must be a type name or an array of them, got %s", path, describe(t))
	}
	for _, name := range names {
		if !slices.Contains(knownTypes, name) {
			return nil, fmt.Errorf("%s: unknown type %q; use one of %s", path, name, strings.Join(quoteAll(knownTypes), ", "))
		}
	}
	return names, nil
}

func compileBound(obj map[string]any, key, path string) (*bound, error) {
	v, ok := obj[key]
	if !ok {
		return nil, nil
	}
	num, ok := v.(json.Number)
	if !ok {
		hint := ""
		if _, isBool := v.(bool); isBool && strings.HasPrefix(key, "exclusive") {
			hint = "; the boolean draft-04 form is not supported, put the bound itself here"
		}
		return nil, fmt.Errorf("%s: must be a number, got %s%s", child(path, key), describe(v), hint)
	}
	d, ok := parseDecimal(num)
	if !ok {
		return nil, fmt.Errorf("%s: %q is not a number", child(path, key), num)
	}
	if d.clamped() {
		return nil, exponentError(child(path, key), num)
	}
	return &bound{raw: num.String(), d: d}, nil
}

// checkComparable refuses a number in an enum or const value whose exponent
// is at the clamp, where two different numbers would compare equal.
func checkComparable(v any, path string) error {
	switch x := v.(type) {
	case json.Number:
		if d, ok := parseDecimal(x); ok && d.clamped() {
			return exponentError(path, x)
		}
	case []any:
		for i, item := range x {
			if err := checkComparable(item, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, k := range sortedKeys(x) {
			if err := checkComparable(x[k], child(path, k)); err != nil {
				return err
			}
		}
	}
	return nil
}

func exponentError(path string, num json.Number) error {
	return fmt.Errorf("%s: %s has an exponent too large to compare exactly; write a number between 1e-1000000000000000000 and 1e1000000000000000000 in magnitude", path, clip(num.String()))
}

func compileCount(obj map[string]any, key, path string) (int, error) {
	v, ok := obj[key]
	if !ok {
		return -1, nil
	}
	// Counts above a billion are not meaningful for tool arguments; the cap
	// keeps the conversion below from overflowing.
	if num, ok := v.(json.Number); ok {
		if d, ok := parseDecimal(num); ok && d.isInteger() && (d.isZero() || (!d.neg && d.exp <= 9)) {
			if d.isZero() {
				return 0, nil
			}
			i, err := strconv.Atoi(d.digits + strings.Repeat("0", int(d.exp)-len(d.digits)))
			if err == nil {
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("%s: must be a non-negative integer below 1000000000, got %s", child(path, key), describe(v))
}

// --- validation -----------------------------------------------------------

type validator struct {
	errs []*Error
}

func (v *validator) fail(path, format string, args ...any) {
	if len(v.errs) < maxErrors {
		v.errs = append(v.errs, &Error{Path: path, Message: fmt.Sprintf(format, args...)})
	}
}

func (v *validator) full() bool { return len(v.errs) >= maxErrors }

func (v *validator) check(n *node, val any, path string) {
	if v.full() {
		return
	}
	if n.never {
		v.fail(path, "no value is allowed here; remove it")
		return
	}
	if n.types != nil && !matchesAnyType(val, n.types) {
		v.fail(path, "must be %s, got %s", typePhrase(n.types), describe(val))
		return
	}
	if n.hasConst && !equalJSON(val, n.constVal) {
		v.fail(path, "must be %s", jsonText(n.constVal))
		return
	}
	if n.enum != nil && !slices.ContainsFunc(n.enum, func(e any) bool { return equalJSON(val, e) }) {
		v.fail(path, "must be one of %s", enumList(n.enum))
		return
	}
	switch x := val.(type) {
	case map[string]any:
		v.checkObject(n, x, path)
	case []any:
		v.checkArray(n, x, path)
	case string:
		v.checkString(n, x, path)
	case json.Number:
		v.checkNumber(n, x, path)
	}
}

func (v *validator) checkObject(n *node, obj map[string]any, path string) {
	for _, name := range n.required {
		if _, ok := obj[name]; !ok {
			v.fail(path, "missing required property %q", name)
		}
	}
	for _, k := range sortedKeys(obj) {
		if v.full() {
			return
		}
		if sub, ok := n.props[k]; ok {
			v.check(sub, obj[k], child(path, k))
			continue
		}
		switch {
		case n.closed && len(n.props) == 0 && path == "args":
			v.fail(path, "unexpected property %q; this tool takes no arguments, send {}", k)
		case n.closed && len(n.props) == 0:
			v.fail(path, "unexpected property %q; this object must be empty", k)
		case n.closed:
			v.fail(path, "unexpected property %q; allowed properties are %s", k, allowedList(n.props))
		case n.additional != nil:
			v.check(n.additional, obj[k], child(path, k))
		}
	}
}

func (v *validator) checkArray(n *node, arr []any, path string) {
	if n.minItems >= 0 && len(arr) < n.minItems {
		v.fail(path, "must have at least %d items, got %d", n.minItems, len(arr))
	}
	if n.maxItems >= 0 && len(arr) > n.maxItems {
		v.fail(path, "must have at most %d items, got %d", n.maxItems, len(arr))
	}
	if n.items == nil {
		return
	}
	for i, item := range arr {
		if v.full() {
			return
		}
		v.check(n.items, item, path+"["+strconv.Itoa(i)+"]")
	}
}

func (v *validator) checkString(n *node, s, path string) {
	// JSON Schema counts characters (code points), not bytes.
	if n.minLen >= 0 || n.maxLen >= 0 {
		count := utf8.RuneCountInString(s)
		if n.minLen >= 0 && count < n.minLen {
			v.fail(path, "must be at least %d characters long, got %d", n.minLen, count)
		}
		if n.maxLen >= 0 && count > n.maxLen {
			v.fail(path, "must be at most %d characters long, got %d", n.maxLen, count)
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		v.fail(path, "must match the pattern %s, got %s", jsonText(n.pattern.String()), describeString(s))
	}
}

func (v *validator) checkNumber(n *node, num json.Number, path string) {
	if n.min == nil && n.max == nil && n.exMin == nil && n.exMax == nil {
		return
	}
	d, ok := parseDecimal(num)
	if !ok {
		v.fail(path, "%s is not a number", clip(num.String()))
		return
	}
	got := clip(num.String())
	if n.min != nil && d.cmp(n.min.d) < 0 {
		v.fail(path, "must be >= %s, got %s", n.min.raw, got)
	}
	if n.exMin != nil && d.cmp(n.exMin.d) <= 0 {
		v.fail(path, "must be > %s, got %s", n.exMin.raw, got)
	}
	if n.max != nil && d.cmp(n.max.d) > 0 {
		v.fail(path, "must be <= %s, got %s", n.max.raw, got)
	}
	if n.exMax != nil && d.cmp(n.exMax.d) >= 0 {
		v.fail(path, "must be < %s, got %s", n.exMax.raw, got)
	}
}

// --- JSON values ----------------------------------------------------------

func matchesAnyType(val any, types []string) bool {
	for _, t := range types {
		if matchesType(val, t) {
			return true
		}
	}
	return false
}

func matchesType(val any, t string) bool {
	switch x := val.(type) {
	case nil:
		return t == "null"
	case bool:
		return t == "boolean"
	case string:
		return t == "string"
	case []any:
		return t == "array"
	case map[string]any:
		return t == "object"
	case json.Number:
		if t == "number" {
			return true
		}
		if t == "integer" {
			d, ok := parseDecimal(x)
			return ok && d.isInteger()
		}
	}
	return false
}

// equalJSON compares decoded JSON values as JSON Schema does: numbers by
// value (1 equals 1.0), objects regardless of key order.
func equalJSON(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		dx, okx := parseDecimal(x)
		dy, oky := parseDecimal(y)
		return okx && oky && dx.cmp(dy) == 0
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equalJSON(xv, yv) {
				return false
			}
		}
		return true
	}
	return false
}

// --- messages -------------------------------------------------------------

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// child extends a path so it stays readable as an accessor expression:
// args.limit for plain names, args["content-type"] otherwise.
func child(path, key string) string {
	if identRE.MatchString(key) {
		return path + "." + key
	}
	return path + "[" + jsonText(key) + "]"
}

func typePhrase(types []string) string {
	words := make([]string, len(types))
	for i, t := range types {
		switch t {
		case "null":
			words[i] = "null"
		case "object", "array", "integer":
			words[i] = "an " + t
		default:
			words[i] = "a " + t
		}
	}
	return strings.Join(words, " or ")
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean " + strconv.FormatBool(x)
	case string:
		return "string " + describeString(x)
	case json.Number:
		return "number " + clip(x.String())
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

const clipRunes = 40

func describeString(s string) string {
	if utf8.RuneCountInString(s) > clipRunes {
		s = string([]rune(s)[:clipRunes]) + "..."
	}
	return jsonText(s)
}

func clip(s string) string {
	if len(s) > clipRunes {
		return s[:clipRunes] + "..."
	}
	return s
}

// jsonText renders a value as JSON without HTML escaping, so a pattern like
// "^<tag>$" reads as written.
func jsonText(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func enumList(values []any) string {
	const show = 20
	parts := make([]string, 0, min(len(values), show)+1)
	for i, e := range values {
		if i == show {
			parts = append(parts, fmt.Sprintf("... (%d more)", len(values)-show))
			break
		}
		parts = append(parts, clip(jsonText(e)))
	}
	return strings.Join(parts, ", ")
}

func allowedList(props map[string]*node) string {
	return strings.Join(quoteAll(sortedKeys(props)), ", ")
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = jsonText(n)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
