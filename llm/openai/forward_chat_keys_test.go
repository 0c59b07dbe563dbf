package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm/openai"
)

// topKeys lists a JSON object's top-level keys as written, repeats kept.
func topKeys(t *testing.T, body []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("body is not a JSON object: %s", body)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("body is not a JSON object: %v\n%s", err, body)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatalf("body is not a JSON object: %v\n%s", err, body)
		}
	}
	return keys
}

// A server may keep the first of two equal keys or the last, or refuse
// the body: the forwarded body must name each field once.
func TestForwardChatNamesEveryFieldOnce(t *testing.T) {
	f := newFake(t, jsonReply(200, chatText))
	p := newProvider(t, f, openai.Config{APIKey: testKey})
	pass := &upstream.Passthrough{Fields: map[string]json.RawMessage{
		"seed":     json.RawMessage(`42`),
		"messages": json.RawMessage(`[]`),
		"model":    json.RawMessage(`"other-model"`),
	}}
	if _, _, err := p.Forward(context.Background(), userReq("weather?"), pass, nil); err != nil {
		t.Fatal(err)
	}
	keys := topKeys(t, f.Requests()[0].Body)
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			t.Errorf("key %q is sent twice in %q", k, keys)
		}
		seen[k] = true
	}
	for _, k := range []string{"model", "messages", "seed"} {
		if !seen[k] {
			t.Errorf("key %q is missing from %q", k, keys)
		}
	}
}
