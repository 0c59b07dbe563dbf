package responses

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzEachKey holds the scanner to encoding/json: for every JSON object it
// finds the same keys with the same values, in order, and for every array
// the same elements.
func FuzzEachKey(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, ` { "a" : 1 , "b":[1,{"c":"}"}],"d":"x\"y" } `, `{"\u0061b":null,"e":true,"f":-1.5e3}`,
		`[1, "a", {"b":[]}, [[]], null]`, `{"a":{"b":{"c":[1,2,{"d":"]"}]}}}`, `"s"`, `3`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(data, &obj) == nil && obj != nil {
			type pair struct{ k, v []byte }
			var got []pair
			seen := map[string]int{}
			eachKey(data, func(k, v []byte) {
				got = append(got, pair{k, v})
				seen[string(k)]++
			})
			if len(seen) != len(obj) {
				t.Fatalf("found keys %v in %s, want those of %v", seen, data, obj)
			}
			for _, p := range got {
				want, ok := obj[string(p.k)]
				if !ok {
					t.Fatalf("key %q is not in %s", p.k, data)
				}
				// encoding/json keeps a repeated key's last value.
				if seen[string(p.k)] == 1 && !bytes.Equal(p.v, bytes.TrimSpace(want)) {
					t.Fatalf("value of %q = %q, want %q", p.k, p.v, want)
				}
			}
		}
		var arr []json.RawMessage
		if json.Unmarshal(data, &arr) == nil && arr != nil {
			var got [][]byte
			eachElem(data, func(v []byte) { got = append(got, v) })
			if len(got) != len(arr) {
				t.Fatalf("found %d elements in %s, want %d", len(got), data, len(arr))
			}
			for i := range got {
				if !bytes.Equal(bytes.TrimSpace(got[i]), bytes.TrimSpace(arr[i])) {
					t.Fatalf("element %d = %q, want %q", i, got[i], arr[i])
				}
			}
		}
	})
}
