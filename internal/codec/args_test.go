package codec_test

import (
	"encoding/json"
	"testing"

	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/rawjson"
)

// Args must encode exactly as a string field does, under both kinds of
// encoder, since the fronts once wrote arguments as plain strings.
func TestArgsEncodesAsAString(t *testing.T) {
	type withArgs struct {
		A codec.Args `json:"a"`
	}
	type withString struct {
		A string `json:"a"`
	}
	for _, s := range []string{`{"q":"<b>&amp;</b>"}`, "line\u2028sep", `{}`, "", `"quoted"`} {
		got, want := rawjson.MustMarshal(withArgs{codec.Args(s)}), rawjson.MustMarshal(withString{s})
		if string(got) != string(want) {
			t.Errorf("rawjson %q: got %s, want %s", s, got, want)
		}
		g2, _ := json.Marshal(withArgs{codec.Args(s)})
		w2, _ := json.Marshal(withString{s})
		if string(g2) != string(w2) {
			t.Errorf("json.Marshal %q: got %s, want %s", s, g2, w2)
		}
	}
}

func TestArgsDecodesStringObjectAndNull(t *testing.T) {
	for in, want := range map[string]string{`"{\"a\":1}"`: `{"a":1}`, `{"a":1}`: `{"a":1}`, `null`: ``} {
		var a codec.Args
		if err := json.Unmarshal([]byte(in), &a); err != nil || string(a) != want {
			t.Errorf("%s: got %q, %v; want %q", in, a, err, want)
		}
	}
}
