package sdk

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A codec is what NewTool learns from one Go type, once: the JSON schema
// the model sees for it, and how to decode a value into it. Decoding
// follows the schema (the same names, the same required fields, the same
// bounds), so what the host's validation of that schema would reject never
// reaches run; decoding refuses more only where the Go type cannot hold a
// value the schema allows (a float32 beyond its range, a time that does not
// parse).
type codec struct {
	kind codecKind
	t    reflect.Type
	// elem is the element of a pointer, slice or map.
	elem *codec
	// fields are a struct's properties in declaration order.
	fields []*codecField
	// Constraints from struct tags (and an integer type's range), checked
	// when decoding too.
	enum     []string
	min, max *numBound
	// viaJSON: a kindText value decodes itself from its JSON string
	// (UnmarshalJSON) rather than from the text (UnmarshalText), as
	// encoding/json would do.
	viaJSON bool
}

type codecKind int

const (
	kindStruct codecKind = iota
	kindString
	kindInt
	kindUint
	kindFloat
	kindBool
	kindSlice
	kindMap
	kindPtr
	kindAny  // interface{}: any JSON value, decoded as encoding/json does
	kindJSON // a json.Unmarshaler such as json.RawMessage: any JSON value
	kindText // an encoding.TextUnmarshaler such as time.Time: a string
)

type codecField struct {
	name     string // the JSON property
	index    []int  // reflect.Value.FieldByIndex path, through embedded structs
	required bool
	desc     string
	def      json.RawMessage // the default tag as JSON; documentation only
	c        *codec
}

type numBound struct {
	text string // as written in the tag, valid JSON
	f    float64
	// implicit bounds are the Go type's range, which a tag may narrow.
	implicit bool
}

func implicitBound(v int64) *numBound {
	return &numBound{text: strconv.FormatInt(v, 10), f: float64(v), implicit: true}
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// typeError is an Args type NewTool cannot describe: the plugin author's
// bug, reported by a panic when the plugin starts.
type typeError struct {
	path string
	msg  string
}

func (e *typeError) Error() string { return e.path + ": " + e.msg }

// newArgsCodec builds the codec of a tool's argument type, which must be a
// struct or a pointer to one.
func newArgsCodec(t reflect.Type) (*codec, error) {
	st := t
	if st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	if st.Kind() != reflect.Struct {
		return nil, &typeError{"args", fmt.Sprintf("the argument type %v must be a struct (tool arguments are a JSON object)", t)}
	}
	if pt := reflect.PointerTo(st); pt.Implements(jsonUnmarshaler) || pt.Implements(textUnmarshaler) {
		return nil, &typeError{"args", fmt.Sprintf("the argument type %v decodes itself, so its schema cannot be derived from its fields", t)}
	}
	b := builder{visiting: map[reflect.Type]bool{}}
	return b.build(t, "args")
}

type builder struct {
	visiting map[reflect.Type]bool
}

func (b *builder) build(t reflect.Type, path string) (*codec, error) {
	c := &codec{t: t}
	// A type that decodes itself wins, as in encoding/json; one that reads
	// text is a string to the model.
	pt := reflect.PointerTo(t)
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface {
		switch {
		case pt.Implements(textUnmarshaler):
			c.kind, c.viaJSON = kindText, pt.Implements(jsonUnmarshaler)
			return c, nil
		case pt.Implements(jsonUnmarshaler):
			c.kind, c.viaJSON = kindJSON, true
			return c, nil
		}
	}
	switch t.Kind() {
	case reflect.String:
		c.kind = kindString
	case reflect.Bool:
		c.kind = kindBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		c.kind = kindInt
		if bits := t.Bits(); bits < 64 {
			// The schema states the range, so the host refuses what the
			// Go type cannot hold before the plugin is asked.
			c.min = implicitBound(-(int64(1) << (bits - 1)))
			c.max = implicitBound(int64(1)<<(bits-1) - 1)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		c.kind = kindUint
		c.min = implicitBound(0)
		if bits := t.Bits(); bits < 64 {
			c.max = implicitBound(int64(1)<<bits - 1)
		}
	case reflect.Float32, reflect.Float64:
		c.kind = kindFloat
	case reflect.Interface:
		if t.NumMethod() != 0 {
			return nil, &typeError{path, fmt.Sprintf("interface type %v is not supported; use any or json.RawMessage", t)}
		}
		c.kind = kindAny
	case reflect.Pointer:
		if t.Elem().Kind() == reflect.Pointer {
			return nil, &typeError{path, fmt.Sprintf("pointer to pointer %v is not supported", t)}
		}
		elem, err := b.build(t.Elem(), path)
		if err != nil {
			return nil, err
		}
		c.kind, c.elem = kindPtr, elem
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil, &typeError{path, fmt.Sprintf("%v is base64 text in JSON, which a model cannot be expected to write; use string", t)}
		}
		elem, err := b.build(t.Elem(), path+"[]")
		if err != nil {
			return nil, err
		}
		c.kind, c.elem = kindSlice, elem
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, &typeError{path, fmt.Sprintf("map key type %v is not supported; JSON object keys are strings, use map[string]...", t.Key())}
		}
		if t.Key().Implements(textUnmarshaler) || reflect.PointerTo(t.Key()).Implements(textUnmarshaler) {
			return nil, &typeError{path, fmt.Sprintf("map key type %v decodes itself, which is not supported; use string keys", t.Key())}
		}
		elem, err := b.build(t.Elem(), path+"[*]")
		if err != nil {
			return nil, err
		}
		c.kind, c.elem = kindMap, elem
	case reflect.Struct:
		if b.visiting[t] {
			return nil, &typeError{path, fmt.Sprintf("type %v contains itself, and a recursive schema is not supported", t)}
		}
		b.visiting[t] = true
		defer delete(b.visiting, t)
		c.kind = kindStruct
		if err := b.fields(c, t, nil, path); err != nil {
			return nil, err
		}
	default:
		return nil, &typeError{path, fmt.Sprintf("type %v has no JSON form a tool argument can take", t)}
	}
	return c, nil
}

