// Package rawjson builds and splits JSON objects whose values stay raw
// bytes and whose keys keep their order, so that what a client or a
// provider wrote can be carried to the other side byte for byte while the
// host sets or adds only the fields it owns.
package rawjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Object is a JSON object written key by key, in order, with raw values.
// The zero value is an empty object ready to use.
type Object struct {
	keys []string
	vals map[string]json.RawMessage
	// arrays hold the values set with SetArray, written out only by Bytes.
	arrays map[string][]json.RawMessage
}

// IsObject reports whether data, leading white space aside, is one JSON
// object. It checks the bytes without decoding them: it runs on every
// tool schema of every request, and a decode would copy each schema.
func IsObject(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}

// ParseObject splits data, a JSON object, into its keys in the order they
// first appear and their raw values (a repeated key keeps its first place
// and its last value, as encoding/json reads it). When data is not a JSON
// object it returns an empty object and false.
func ParseObject(data []byte) (*Object, bool) {
	if !json.Valid(data) {
		return &Object{}, false
	}
	i := skipSpace(data, 0)
	if data[i] != '{' {
		return &Object{}, false
	}
	// One copy of the whole, which the values are slices of: the caller
	// may reuse data, and a copy per value would cost an allocation each.
	data = bytes.Clone(data)
	vals := map[string]json.RawMessage{}
	var keys []string
	for i = skipSpace(data, i+1); data[i] != '}'; {
		end := skipValue(data, i)
		key, ok := keyOf(data[i:end])
		if !ok {
			return &Object{}, false
		}
		i = skipSpace(data, end)
		i = skipSpace(data, i+1) // the colon
		end = skipValue(data, i)
		if _, seen := vals[key]; !seen {
			keys = append(keys, key)
		}
		vals[key] = data[i:end:end]
		i = skipSpace(data, end)
		if data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return &Object{keys: keys, vals: vals}, true
}

// Set gives key k the value v: in place when k is already there, last
// otherwise. v must be valid JSON; it is written as it is.
func (o *Object) Set(k string, v json.RawMessage) {
	if o.vals == nil {
		o.vals = map[string]json.RawMessage{}
	}
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
	delete(o.arrays, k)
}

// SetArray gives key k the array of items, as Set(k, Array(items)) would,
// but the items are joined only when Bytes writes the object: a request's
// messages, tens of megabytes, are then written once rather than twice.
// The items must not change until then.
func (o *Object) SetArray(k string, items []json.RawMessage) {
	o.Set(k, nil)
	if o.arrays == nil {
		o.arrays = map[string][]json.RawMessage{}
	}
	o.arrays[k] = items
}

// Has reports whether the object has key k.
func (o *Object) Has(k string) bool {
	_, ok := o.vals[k]
	return ok
}

// Get is the raw value of key k, nil when there is none.
func (o *Object) Get(k string) json.RawMessage {
	if items, ok := o.arrays[k]; ok {
		return Array(items)
	}
	return o.vals[k]
}

// Keys are the object's keys in order. The slice is the object's own: a
// caller that changes the object while ranging over it must copy it first.
func (o *Object) Keys() []string { return o.keys }

// Bytes is the object as JSON, its keys in order.
func (o *Object) Bytes() []byte {
	// Sized first: a request body can be tens of megabytes, and growing
	// a buffer to it by doubling allocates about twice that on the way.
	n := 2
	for _, k := range o.keys {
		n += len(k) + 4 + len(o.vals[k]) + arrayLen(o.arrays[k])
	}
	var b bytes.Buffer
	b.Grow(n + 16)
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(MustMarshal(k))
		b.WriteByte(':')
		if items, ok := o.arrays[k]; ok {
			writeArray(&b, items)
			continue
		}
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// Array is a JSON array of the given raw items, in order; "[]" when there
// are none.
func Array(items []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.Grow(arrayLen(items))
	writeArray(&b, items)
	return b.Bytes()
}

func arrayLen(items []json.RawMessage) int {
	n := 2 + len(items)
	for _, it := range items {
		n += len(it)
	}
	return n
}

func writeArray(b *bytes.Buffer, items []json.RawMessage) {
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteByte(']')
}

// Marshal encodes v as JSON without HTML escaping, so that "<", ">" and "&"
// reach the model or the client as they were written rather than as
// \u003c and the like, and without encoding/json's trailing newline.
func Marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// MustMarshal is Marshal for values the caller builds itself from types
// that always encode (strings, numbers, its own structs); it panics
// otherwise, since that is a defect in the caller, not bad input.
func MustMarshal(v any) json.RawMessage {
	b, err := Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("rawjson: cannot encode %T: %v", v, err))
	}
	return b
}

