package httpretry

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hookhost/hookhost/llm"
)

// A redirect is never followed, whether the client is the default one or
// the caller's own: following it would send the conversation and the key
// to wherever the server points. It is an error that says what happened.
func TestRedirectsAreNeverFollowed(t *testing.T) {
	for _, code := range []int{301, 302, 303, 307, 308} {
		for _, own := range []bool{false, true} {
			var elsewhere atomic.Int32
			other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				elsewhere.Add(1)
				w.Write([]byte(`{}`))
			}))
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.URL+"/steal", code)
			}))
			c := newClient(&recorder{}, 2)
			c.Secrets = []string{"sk-secret-key"}
			if own {
				c.HTTP = &http.Client{}
			}
			_, err := c.Do(context.Background(), Request{Method: "POST", URL: srv.URL, Body: []byte(`{"n":1}`),
				Header: http.Header{"Authorization": {"Bearer sk-secret-key"}}})
			srv.Close()
			other.Close()
			if n := elsewhere.Load(); n != 0 {
				t.Errorf("HTTP %d, own client %v: the redirect was followed %d times", code, own, n)
			}
			var pe *llm.ProviderError
			if !errors.As(err, &pe) || pe.StatusCode != code || !strings.Contains(pe.Message, "redirect") || !strings.Contains(pe.Message, "not followed") {
				t.Errorf("HTTP %d, own client %v: error %v, want a ProviderError saying the redirect was not followed", code, own, err)
			}
		}
	}
}
