package config

import (
	"errors"
	"strings"
	"testing"
)

const debugLine = `{"Protocol":"grpc","ProtocolVersion":2,"Pid":4242,"Test":true,"Addr":{"Network":"unix","String":"/tmp/plugin123"}}`

func TestPluginProtocolKey(t *testing.T) {
	c, err := Parse([]byte("[plugins.entries.one]\nprotocol = 1\n[plugins.entries.two]\nprotocol = 2\n[plugins.entries.any]\nprotocol = 0\n"), "t.toml", "")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"one": 1, "two": 2, "any": 0, "unset": 0} {
		if got := c.Entry(name).Protocol; got != want {
			t.Errorf("%s: protocol = %d, want %d", name, got, want)
		}
	}
	for _, src := range []string{
		"[plugins.entries.p]\nprotocol = 3\n",
		"[plugins.entries.p]\nprotocol = -1\n",
		"[plugins.entries.p]\nprotocol = \"2\"\n",
		"[plugins.entries.p]\nprotocol = 2.0\n",
	} {
		_, err := Parse([]byte(src), "t.toml", "")
		var ce *Error
		if !errors.As(err, &ce) || ce.Line != 2 || ce.Key != "plugins.entries.p.protocol" {
			t.Errorf("%q: got %v, want an error on line 2 naming the key", src, err)
			continue
		}
		if !strings.Contains(ce.Msg, "2") {
			t.Errorf("%q: message %q does not say what to write", src, ce.Msg)
		}
	}
}

func TestPluginReattachKey(t *testing.T) {
	for _, value := range []string{
		debugLine,                          // the inner config alone
		`{"dbg":` + debugLine + `}`,        // the line a debug-mode plugin prints
		` {"dbg": ` + debugLine + `}` + "", // spacing does not matter
	} {
		src := "[plugins.entries.dbg]\nreattach = '" + value + "'\n"
		c, err := Parse([]byte(src), "t.toml", "")
		if err != nil {
			t.Fatalf("%s: %v", value, err)
		}
		r := c.Entry("dbg").Reattach
		want := Reattach{Protocol: "grpc", ProtocolVersion: 2, Pid: 4242, Test: true, Network: "unix", Address: "/tmp/plugin123"}
		if r == nil || *r != want {
			t.Fatalf("%s: reattach = %+v, want %+v", value, r, want)
		}
	}
	c, err := Parse([]byte("[plugins.entries.p]\nreattach = ''\n"), "t.toml", "")
	if err != nil || c.Entry("p").Reattach != nil {
		t.Fatalf("an empty reattach: %v, %+v; want none", err, c.Entry("p").Reattach)
	}

	for value, says := range map[string]string{
		`not json`:                    "not a JSON object",
		`{"other":` + debugLine + `}`: `plugin "other", not of "p"`,
		strings.Replace(debugLine, `"grpc"`, `"netrpc"`, 1):                                                 `Protocol is "netrpc"`,
		strings.Replace(debugLine, `:2,`, `:7,`, 1):                                                         "ProtocolVersion is 7",
		strings.Replace(debugLine, `4242`, `0`, 1):                                                          "Pid is 0",
		`{"Protocol":"grpc","ProtocolVersion":1,"Pid":1}`:                                                   "Addr is missing",
		strings.Replace(debugLine, `"unix"`, `"udp"`, 1):                                                    `Network is "udp"`,
		strings.Replace(debugLine, `/tmp/plugin123`, `plugin123`, 1):                                        "absolute socket path",
		strings.Replace(debugLine, `"unix","String":"/tmp/plugin123"`, `"tcp","String":"10.1.2.3:1234"`, 1): "not a loopback address",
		strings.Replace(debugLine, `"unix","String":"/tmp/plugin123"`, `"tcp","String":"127.0.0.1"`, 1):     "not host:port",
		strings.Replace(debugLine, `"Pid"`, `"PID2"`, 1):                                                    "unknown field",
	} {
		src := "[plugins.entries.p]\npath = \"x\"\nreattach = '" + value + "'\n"
		_, err := Parse([]byte(src), "t.toml", "")
		var ce *Error
		if !errors.As(err, &ce) || ce.Line != 3 || ce.Key != "plugins.entries.p.reattach" {
			t.Errorf("%s: got %v, want an error on line 3 naming the key", value, err)
			continue
		}
		if !strings.Contains(ce.Msg, says) {
			t.Errorf("%s: message %q does not say %q", value, ce.Msg, says)
		}
	}
	// A loopback TCP address is as good as a socket.
	tcp := strings.Replace(debugLine, `"unix","String":"/tmp/plugin123"`, `"tcp","String":"127.0.0.1:4321"`, 1)
	if _, err := ParseReattach("p", tcp); err != nil {
		t.Errorf("loopback tcp: %v", err)
	}
}

func TestParseReattachPlugins(t *testing.T) {
	ok, bad, err := ParseReattachPlugins(`{"good":` + debugLine + `,"broken":{"Protocol":"grpc"}}`)
	if err != nil {
		t.Fatal(err)
	}
	if r, found := ok["good"]; !found || r.Pid != 4242 || len(ok) != 1 {
		t.Errorf("ok = %+v, want good alone", ok)
	}
	if e := bad["broken"]; e == nil || len(bad) != 1 || !strings.Contains(e.Error(), "ProtocolVersion") {
		t.Errorf("bad = %v, want broken alone, with what is wrong", bad)
	}
	for _, v := range []string{"", "null", "[1]", `{"a":`} {
		if _, _, err := ParseReattachPlugins(v); err == nil || !strings.Contains(err.Error(), "HOOKHOST_PLUGIN_DEBUG=1") {
			t.Errorf("%q: %v, want an error saying where the value comes from", v, err)
		}
	}
}