// fields adds t's properties to c, promoting the fields of embedded structs
// the way encoding/json does.
func (b *builder) fields(c *codec, t reflect.Type, index []int, path string) error {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, hasTag := sf.Tag.Lookup("json")
		name, opts, _ := strings.Cut(tag, ",")
		if tag == "-" {
			continue
		}
		idx := append(slices.Clone(index), i)
		if sf.Anonymous && name == "" {
			ft := sf.Type
			if ft.Kind() == reflect.Struct {
				if b.visiting[ft] {
					return &typeError{path, fmt.Sprintf("type %v embeds itself", ft)}
				}
				b.visiting[ft] = true
				err := b.fields(c, ft, idx, path)
				delete(b.visiting, ft)
				if err != nil {
					return err
				}
				continue
			}
			if ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct {
				return &typeError{path, fmt.Sprintf("embedded pointer %v is not supported; embed the struct itself", ft)}
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		fpath := child(path, name)
		if hasTag && !validPropertyName(name) {
			return &typeError{fpath, fmt.Sprintf("json name %q is not a usable property name", name)}
		}
		optional := sf.Type.Kind() == reflect.Pointer
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "":
			case "omitempty", "omitzero":
				optional = true
			case "string":
				return &typeError{fpath, `the ",string" option is not supported; give the field the type the model should send`}
			default:
				return &typeError{fpath, fmt.Sprintf("unknown json tag option %q", o)}
			}
		}
		for _, f := range c.fields {
			if f.name == name {
				return &typeError{fpath, fmt.Sprintf("two fields are named %q", name)}
			}
		}
		fc, err := b.build(sf.Type, fpath)
		if err != nil {
			return err
		}
		f := &codecField{name: name, index: idx, required: !optional, desc: sf.Tag.Get("desc"), c: fc}
		if err := f.applyTags(sf.Tag, fpath); err != nil {
			return err
		}
		c.fields = append(c.fields, f)
	}
	return nil
}

