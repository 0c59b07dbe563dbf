package gateway

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// Two clients are told apart by the key they present, in either header
// style, and the tenant never contains the key itself.
func TestTenantIsADigestOfThePresentedKey(t *testing.T) {
	req := func(h, v string) string {
		r := httptest.NewRequest("POST", "/v1/messages", nil)
		if h != "" {
			r.Header.Set(h, v)
		}
		return tenant(r)
	}
	alice, bob := req("Authorization", "Bearer sk-alice"), req("Authorization", "Bearer sk-bob")
	if alice == "" || alice == bob {
		t.Fatalf("tenants of two keys: %q and %q", alice, bob)
	}
	if got := req("X-Api-Key", "sk-alice"); got != alice {
		t.Errorf("the same key in x-api-key is tenant %q, in Authorization %q", got, alice)
	}
	if got := req("", ""); got != "" {
		t.Errorf("no key: tenant %q, want none", got)
	}
	if strings.Contains(alice, "alice") {
		t.Errorf("tenant %q carries the key", alice)
	}
}
