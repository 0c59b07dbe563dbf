package openai_test

import (
	"testing"

	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/llm/openai"
)

const testKey = "sk-test-4f3a9b2c1d"

var (
	jsonReply  = fakeapi.JSON
	sseReply   = fakeapi.SSE
	data       = fakeapi.Data
	named      = fakeapi.Named
	assertJSON = fakeapi.AssertJSON
	quote      = fakeapi.Quote
	itoa       = fakeapi.Itoa
)

func newFake(t *testing.T, replies ...fakeapi.Reply) *fakeapi.Server {
	return fakeapi.New(t, replies...)
}

// newProvider points a provider at f unless cfg names another base URL,
// and never waits between retries.
func newProvider(t *testing.T, f *fakeapi.Server, cfg openai.Config) *openai.Provider {
	t.Helper()
	if cfg.BaseURL == "" {
		cfg.BaseURL = f.URL() + "/v1"
	}
	if cfg.Sleep == nil {
		cfg.Sleep = (&fakeapi.Sleeper{}).Sleep
	}
	p, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
