package wire

import (
	"testing"

	"github.com/hookhost/hookhost/hooks"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
)

// The wire carries exactly the catalogue: a row per hook, no other row,
// and a row answers nothing exactly when its hook observes.
func TestCatalogueWireRows(t *testing.T) {
	if len(table) != len(hooks.Catalogue) {
		t.Errorf("the wire table has %d rows, the catalogue %d hooks", len(table), len(hooks.Catalogue))
	}
	for _, h := range hooks.Catalogue {
		r, ok := rowOf(h)
		if !ok {
			t.Errorf("%s has no row in internal/wire/table.go (see \"Adding a hook\" in hooks/doc.go)", h)
			continue
		}
		_, empty := r.newResponse().(*pluginv1.Empty)
		if empty != h.Observer() {
			t.Errorf("%s: the wire answers Empty: %v, the catalogue says observer: %v", h, empty, h.Observer())
		}
	}
	for _, r := range table {
		if !r.name.Known() {
			t.Errorf("the wire table has a row for %s, which the catalogue lacks", r.name)
		}
	}
}