func validPropertyName(name string) bool {
	return name != "" && utf8.ValidString(name) && !strings.ContainsAny(name, "\x00")
}

// applyTags reads the enum, minimum, maximum and default tags. Each applies
// to the field's value, or to its elements when it is a pointer or a slice
// of scalars (enum:"a,b" on a []string).
func (f *codecField) applyTags(tag reflect.StructTag, path string) error {
	target := f.c
	for target.kind == kindPtr || target.kind == kindSlice {
		target = target.elem
	}
	if e, ok := tag.Lookup("enum"); ok {
		if target.kind != kindString {
			return &typeError{path, "the enum tag applies to strings only"}
		}
		for v := range strings.SplitSeq(e, ",") {
			v = strings.TrimSpace(v)
			if v == "" {
				return &typeError{path, fmt.Sprintf("enum tag %q has an empty value", e)}
			}
			if slices.Contains(target.enum, v) {
				return &typeError{path, fmt.Sprintf("enum tag lists %q twice", v)}
			}
			target.enum = append(target.enum, v)
		}
	}
	for _, key := range []string{"minimum", "maximum"} {
		text, ok := tag.Lookup(key)
		if !ok {
			continue
		}
		if target.kind != kindInt && target.kind != kindUint && target.kind != kindFloat {
			return &typeError{path, fmt.Sprintf("the %s tag applies to numbers only", key)}
		}
		text = strings.TrimSpace(text)
		v, err := strconv.ParseFloat(text, 64)
		if err != nil || !json.Valid([]byte(text)) {
			return &typeError{path, fmt.Sprintf("%s tag %q is not a JSON number", key, text)}
		}
		b := &numBound{text: text, f: v}
		if key == "minimum" {
			if target.min != nil && v < target.min.f {
				return &typeError{path, fmt.Sprintf("minimum %s is below what %v can hold (%s)", text, target.t, target.min.text)}
			}
			target.min = b
		} else {
			if target.max != nil && v > target.max.f {
				return &typeError{path, fmt.Sprintf("maximum %s is above what %v can hold (%s)", text, target.t, target.max.text)}
			}
			target.max = b
		}
	}
	if target.min != nil && target.max != nil && target.min.f > target.max.f && !(target.min.implicit && target.max.implicit) {
		return &typeError{path, fmt.Sprintf("minimum %s is greater than maximum %s", target.min.text, target.max.text)}
	}
	if d, ok := tag.Lookup("default"); ok {
		if f.required {
			return &typeError{path, "a field with a default must be optional (a pointer, or omitempty): the SDK does not fill defaults in, it only tells the model"}
		}
		if v := f.c; v.kind == kindSlice || v.kind == kindPtr && v.elem.kind == kindSlice {
			return &typeError{path, "a default on a list is not supported"}
		}
		raw := json.RawMessage(d)
		if target.kind == kindString || target.kind == kindText {
			raw = encodeJSON(d)
		}
		// The default must be a value the field accepts, bounds included.
		probe := reflect.New(target.t).Elem()
		if errs := target.decodeJSON(probe, raw, path); len(errs) > 0 {
			return &typeError{path, fmt.Sprintf("default tag %q: %v", d, errs[0])}
		}
		f.def = raw
	}
	return nil
}

// --- schema ---------------------------------------------------------------

// schemaObject is a JSON object whose keys keep the order they were added
// in, so the schema reads in the order the author wrote the fields.
type schemaObject []schemaEntry

type schemaEntry struct {
	key   string
	value any
}

