package clienttest

import (
	"fmt"
	"testing"
)

// TestProvidedResponse: a plugin (lookup) answers the model call itself on
// every endpoint, whole and streamed through each SDK's accumulating
// helper: the client gets one well-formed message in its protocol, with
// the plugin's text or its call for the client, and the upstream is never
// called.
func TestProvidedResponse(t *testing.T) {
	needClients(t)
	t.Parallel()
	for _, proto := range []string{chat, responses, messages} {
		s := newSuite(t, proto)
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/text/stream=%v", proto, stream), func(t *testing.T) {
				s.up.script() // any request upstream fails: none is expected
				o := runClient(t, s.gw.URL, proto, stream, request(proto, models[proto], []any{user("PROVIDE: no model needed")}, nil, stream))
				v := check(t, proto, stream, o)
				if want := "Provided by lookup: no model needed"; v.Text != want || len(v.Calls) != 0 || v.Stop != finalStop(proto) || v.In != 2 || v.Out != 7 {
					t.Errorf("the client got %+v, want the plugin's text %q, stop %q and its usage 2/7", v, want, finalStop(proto))
				}
				if n := len(s.up.requests()); n != 0 {
					t.Errorf("the upstream got %d requests, want none", n)
				}
			})
			t.Run(fmt.Sprintf("%s/client call/stream=%v", proto, stream), func(t *testing.T) {
				s.up.script()
				o := runClient(t, s.gw.URL, proto, stream, request(proto, models[proto], []any{user("PROVIDE CALL")}, []tool{getTime}, stream))
				v := check(t, proto, stream, o)
				want := []call{{ID: "call_provided_1", Name: getTime.Name, Args: `{"zone":"CET"}`}}
				if v.Text != "" || !sameCalls(v.Calls, want) || v.Stop != toolStop(proto) {
					t.Errorf("the client got %+v, want the plugin's call %+v for it", v, want)
				}
				if n := len(s.up.requests()); n != 0 {
					t.Errorf("the upstream got %d requests, want none", n)
				}
			})
		}
		t.Run(proto+"/no opinion", func(t *testing.T) {
			s.up.script(round{Text: "The model answers.", In: 4, Out: 3})
			o := runClient(t, s.gw.URL, proto, true, request(proto, models[proto], []any{user("hi")}, nil, true))
			if v := check(t, proto, true, o); v.Text != "The model answers." {
				t.Errorf("the client got %+v, want the model's answer", v)
			}
			if n := len(s.up.requests()); n != 1 {
				t.Errorf("the upstream got %d requests, want 1", n)
			}
		})
	}
}
