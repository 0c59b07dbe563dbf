package hooks

import (
	"reflect"
	"testing"
)

// CatalogueFacts states what the Name methods and Funcs answer, hook by
// hook, with no hook twice.
func TestCatalogueFacts(t *testing.T) {
	facts := CatalogueFacts()
	if len(facts) != len(Catalogue) {
		t.Fatalf("%d facts for %d hooks", len(facts), len(Catalogue))
	}
	seen := map[Name]bool{}
	for i, f := range facts {
		if f.Name != Catalogue[i] {
			t.Errorf("facts[%d] is %s, Catalogue[%d] is %s", i, f.Name, i, Catalogue[i])
		}
		if seen[f.Name] {
			t.Errorf("%s is in the catalogue twice", f.Name)
		}
		seen[f.Name] = true
		if f.Observer != f.Name.Observer() || f.ToolScoped != f.Name.ToolScoped() || !f.Name.Known() {
			t.Errorf("%s: facts %+v disagree with its Name methods", f.Name, f)
		}
		if f.StretchStage > 0 && (!f.ToolScoped || f.Observer) {
			t.Errorf("%s: a stretch stage must be a tool hook that answers", f.Name)
		}
		if f.Fires == "" || f.Returns == "" || f.Combine == "" {
			t.Errorf("%s: a fires, returns or combine text is missing", f.Name)
		}
	}
	// Every hook has its own Funcs field: setting them all lists every hook.
	all := &Funcs{}
	v := reflect.ValueOf(all).Elem()
	for i := 0; i < v.NumField(); i++ {
		if fv := v.Field(i); fv.Kind() == reflect.Func {
			fv.Set(reflect.MakeFunc(fv.Type(), func([]reflect.Value) []reflect.Value { return nil }))
		}
	}
	if got := all.Manifest().Hooks; !reflect.DeepEqual(got, Catalogue) {
		t.Errorf("a Funcs with every function set serves %v, want %v", got, Catalogue)
	}
}