func (o schemaObject) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(encodeJSON(e.key))
		buf.WriteByte(':')
		v, err := marshalJSON(e.value)
		if err != nil {
			return nil, err
		}
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// schema returns the JSON schema of c, using only keywords the host's
// validator checks (and the description and default annotations).
func (c *codec) schema(desc string, def json.RawMessage) schemaObject {
	var s schemaObject
	add := func(k string, v any) { s = append(s, schemaEntry{k, v}) }
	switch c.kind {
	case kindPtr:
		return c.elem.schema(desc, def)
	case kindString, kindText:
		add("type", "string")
	case kindBool:
		add("type", "boolean")
	case kindInt, kindUint:
		add("type", "integer")
	case kindFloat:
		add("type", "number")
	case kindSlice:
		add("type", "array")
	case kindMap, kindStruct:
		add("type", "object")
	}
	if desc != "" {
		add("description", desc)
	}
	if c.enum != nil {
		add("enum", c.enum)
	}
	if c.min != nil {
		add("minimum", json.RawMessage(c.min.text))
	}
	if c.max != nil {
		add("maximum", json.RawMessage(c.max.text))
	}
	if def != nil {
		add("default", def)
	}
	switch c.kind {
	case kindSlice:
		add("items", c.elem.schema("", nil))
	case kindMap:
		add("additionalProperties", c.elem.schema("", nil))
	case kindStruct:
		props := schemaObject{}
		var required []string
		for _, f := range c.fields {
			props = append(props, schemaEntry{f.name, f.c.schema(f.desc, f.def)})
			if f.required {
				required = append(required, f.name)
			}
		}
		add("properties", props)
		if required != nil {
			add("required", required)
		}
		add("additionalProperties", false)
	}
	return s
}

// --- decoding -------------------------------------------------------------

// maxArgErrors bounds how many problems one decoding reports, like the
// host's validation.
const maxArgErrors = 20

// argError is one way the arguments do not fit the tool: Path names the
// value, rooted at "args" (args.items[2].name), as the host's schema
// validation does.
type argError struct {
	Path    string
	Message string
}

func (e *argError) Error() string { return e.Path + ": " + e.Message }

// decodeArgs decodes raw strictly into v, a settable value of c's type.
// Empty arguments or null are taken as {}: models send both for a tool
// without parameters.
func (c *codec) decodeArgs(v reflect.Value, raw json.RawMessage) []*argError {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		trimmed = []byte("{}")
	}
	return c.decodeJSON(v, trimmed, "args")
}

func (c *codec) decodeJSON(v reflect.Value, raw []byte, path string) []*argError {
	val, err := decodeOne(raw)
	if err != nil {
		return []*argError{{path, "not valid JSON: " + err.Error()}}
	}
	d := decoder{}
	d.decode(c, v, val, path)
	return d.errs
}

