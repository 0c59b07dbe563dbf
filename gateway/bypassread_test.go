package gateway

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// topLevelModelCases are bodies the bypass route reads the model of, each
// with what the token-by-token reading says about it.
var topLevelModelCases = []string{
	`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`,
	` { "messages" : [ {"model":"inner"} ] , "model" : "m" } `,
	`{"model":"a","model":"b"}`,
	`{"model":"a","MODEL":"b"}`,
	`{"Model":"x"}`,
	`{"mod\u0065l":"escaped"}`,
	`{"mod\u0065l":"a","model":"b"}`,
	`{"model":42}`,
	`{"model":null}`,
	`{"model":"a\"b\\c"}`,
	`{"a":"}{][\"","model":"m","b":[1,2,{"c":[true,false,null,-1.5e3]}]}`,
	`{}`,
	`{"messages":[]}`,
	`[1,2]`,
	`"model"`,
	`{"model":"a"} {}`,
	`{"model":"a"`,
	`{"model":"a",}`,
	`not json`,
	``,
	`{"x":1e}`,
	`{"modeL":1,"model":"m"}`,
}

// The one-pass reading must say what the token-by-token one says, on
// every body.
func TestTopLevelModelReadsAsTheDecoderDoes(t *testing.T) {
	for _, body := range topLevelModelCases {
		checkTopLevelModel(t, body)
	}
}

func FuzzTopLevelModel(f *testing.F) {
	for _, body := range topLevelModelCases {
		f.Add(body)
	}
	f.Fuzz(checkTopLevelModel)
}

func checkTopLevelModel(t *testing.T, body string) {
	t.Helper()
	model, e := topLevelModel([]byte(body))
	wantModel, want := topLevelModelSlow([]byte(body))
	switch {
	case (e == nil) != (want == nil):
		t.Errorf("%s: error %v, want %v", body, e, want)
	case e != nil && (e.Message != want.Message || e.Param != want.Param):
		t.Errorf("%s: error %q (param %q), want %q (param %q)", body, e.Message, e.Param, want.Message, want.Param)
	case model != wantModel:
		t.Errorf("%s: model %q, want %q", body, model, wantModel)
	}
}

// Headers are masked in every form Mask finds, the skip for values that
// cannot hold a key included.
func TestHideKeysMasksHeadersInEveryForm(t *testing.T) {
	key := "sk-secret-123"
	resp := &http.Response{Header: http.Header{
		"Date":      {"Fri, 27 Nov 2026 18:00:00 GMT"},
		"X-Echo":    {"Bearer " + key},
		"X-Escaped": {`\u0073k-secret-123`},
	}, Body: io.NopCloser(strings.NewReader(""))}
	hideKeys(resp, []string{key})
	if got := resp.Header.Get("Date"); got != "Fri, 27 Nov 2026 18:00:00 GMT" {
		t.Errorf("Date became %q", got)
	}
	for _, h := range []string{"X-Echo", "X-Escaped"} {
		if got := resp.Header.Get(h); strings.Contains(got, "secret") || strings.Contains(got, `\u0073k`) {
			t.Errorf("%s still holds the key: %q", h, got)
		}
	}
}
