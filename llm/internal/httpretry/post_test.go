package httpretry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// seen is what a test server received, one entry a request.
type seen struct {
	mu      sync.Mutex
	methods []string
	accepts []string
	tests   []string
}

func (s *seen) record(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.methods = append(s.methods, r.Method)
	s.accepts = append(s.accepts, r.Header.Get("Accept"))
	s.tests = append(s.tests, r.Header.Get("X-Test"))
}

func TestPostSendsRawBodyAsGivenAndAsksForTheRightForm(t *testing.T) {
	for _, stream := range []bool{false, true} {
		s := &script{steps: []func(http.ResponseWriter, *http.Request){
			status(503, nil, `{"error":{"message":"busy"}}`),
			status(200, nil, `{}`),
		}}
		got := &seen{}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got.record(r)
			s.ServeHTTP(w, r)
		}))
		header := http.Header{"X-Test": {"1"}}
		body := []byte(`{ "b": "x<y" ,  "a":1 }`)
		resp, err := newClient(&recorder{}, 1).Post(context.Background(), srv.URL, header, body, stream)
		if err != nil {
			srv.Close()
			t.Fatalf("stream=%v: %v", stream, err)
		}
		resp.Body.Close()
		srv.Close()
		if s.count() != 2 || s.bodies[0] != string(body) || s.bodies[1] != string(body) {
			t.Errorf("stream=%v: bodies = %q, want %q twice, byte for byte", stream, s.bodies, body)
		}
		want := "application/json"
		if stream {
			want = "text/event-stream"
		}
		for i := range got.methods {
			if got.methods[i] != http.MethodPost || got.accepts[i] != want || got.tests[i] != "1" {
				t.Errorf("stream=%v: request %d was %s with Accept %q and X-Test %q, want POST, %q, 1", stream, i, got.methods[i], got.accepts[i], got.tests[i], want)
			}
		}
		if len(header) != 1 || header.Get("Accept") != "" {
			t.Errorf("stream=%v: the caller's header was changed to %v", stream, header)
		}
	}
}

func TestPostWithoutHeader(t *testing.T) {
	got := &seen{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.record(r)
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	resp, err := newClient(&recorder{}, 0).Post(context.Background(), srv.URL, nil, []byte(`{}`), false)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(got.accepts) != 1 || got.accepts[0] != "application/json" {
		t.Fatalf("Accept = %q, want application/json", got.accepts)
	}
}

func TestPostJSONEncodesWithoutHTMLEscaping(t *testing.T) {
	s := &script{steps: []func(http.ResponseWriter, *http.Request){status(200, nil, `{}`)}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	resp, err := newClient(&recorder{}, 0).PostJSON(context.Background(), srv.URL, nil, map[string]string{"p": "a<b&c"}, false)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if s.count() != 1 || s.bodies[0] != `{"p":"a<b&c"}` {
		t.Fatalf("bodies = %q, want one body {\"p\":\"a<b&c\"} without a trailing newline", s.bodies)
	}
}

func TestPostJSONRefusesWhatCannotBeEncoded(t *testing.T) {
	s := &script{}
	srv := httptest.NewServer(s)
	defer srv.Close()
	_, err := newClient(&recorder{}, 0).PostJSON(context.Background(), srv.URL, nil, func() {}, false)
	if err == nil {
		t.Fatal("PostJSON of a func succeeded, want an error")
	}
	if s.count() != 0 {
		t.Fatalf("%d requests were sent for a body that cannot be encoded", s.count())
	}
}
