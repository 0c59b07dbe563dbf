package responses

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/gateway/statestore"
	"github.com/hookhost/hookhost/internal/dialect"
)

func TestMintedIDs(t *testing.T) {
	for _, prefix := range []string{"resp_", "msg_", "fc_"} {
		id := mintID(prefix)
		if !strings.HasPrefix(id, prefix) || !Minted(id) {
			t.Fatalf("mintID(%q) = %q, which Minted does not recognise", prefix, id)
		}
		if mintID(prefix) == id {
			t.Fatal("two ids minted alike")
		}
		flipped := []byte(id)
		if flipped[len(prefix)] == 'a' {
			flipped[len(prefix)] = 'b'
		} else {
			flipped[len(prefix)] = 'a'
		}
		if Minted(string(flipped)) {
			t.Errorf("%s, one digit changed, still counts as hookhost's", flipped)
		}
	}
	swapped := "msg_" + strings.TrimPrefix(mintID("resp_"), "resp_")
	for _, id := range []string{
		swapped, "", "resp_", "msg_1", "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b",
		"rs_" + strings.Repeat("0", 48), "resp" + strings.Repeat("0", 48),
	} {
		if Minted(id) {
			t.Errorf("Minted(%q) = true, want false", id)
		}
	}
}

func newStates() *States {
	return &States{Store: statestore.NewMemory(statestore.Limits{Entries: 100, Bytes: 1 << 20}, nil), TTL: time.Hour}
}

// A body naming nothing hookhost stored reaches Decode byte for byte, on a
// Responses upstream and elsewhere.
func TestResolveLeavesPlainBodiesAlone(t *testing.T) {
	s := newStates()
	for _, body := range []string{
		`{"model":"m","input":"hi"}`,
		`{"model":"m",  "store":false, "input":[{"role":"user","content":"hi"},{"type":"message","role":"assistant","id":"msg_upstream","content":"x"}]}`,
		`{"model":"m","input":[{"type":"item_reference","id":"msg_upstream"}],"previous_response_id":"resp_upstream"}`,
		`not json`, `{"model":"m"}`, `{"model":"m","input":7}`,
	} {
		out, turn, err := s.Resolve(context.Background(), "", []byte(body), true)
		if err != nil || turn == nil || !bytes.Equal(out, []byte(body)) {
			t.Errorf("Resolve(%s) = %s, %v, %v; want the body as it came", body, out, turn, err)
		}
	}
}

// Items carrying an id hookhost minted go on without it; other ids stay.
func TestResolveStripsMintedIDs(t *testing.T) {
	s := newStates()
	mine := mintID("msg_")
	body := `{"model":"m","input":[{"role":"user","content":"hi"},` +
		`{"type":"message","role":"assistant","id":"` + mine + `","status":"completed","content":[{"type":"output_text","text":"hello"}]},` +
		`{"type":"message","role":"assistant","id":"msg_upstream","content":"x"}]}`
	out, _, err := s.Resolve(context.Background(), "", []byte(body), true)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte(mine)) || !bytes.Contains(out, []byte(`"msg_upstream"`)) || !bytes.Contains(out, []byte(`"text":"hello"`)) {
		t.Fatalf("Resolve = %s", out)
	}
	call, err := New().Decode(out)
	if err != nil || len(call.Request.Messages) != 2 || call.Request.Messages[1].Content != "hello\nx" {
		t.Fatalf("the stripped body decodes to %+v, %v", call, err)
	}
}

// failing is a Store whose backend cannot be reached.
type failing struct{}

func (failing) Put(context.Context, string, string, []byte, time.Duration) error {
	return errors.New("connection refused")
}
func (failing) Get(context.Context, string, string) ([]byte, bool, error) {
	return nil, false, errors.New("connection refused")
}
func (failing) Delete(context.Context, string, string) (bool, error) {
	return false, errors.New("connection refused")
}

