package handshake_test

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/hashicorp/go-plugin"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/wire"
	"github.com/hookhost/hookhost/plugins/handshake"
)

func versionsOf(sets map[int]plugin.PluginSet) []int {
	var vs []int
	for v := range sets {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	return vs
}

func TestVersionedPlugins(t *testing.T) {
	impl := &hooks.Funcs{Name: "p"}
	sets := handshake.VersionedPlugins(impl, nil)
	if got := versionsOf(sets); !reflect.DeepEqual(got, []int{1, 2}) {
		t.Fatalf("offered %v, want [1 2]", got)
	}
	for v, set := range sets {
		gp, ok := set[handshake.PluginKey].(*handshake.GRPCPlugin)
		if !ok || gp.Version != v || gp.Impl != impl {
			t.Fatalf("version %d: entry %#v", v, set[handshake.PluginKey])
		}
		raw, err := gp.GRPCClient(context.Background(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := raw.(wire.Conn); !ok || c.Version() != v {
			t.Fatalf("version %d: the host gets %T", v, raw)
		}
	}
	if handshake.ProtocolVersion != handshake.ProtocolV2 || handshake.Config.ProtocolVersion != handshake.ProtocolVersion {
		t.Fatal("ProtocolVersion is not the newest version")
	}
	// Plugins built for version 1 keep the same cookie.
	if handshake.Config.MagicCookieKey != "HOOKHOST_PLUGIN" || handshake.Config.MagicCookieValue != "d3c1b0a2-hookhost-plugin-v1" {
		t.Fatalf("the magic cookie changed: %+v", handshake.Config)
	}
	if err := (&handshake.GRPCPlugin{Version: 2}).GRPCServer(nil, nil); err == nil {
		t.Fatal("serving a nil Impl must fail")
	}
}

func TestVersionedPluginsFor(t *testing.T) {
	for _, c := range []struct {
		in   []int
		want []int
	}{
		{nil, []int{1, 2}},
		{[]int{0}, []int{1, 2}},
		{[]int{1}, []int{1}},
		{[]int{2}, []int{2}},
		{[]int{2, 7}, []int{2}},
	} {
		sets := handshake.VersionedPluginsFor(c.in...)
		if got := versionsOf(sets); !reflect.DeepEqual(got, c.want) {
			t.Errorf("VersionedPluginsFor(%v) offers %v, want %v", c.in, got, c.want)
		}
		for _, set := range sets {
			if gp := set[handshake.PluginKey].(*handshake.GRPCPlugin); gp.Impl != nil {
				t.Errorf("a host's plugin set carries an Impl")
			}
		}
	}
}