// decodeOne decodes exactly one JSON value, keeping numbers as their text.
func decodeOne(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

type decoder struct {
	errs []*argError
}

func (d *decoder) fail(path, format string, a ...any) {
	if len(d.errs) < maxArgErrors {
		d.errs = append(d.errs, &argError{path, fmt.Sprintf(format, a...)})
	}
}

func (d *decoder) full() bool { return len(d.errs) >= maxArgErrors }

func (d *decoder) decode(c *codec, v reflect.Value, val any, path string) {
	if d.full() {
		return
	}
	switch c.kind {
	case kindPtr:
		// null is refused like the schema refuses it: an optional field is
		// left out, not sent as null.
		p := reflect.New(c.elem.t)
		d.decode(c.elem, p.Elem(), val, path)
		v.Set(p)
	case kindAny:
		x, err := plainJSON(val)
		if err != nil {
			d.fail(path, "%v", err)
			return
		}
		if x == nil {
			v.SetZero()
			return
		}
		v.Set(reflect.ValueOf(x))
	case kindJSON:
		d.unmarshalJSON(v, val, path)
	case kindText:
		s, ok := val.(string)
		if !ok {
			d.fail(path, "must be a string, got %s", describe(val))
			return
		}
		if c.viaJSON {
			d.unmarshalJSON(v, val, path)
			return
		}
		if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			d.fail(path, "%v", err)
		}
	case kindString:
		s, ok := val.(string)
		if !ok {
			d.fail(path, "must be a string, got %s", describe(val))
			return
		}
		if c.enum != nil && !slices.Contains(c.enum, s) {
			d.fail(path, "must be one of %s, got %s", quoteList(c.enum), describe(val))
			return
		}
		v.SetString(s)
	case kindBool:
		b, ok := val.(bool)
		if !ok {
			d.fail(path, "must be a boolean, got %s", describe(val))
			return
		}
		v.SetBool(b)
	case kindInt, kindUint, kindFloat:
		d.number(c, v, val, path)
	case kindSlice:
		arr, ok := val.([]any)
		if !ok {
			d.fail(path, "must be an array, got %s", describe(val))
			return
		}
		s := reflect.MakeSlice(c.t, len(arr), len(arr))
		for i, item := range arr {
			d.decode(c.elem, s.Index(i), item, path+"["+strconv.Itoa(i)+"]")
		}
		v.Set(s)
	case kindMap:
		obj, ok := val.(map[string]any)
		if !ok {
			d.fail(path, "must be an object, got %s", describe(val))
			return
		}
		m := reflect.MakeMapWithSize(c.t, len(obj))
		for _, k := range sortedKeys(obj) {
			e := reflect.New(c.elem.t).Elem()
			d.decode(c.elem, e, obj[k], child(path, k))
			m.SetMapIndex(reflect.ValueOf(k).Convert(c.t.Key()), e)
		}
		v.Set(m)
	case kindStruct:
		obj, ok := val.(map[string]any)
		if !ok {
			d.fail(path, "must be an object, got %s", describe(val))
			return
		}
		for _, f := range c.fields {
			if _, ok := obj[f.name]; !ok && f.required {
				d.fail(path, "missing required property %q", f.name)
			}
		}
		for _, k := range sortedKeys(obj) {
			i := slices.IndexFunc(c.fields, func(f *codecField) bool { return f.name == k })
			if i < 0 {
				if len(c.fields) == 0 {
					d.fail(path, "unexpected property %q; this tool takes no arguments, send {}", k)
				} else {
					d.fail(path, "unexpected property %q; allowed properties are %s", k, quoteList(c.propertyNames()))
				}
				continue
			}
			f := c.fields[i]
			d.decode(f.c, v.FieldByIndex(f.index), obj[k], child(path, k))
		}
	}
}

func (c *codec) propertyNames() []string {
	names := make([]string, len(c.fields))
	for i, f := range c.fields {
		names[i] = f.name
	}
	return names
}

func (d *decoder) unmarshalJSON(v reflect.Value, val any, path string) {
	raw, err := marshalJSON(val)
	if err != nil {
		d.fail(path, "%v", err)
		return
	}
	if err := v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
		d.fail(path, "%v", strings.TrimPrefix(err.Error(), "json: "))
	}
}

// number decodes an integer or a float, accepting what JSON Schema accepts
// as an integer (20.0 and 2e1 are 20) and refusing what does not fit the Go
// type instead of wrapping or rounding it silently.
func (d *decoder) number(c *codec, v reflect.Value, val any, path string) {
	num, ok := val.(json.Number)
	want := map[codecKind]string{kindInt: "an integer", kindUint: "an integer", kindFloat: "a number"}[c.kind]
	if !ok {
		d.fail(path, "must be %s, got %s", want, describe(val))
		return
	}
	lit := num.String()
	var f float64
	switch c.kind {
	case kindFloat:
		x, err := strconv.ParseFloat(lit, c.t.Bits())
		if err != nil {
			d.fail(path, "%s is out of range", clip(lit))
			return
		}
		v.SetFloat(x)
		// Bounds are checked on the value as written, as the host's
		// validator checks them, not on its float32 rounding.
		f, _ = strconv.ParseFloat(lit, 64)
	case kindInt, kindUint:
		digits, neg, ok := integerDigits(lit)
		if !ok {
			d.fail(path, "must be %s, got number %s", want, clip(lit))
			return
		}
		if c.kind == kindUint {
			if neg && digits != "0" {
				d.fail(path, "must be >= 0, got %s", clip(lit))
				return
			}
			x, err := strconv.ParseUint(digits, 10, c.t.Bits())
			if err != nil {
				d.fail(path, "%s is out of range for a %d-bit unsigned integer", clip(lit), c.t.Bits())
				return
			}
			v.SetUint(x)
			f = float64(x)
		} else {
			if neg {
				digits = "-" + digits
			}
			x, err := strconv.ParseInt(digits, 10, c.t.Bits())
			if err != nil {
				d.fail(path, "%s is out of range for a %d-bit integer", clip(lit), c.t.Bits())
				return
			}
			v.SetInt(x)
			f = float64(x)
		}
	}
	if c.min != nil && f < c.min.f {
		d.fail(path, "must be >= %s, got %s", c.min.text, clip(lit))
	}
	if c.max != nil && f > c.max.f {
		d.fail(path, "must be <= %s, got %s", c.max.text, clip(lit))
	}
}