// A store that fails is a 503 for what needs it, never a silent miss.
func TestResolveStoreFailure(t *testing.T) {
	s := &States{Store: failing{}, TTL: time.Hour}
	for _, body := range []string{
		`{"model":"m","input":"x","previous_response_id":"resp_1"}`,
		`{"model":"m","input":[{"type":"item_reference","id":"msg_1"}]}`,
	} {
		_, _, err := s.Resolve(context.Background(), "", []byte(body), false)
		var e *dialect.Error
		if !errors.As(err, &e) || e.Status != http.StatusServiceUnavailable {
			t.Errorf("Resolve(%s) error %v, want a 503", body, err)
		}
	}
	if _, e := s.Get(context.Background(), "", "resp_1"); e == nil || e.Status != http.StatusServiceUnavailable {
		t.Errorf("Get with a failing store: %v", e)
	}
	if _, e := s.Delete(context.Background(), "", "resp_1"); e == nil || e.Status != http.StatusServiceUnavailable {
		t.Errorf("Delete with a failing store: %v", e)
	}
}

// The response sent is stored as it is encoded, before the client can
// read it, with the whole resolved input; a failed response is not.
func TestEncodeStoresTheResponse(t *testing.T) {
	s := newStates()
	out, turn, err := s.Resolve(context.Background(), "t", []byte(`{"model":"m","input":"hi"}`), false)
	if err != nil {
		t.Fatal(err)
	}
	call, err := New().Decode(out)
	if err != nil {
		t.Fatal(err)
	}
	turn.Bind(call)
	body, err := New().Encode(call, &dialect.Result{Model: "m", Text: []string{"hello"}})
	if err != nil || turn.Err() != nil {
		t.Fatal(err, turn.Err())
	}
	var obj struct {
		ID    string          `json:"id"`
		Store json.RawMessage `json:"store"`
	}
	json.Unmarshal(body, &obj)
	got, e := s.Get(context.Background(), "t", obj.ID)
	if e != nil || !bytes.Equal(got, body) || string(obj.Store) != "true" {
		t.Fatalf("stored %s (%v), store %s; want the body sent", got, e, obj.Store)
	}
	rec, _, _ := s.get(context.Background(), "t", obj.ID)
	if len(rec.Input) != 1 || !strings.Contains(string(rec.Input[0]), `"content":"hi"`) {
		t.Fatalf("stored input %s", rec.Input)
	}
	if _, e := s.Get(context.Background(), "other", obj.ID); e == nil || e.Status != 404 {
		t.Fatal("another tenant finds the response")
	}
}

// Hostile bodies never panic Resolve; what it returns Decode can judge.
func FuzzResolve(f *testing.F) {
	s := newStates()
	stored := `{"model":"m","input":"hi"}`
	out, turn, _ := s.Resolve(context.Background(), "", []byte(stored), false)
	call, _ := New().Decode(out)
	turn.Bind(call)
	body, _ := New().Encode(call, &dialect.Result{Model: "m", Text: []string{"hello"}})
	var obj struct {
		ID     string `json:"id"`
		Output []struct {
			ID string `json:"id"`
		} `json:"output"`
	}
	json.Unmarshal(body, &obj)
	for _, seed := range []string{
		`{"model":"m","previous_response_id":"` + obj.ID + `","input":"more"}`,
		`{"model":"m","previous_response_id":"` + obj.ID + `"}`,
		`{"model":"m","input":[{"type":"item_reference","id":"` + obj.Output[0].ID + `"},"x",7,null]}`,
		`{"model":"m","input":[{"type":"item_reference","id":7}],"store":null}`,
		`{"previous_response_id":null,"input":null}`,
		`[]`, `null`, `{"input":{"a":1}}`,
	} {
		f.Add(seed, true)
	}
	f.Fuzz(func(t *testing.T, body string, own bool) {
		out, _, err := s.Resolve(context.Background(), "", []byte(body), own)
		if err == nil && out == nil {
			t.Fatal("no body and no error")
		}
		if err == nil {
			New().Decode(out)
		}
	})
}
