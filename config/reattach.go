package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"path/filepath"
	"slices"
	"strings"
)

// ReattachEnv is the environment variable that makes the host attach to
// plugins already running instead of launching them: a JSON object, plugin
// name → Reattach, as a plugin started with HOOKHOST_PLUGIN_DEBUG=1 prints
// it (the way Terraform's TF_REATTACH_PROVIDERS works). It applies on top of
// plugins.entries.<name>.reattach.
const ReattachEnv = "HOOKHOST_REATTACH_PLUGINS"

// Reattach says where a plugin started by hand (under a debugger, say)
// serves, in go-plugin's ReattachConfig terms. The host attaches to it
// instead of launching the entry's binary, and never restarts, stops or
// kills it.
type Reattach struct {
	Protocol        string // go-plugin's protocol; only "grpc" is accepted
	ProtocolVersion int    // the plugin protocol version it serves: 1 or 2
	Pid             int    // the plugin's process id, watched for its exit
	Test            bool   // go-plugin's test mode, which a debug-mode plugin serves in
	Network         string // "unix" or "tcp"
	Address         string // a socket path, or a loopback host:port
}

// reattachJSON is go-plugin's ReattachConfig as JSON, the way plugins print
// it and Terraform's TF_REATTACH_PROVIDERS spells it.
type reattachJSON struct {
	Protocol        string
	ProtocolVersion int
	Pid             int
	Test            bool
	Addr            *struct {
		Network string
		String  string
	}
}

// reattachFields are reattachJSON's keys, to tell a bare config from a
// one-plugin object keyed by name.
var reattachFields = []string{"protocol", "protocolversion", "pid", "test", "addr"}

// ParseReattachPlugins parses ReattachEnv's value: a JSON object mapping
// plugin names to reattach configs. An entry that is wrong is reported in
// bad, keyed by name, and left out of the result; err is set only when the
// value as a whole is not such an object. The errors say what is wrong and
// how it should look; the caller names the variable.
func ParseReattachPlugins(value string) (ok map[string]Reattach, bad map[string]error, err error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(value), &raw); err != nil || raw == nil {
		if err == nil {
			err = errors.New("null")
		}
		return nil, nil, fmt.Errorf("not a JSON object mapping plugin names to reattach configs (%v); copy the line a plugin started with HOOKHOST_PLUGIN_DEBUG=1 prints", err)
	}
	ok, bad = map[string]Reattach{}, map[string]error{}
	for name, v := range raw {
		r, err := parseReattach(v)
		if err != nil {
			bad[name] = err
			continue
		}
		ok[name] = r
	}
	return ok, bad, nil
}

// ParseReattach parses the reattach config of the plugin called name: the
// one-plugin object a debug-mode plugin prints ({"<name>": {...}}), or the
// inner config alone.
func ParseReattach(name, value string) (Reattach, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(value), &raw); err != nil || raw == nil {
		if err == nil {
			err = errors.New("null")
		}
		return Reattach{}, fmt.Errorf("not a JSON object (%v); paste the JSON a plugin started with HOOKHOST_PLUGIN_DEBUG=1 prints, between single quotes", err)
	}
	if len(raw) == 1 {
		for k, v := range raw {
			if !slices.Contains(reattachFields, strings.ToLower(k)) {
				if k != name {
					return Reattach{}, fmt.Errorf("holds the reattach config of plugin %q, not of %q (start the %s plugin in debug mode and paste its line)", k, name, name)
				}
				return parseReattach(v)
			}
		}
	}
	return parseReattach([]byte(value))
}

func parseReattach(data []byte) (Reattach, error) {
	var j reattachJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return Reattach{}, fmt.Errorf("not a reattach config (%v); it looks like {\"Protocol\":\"grpc\",\"ProtocolVersion\":2,\"Pid\":1234,\"Test\":true,\"Addr\":{\"Network\":\"unix\",\"String\":\"/tmp/plugin123\"}}", err)
	}
	r := Reattach{Protocol: j.Protocol, ProtocolVersion: j.ProtocolVersion, Pid: j.Pid, Test: j.Test}
	switch {
	case j.Protocol != "grpc":
		return r, fmt.Errorf("Protocol is %q; hookhost plugins speak \"grpc\"", j.Protocol)
	case j.ProtocolVersion != 1 && j.ProtocolVersion != 2:
		return r, fmt.Errorf("ProtocolVersion is %d; this host speaks plugin protocol 1 and 2", j.ProtocolVersion)
	case j.Pid <= 0 || j.Pid > math.MaxInt32:
		return r, fmt.Errorf("Pid is %d; it must be the plugin's process id", j.Pid)
	case j.Addr == nil || j.Addr.String == "":
		return r, errors.New("Addr is missing; it must be {\"Network\":\"unix\",\"String\":\"<socket path>\"} or {\"Network\":\"tcp\",\"String\":\"127.0.0.1:<port>\"}")
	}
	r.Network, r.Address = j.Addr.Network, j.Addr.String
	if err := checkReattachAddr(r.Network, r.Address); err != nil {
		return r, err
	}
	return r, nil
}

// checkReattachAddr accepts only addresses on this machine: the host would
// otherwise hand its hook traffic, without TLS, to whoever answers there.
func checkReattachAddr(network, addr string) error {
	switch network {
	case "unix":
		if !filepath.IsAbs(addr) {
			return fmt.Errorf("Addr.String %q is not an absolute socket path", addr)
		}
		return nil
	case "tcp":
		h, _, err := net.SplitHostPort(addr)
		if err != nil {
			return fmt.Errorf("Addr.String %q is not host:port (%v)", addr, err)
		}
		if ip := net.ParseIP(h); ip == nil || !ip.IsLoopback() {
			return fmt.Errorf("Addr.String %q is not a loopback address; only plugins on this machine can be attached (use 127.0.0.1 or ::1)", addr)
		}
		return nil
	}
	return fmt.Errorf("Addr.Network is %q; it must be \"unix\" or \"tcp\"", network)
}
