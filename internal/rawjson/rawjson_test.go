package rawjson

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
)

func TestParseObjectKeepsOrderAndRawValues(t *testing.T) {
	in := []byte(`{"z": 1, "a":{"b" : [1, 2]},"m":"x<y"}`)
	o, ok := ParseObject(in)
	if !ok {
		t.Fatalf("ParseObject(%s) = not an object", in)
	}
	if got, want := o.Keys(), []string{"z", "a", "m"}; !slices.Equal(got, want) {
		t.Fatalf("keys = %q, want %q", got, want)
	}
	if got := string(o.Get("a")); got != `{"b" : [1, 2]}` {
		t.Fatalf(`Get("a") = %s, want the value byte for byte`, got)
	}
	if got, want := string(o.Bytes()), `{"z":1,"a":{"b" : [1, 2]},"m":"x<y"}`; got != want {
		t.Fatalf("Bytes = %s, want %s", got, want)
	}
}

func TestParseObjectRepeatedKeyKeepsFirstPlaceLastValue(t *testing.T) {
	o, ok := ParseObject([]byte(`{"a":1,"b":2,"a":3}`))
	if !ok {
		t.Fatal("not an object")
	}
	if got, want := string(o.Bytes()), `{"a":3,"b":2}`; got != want {
		t.Fatalf("Bytes = %s, want %s", got, want)
	}
}

func TestParseObjectRefusesWhatIsNotAnObject(t *testing.T) {
	for _, in := range []string{``, `null`, `[]`, `"s"`, `1`, `{"a":`, `{"a":1}x`, `{"a":1`} {
		o, ok := ParseObject([]byte(in))
		if ok {
			t.Errorf("ParseObject(%q) ok, want not an object", in)
		}
		if o == nil || len(o.Keys()) != 0 || string(o.Bytes()) != "{}" {
			t.Errorf("ParseObject(%q) = %v, want an empty object", in, o)
		}
	}
}

func TestObjectSetReplacesInPlaceAndAppendsNew(t *testing.T) {
	var o Object
	if o.Has("a") || o.Get("a") != nil {
		t.Fatal("zero Object has a key")
	}
	o.Set("a", json.RawMessage(`1`))
	o.Set("b", json.RawMessage(`2`))
	o.Set("a", json.RawMessage(`"new"`))
	if !o.Has("a") || !o.Has("b") || o.Has("c") {
		t.Fatalf("Has is wrong for %s", o.Bytes())
	}
	if got, want := string(o.Bytes()), `{"a":"new","b":2}`; got != want {
		t.Fatalf("Bytes = %s, want %s", got, want)
	}
	var empty Object
	if got := string(empty.Bytes()); got != "{}" {
		t.Fatalf("empty Bytes = %s, want {}", got)
	}
}

func TestObjectKeyIsEncodedWithoutHTMLEscaping(t *testing.T) {
	var o Object
	o.Set(`<k"&>`, json.RawMessage(`true`))
	got := o.Bytes()
	if want := `{"<k\"&>":true}`; string(got) != want {
		t.Fatalf("Bytes = %s, want %s", got, want)
	}
	if !json.Valid(got) {
		t.Fatalf("Bytes = %s is not valid JSON", got)
	}
}

func TestArray(t *testing.T) {
	if got := string(Array(nil)); got != "[]" {
		t.Fatalf("Array(nil) = %s, want []", got)
	}
	got := Array([]json.RawMessage{json.RawMessage(`{"a": 1}`), json.RawMessage(`2`)})
	if want := `[{"a": 1},2]`; string(got) != want {
		t.Fatalf("Array = %s, want %s", got, want)
	}
}

