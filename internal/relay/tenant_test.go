package relay

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/llm"
)

// tenantEntry is testEntry kept for tenant.
func tenantEntry(tenant, id, content string) *entry {
	e := testEntry(id, content)
	e.tenant = tenant
	return e
}

// One tenant's traffic evicts its own rounds, never those of a tenant
// holding fewer: each has a bounded share of the store, by entries and by
// bytes.
func TestStoreGivesEachTenantItsShare(t *testing.T) {
	s := NewStore(time.Hour, 10)
	s.put(tenantEntry("quiet", "q1", "x"))
	s.put(tenantEntry("quiet", "q2", "x"))
	for i := 0; i < 100; i++ {
		s.put(tenantEntry("busy", fmt.Sprint("b", i), "x"))
	}
	for _, k := range []string{"q1", "q2"} {
		if _, _, ok := s.rounds(k); !ok {
			t.Errorf("the busy tenant's traffic evicted the quiet one's %s", k)
		}
	}
	if s.Len() != 10 {
		t.Errorf("Len = %d, want the store full", s.Len())
	}
	if _, _, ok := s.rounds("b99"); !ok {
		t.Error("the busy tenant's newest entry was evicted")
	}

	// By bytes: a tenant with large entries makes room from its own.
	s = NewStore(time.Hour, 1000)
	big := strings.Repeat("x", 3000)
	s.maxBytes = 4*tenantEntry("", "0", big).measure() + 100
	s.put(tenantEntry("quiet", "q", big))
	for i := 0; i < 20; i++ {
		if _, kept := s.put(tenantEntry("busy", fmt.Sprint(i), big)); !kept {
			t.Fatalf("entry %d not kept", i)
		}
		if s.bytes > s.maxBytes {
			t.Fatalf("store holds %d bytes, cap %d", s.bytes, s.maxBytes)
		}
	}
	if _, _, ok := s.rounds("q"); !ok {
		t.Error("the busy tenant's bytes evicted the quiet one's entry")
	}

	// The tenant holding the most gives way, even when it is not the one
	// putting: a newcomer to a full store takes from the largest.
	s = NewStore(time.Hour, 4)
	for i := 0; i < 3; i++ {
		s.put(tenantEntry("a", fmt.Sprint("a", i), "x"))
	}
	s.put(tenantEntry("b", "b0", "x"))
	s.put(tenantEntry("c", "c0", "x"))
	if _, _, ok := s.rounds("b0"); !ok {
		t.Error("the newcomer evicted a tenant holding one entry instead of the one holding three")
	}
	if _, _, ok := s.rounds("a0"); ok {
		t.Error("the largest tenant's oldest entry survived")
	}
}

// Through the relay: another tenant's conversations do not evict the
// hidden round a client is about to continue.
func TestOtherTenantsDoNotEvictHiddenRounds(t *testing.T) {
	bus := newBus(t, kora(`{"usd":1}`))
	store := NewStore(time.Hour, 2)
	up := &scripted{steps: []step{
		calls("", 1, 1, tc("k1", "kora__burn", `{}`)),
		calls("", 1, 1, tc("c1", "read_file", `{}`)),
		calls("", 1, 1, tc("c2", "read_file", `{}`)),
		calls("", 1, 1, tc("c3", "read_file", `{}`)),
		text("ok", 1, 1),
	}}
	r := New(Config{Provider: up, Bus: bus, Store: store})
	front := testFront{llm.ProtocolChat}
	as := func(tenant string, c *dialect.Call) *dialect.Call { c.Tenant = tenant; return c }
	first := runOK(t, r, front, as("quiet", userCall("one", readFile)), nil)
	runOK(t, r, front, as("busy", userCall("two", readFile)), nil)
	runOK(t, r, front, as("busy", userCall("three", readFile)), nil)
	next := as("quiet", userCall("one", readFile))
	next.Request.Messages = append(next.Request.Messages,
		hooks.Message{Role: hooks.RoleAssistant, ToolCalls: first.ToolCalls},
		hooks.Message{Role: hooks.RoleTool, ToolCallID: first.ToolCalls[0].ID, Content: "data"})
	runOK(t, r, front, next, nil)
	msgs := up.calls()[4].req.Messages
	hidden := false
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			hidden = hidden || c.Name == "kora__burn"
		}
	}
	if !hidden {
		t.Errorf("the quiet tenant's hidden round was evicted by the busy one's traffic: upstream saw %+v", msgs)
	}
}