// Members returns the members of the JSON object data, each value a
// sub-slice of data rather than a copy: a request body of tens of
// megabytes is then held once, not once more in its parts. The last of
// repeated keys wins, as with encoding/json. ok is false when data is not
// valid JSON or not an object.
func Members(data []byte) (members map[string]json.RawMessage, ok bool) {
	members = map[string]json.RawMessage{}
	if !EachMember(data, func(key string, value json.RawMessage) bool {
		members[key] = value
		return true
	}) {
		return nil, false
	}
	return members, true
}

// EachMember calls fn with each member of the JSON object data, in the
// order they stand, repeated keys included, until fn returns false. The
// key is decoded as encoding/json decodes it; the value is a sub-slice of
// data. It reports false when data is not valid JSON or not an object,
// or fn stopped it.
func EachMember(data []byte, fn func(key string, value json.RawMessage) bool) bool {
	if !json.Valid(data) {
		return false
	}
	i := skipSpace(data, 0)
	if data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	for data[i] != '}' {
		end := skipValue(data, i)
		key, ok := keyOf(data[i:end])
		if !ok {
			return false
		}
		i = skipSpace(data, end)
		i = skipSpace(data, i+1) // the colon
		end = skipValue(data, i)
		if !fn(key, data[i:end:end]) {
			return false
		}
		i = skipSpace(data, end)
		if data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return true
}

// Elements returns the elements of the JSON array data, each a sub-slice
// of data rather than a copy (see Members); null is no elements. ok is
// false when data is not valid JSON or not an array or null.
func Elements(data []byte) (elems []json.RawMessage, ok bool) {
	if !json.Valid(data) {
		return nil, false
	}
	i := skipSpace(data, 0)
	if bytes.HasPrefix(data[i:], []byte("null")) {
		return nil, true
	}
	if data[i] != '[' {
		return nil, false
	}
	n := 0
	for j := skipSpace(data, i+1); data[j] != ']'; n++ {
		j = skipSpace(data, skipValue(data, j))
		if data[j] == ',' {
			j = skipSpace(data, j+1)
		}
	}
	elems = make([]json.RawMessage, 0, n)
	for i = skipSpace(data, i+1); data[i] != ']'; {
		end := skipValue(data, i)
		elems = append(elems, data[i:end:end])
		i = skipSpace(data, end)
		if data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return elems, true
}

// keyOf is the string a member's key (quoted, valid JSON) stands for. A
// key with no escape and valid UTF-8 is its bytes; any other is decoded
// as encoding/json decodes it (invalid UTF-8 becomes U+FFFD).
func keyOf(quoted []byte) (string, bool) {
	raw := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw), true
	}
	var key string
	if json.Unmarshal(quoted, &key) != nil {
		return "", false
	}
	return key, true
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns where the value starting at data[i] ends; data is
// valid JSON.
func skipValue(data []byte, i int) int {
	switch data[i] {
	case '"':
		for i++; ; i++ {
			switch data[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch data[i] {
			case '"':
				i = skipValue(data, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
	}
	for i < len(data) && !bytes.ContainsRune([]byte(",]} \t\r\n"), rune(data[i])) {
		i++
	}
	return i
}