func TestMarshalDoesNotEscapeHTML(t *testing.T) {
	got, err := Marshal(map[string]string{"t": "a<b && c>d"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"t":"a<b && c>d"}`; string(got) != want {
		t.Fatalf("Marshal = %q, want %q", got, want)
	}
}

func TestMarshalReportsWhatCannotBeEncoded(t *testing.T) {
	if _, err := Marshal(math.NaN()); err == nil {
		t.Fatal("Marshal(NaN) succeeded, want an error")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("MustMarshal(NaN) did not panic")
		}
	}()
	MustMarshal(math.NaN())
}

func TestMembersAndElementsAreSubSlices(t *testing.T) {
	data := []byte(" {\"a\" : [1, {\"x\":\"]}\\\"\"} ,\"s\\u0041\", null,[] ] ,\"b\":-1.5e3,\"a\":true, \"\":{}}\n")
	m, ok := Members(data)
	if !ok || len(m) != 3 || string(m["a"]) != "true" || string(m["b"]) != "-1.5e3" || string(m[""]) != "{}" {
		t.Fatalf("Members = %q, %v", m, ok)
	}
	var want map[string]json.RawMessage
	json.Unmarshal(data, &want)
	for k, v := range want {
		if string(m[k]) != string(v) {
			t.Errorf("%q: %s, encoding/json has %s", k, m[k], v)
		}
	}
	arr := []byte(`[1, {"x":"]}\""} ,"s\u0041", null,[] ]`)
	e, ok := Elements(arr)
	if !ok || len(e) != 5 || string(e[1]) != `{"x":"]}\""}` || string(e[2]) != `"s\u0041"` || string(e[4]) != "[]" {
		t.Fatalf("Elements = %q, %v", e, ok)
	}
	if &e[0][0] != &arr[1] {
		t.Error("an element is a copy")
	}
	if e, ok := Elements([]byte("null")); !ok || e != nil {
		t.Errorf("Elements(null) = %q, %v", e, ok)
	}
	for _, bad := range []string{"", "{", "[1,]", "{}", `"x"`, "[1] x"} {
		if _, ok := Elements([]byte(bad)); ok {
			t.Errorf("Elements(%q) ok", bad)
		}
	}
	for _, bad := range []string{"", "[]", "null", `{"a":}`, "{} {}"} {
		if _, ok := Members([]byte(bad)); ok {
			t.Errorf("Members(%q) ok", bad)
		}
	}
}

func TestSetArrayWritesAsSetWould(t *testing.T) {
	items := []json.RawMessage{json.RawMessage(`{"a":1}`), json.RawMessage(`2`)}
	var a, b Object
	a.Set("x", json.RawMessage(`1`))
	a.Set("m", Array(items))
	a.Set("y", json.RawMessage(`"z"`))
	b.Set("x", json.RawMessage(`1`))
	b.SetArray("m", items)
	b.Set("y", json.RawMessage(`"z"`))
	if string(a.Bytes()) != string(b.Bytes()) || string(b.Get("m")) != `[{"a":1},2]` || !b.Has("m") {
		t.Fatalf("Set: %s\nSetArray: %s (Get %s)", a.Bytes(), b.Bytes(), b.Get("m"))
	}
	b.Set("m", json.RawMessage(`[]`))
	if string(b.Bytes()) != `{"x":1,"m":[],"y":"z"}` {
		t.Fatalf("Set after SetArray: %s", b.Bytes())
	}
}

// Keys read without encoding/json (no escape, valid UTF-8) and with it
// must come out as encoding/json reads them.
func TestKeysDecodeAsEncodingJSONDoes(t *testing.T) {
	for _, data := range []string{
		`{"plain":1,"esc\u0061ped":2,"tab\t":3,"new\nline":4}`,
		"{\"bad\xffutf8\":1,\"ok\":2}",
		`{"é":1,"\u00e9x":2}`,
		`{"a":1,"a":2,"b":{"a":3}}`,
	} {
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(data), &want); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		members, ok := Members([]byte(data))
		if !ok {
			t.Fatalf("Members(%s) refused it", data)
		}
		obj, ok := ParseObject([]byte(data))
		if !ok {
			t.Fatalf("ParseObject(%s) refused it", data)
		}
		if len(members) != len(want) || len(obj.Keys()) != len(want) {
			t.Errorf("%s: Members has %d keys, ParseObject %d, want %d", data, len(members), len(obj.Keys()), len(want))
		}
		for k, v := range want {
			if string(members[k]) != string(v) || string(obj.Get(k)) != string(v) {
				t.Errorf("%s: key %q is %s in Members and %s in ParseObject, want %s", data, k, members[k], obj.Get(k), v)
			}
		}
	}
}

func TestEachMemberKeepsOrderAndRepeatsAndStops(t *testing.T) {
	var got []string
	ok := EachMember([]byte(` {"b":1, "a" : [2,{"x":"}"}] ,"b":"\u0033","\u0063":null} `), func(k string, v json.RawMessage) bool {
		got = append(got, k+"="+string(v))
		return true
	})
	want := []string{`b=1`, `a=[2,{"x":"}"}]`, `b="\u0033"`, `c=null`}
	if !ok || !slices.Equal(got, want) {
		t.Errorf("EachMember = %v, %q; want true, %q", ok, got, want)
	}
	n := 0
	if EachMember([]byte(`{"a":1,"b":2}`), func(string, json.RawMessage) bool { n++; return false }) || n != 1 {
		t.Errorf("fn's false did not stop the walk at once: %d calls", n)
	}
	for _, bad := range []string{`[1]`, `{"a":}`, `"s"`, ``} {
		if EachMember([]byte(bad), func(string, json.RawMessage) bool { return true }) {
			t.Errorf("EachMember(%q) = true, want false", bad)
		}
	}
}

func TestIsObject(t *testing.T) {
	for in, want := range map[string]bool{
		`{}`:                    true,
		` {"a":[1,{"b":null}]}`: true,
		"\n\t{\"a\":1}\r\n":     true,
		`[]`:                    false,
		`"{}"`:                  false,
		`null`:                  false,
		``:                      false,
		`   `:                   false,
		`{`:                     false,
		`{"a":}`:                false,
		`{} {}`:                 false,
		`{}x`:                   false,
	} {
		if got := IsObject([]byte(in)); got != want {
			t.Errorf("IsObject(%q) = %v, want %v", in, got, want)
		}
	}
}