// integerDigits returns the decimal digits of a JSON number literal that is
// an integer (1e3 and 20.0 are), without leading zeros, and its sign. It
// never builds more than 21 digits, so a hostile exponent costs nothing.
func integerDigits(lit string) (digits string, neg bool, ok bool) {
	s := lit
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	mant, expText, hasExp := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits = intPart + frac
	exp := -len(frac)
	if hasExp {
		e, err := strconv.Atoi(expText)
		// An exponent this large cannot be added to the mantissa's without
		// overflowing; it decides the outcome on its own.
		if err != nil || e > 1<<20 || e < -(1<<20) {
			// Beyond int range: a huge positive exponent makes a number out
			// of any range, a huge negative one a fraction, unless the
			// mantissa is zero.
			if strings.Trim(digits, "0") == "" {
				return "0", neg, true
			}
			if strings.HasPrefix(expText, "-") {
				return "", false, false
			}
			return strings.Repeat("9", 21), neg, true
		}
		exp += e
	}
	digits = strings.TrimLeft(digits, "0")
	for exp < 0 && strings.HasSuffix(digits, "0") {
		digits, exp = digits[:len(digits)-1], exp+1
	}
	if digits == "" {
		return "0", neg, true
	}
	if exp < 0 {
		return "", false, false
	}
	if len(digits)+exp > 21 {
		return strings.Repeat("9", 21), neg, true
	}
	return digits + strings.Repeat("0", exp), neg, true
}

// plainJSON turns a decoded value with json.Number into what encoding/json
// gives an interface{}: float64 numbers.
func plainJSON(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(x.String(), 64)
		if err != nil {
			return nil, fmt.Errorf("%s is out of range", clip(x.String()))
		}
		return f, nil
	case []any:
		for i := range x {
			e, err := plainJSON(x[i])
			if err != nil {
				return nil, err
			}
			x[i] = e
		}
	case map[string]any:
		for k := range x {
			e, err := plainJSON(x[k])
			if err != nil {
				return nil, err
			}
			x[k] = e
		}
	}
	return v, nil
}

// --- messages -------------------------------------------------------------

// child extends a path the way the host's validation does: args.limit for
// plain names, args["content-type"] otherwise.
func child(path, key string) string {
	plain := key != ""
	for i, r := range key {
		if !(r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || i > 0 && '0' <= r && r <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return path + "." + key
	}
	return path + "[" + string(encodeJSON(key)) + "]"
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean " + strconv.FormatBool(x)
	case string:
		if utf8.RuneCountInString(x) > 40 {
			x = string([]rune(x)[:40]) + "..."
		}
		return "string " + string(encodeJSON(x))
	case json.Number:
		return "number " + clip(x.String())
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = string(encodeJSON(n))
	}
	return strings.Join(q, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// marshalJSON is json.Marshal without HTML escaping: a model reads the
// output, and "<" reads better than "\u003c".
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// encodeJSON encodes a value that always encodes, such as a string.
func encodeJSON(v any) []byte {
	b, err := marshalJSON(v)
	if err != nil {
		panic("sdk: " + err.Error())
	}
	return b
}
