package hookhost_test

import (
	"context"
	"fmt"
	"log"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost"
	"github.com/hookhost/hookhost/config"
)

// A Go program embeds hookhost by opening a host from a config, running
// sessions on it and closing it. Its body is README.md's "Embedding
// hookhost in a Go program" (TestREADMEEmbeddingMatchesExample keeps the
// two the same); run from a clone, there is no hookhost.toml, so it runs
// on the defaults: the offline model and no plugins.
func ExampleOpen() {
	ctx := context.Background()
	cfg, err := config.LoadOrDefault("hookhost.toml") // no file: config.Default(), the offline model and no plugins
	if err != nil {
		log.Fatal(err) // the file's errors name its line and key
	}
	h, err := hookhost.Open(ctx, cfg, hookhost.Options{Logger: hclog.Default()})
	if err != nil {
		log.Fatal(err) // *hookhost.ConfigError: fix the config or the environment
	}
	defer h.Close(context.Background())
	for _, e := range h.StartErrors() {
		log.Print(e) // a plugin that did not start; the host runs without it
	}
	s, err := h.NewSession(hookhost.SessionOptions{})
	if err != nil {
		log.Fatal(err)
	}
	turn, err := s.Send(ctx, "what is 6*7")
	if err != nil {
		log.Fatal(err) // the provider failed, or the session was cancelled
	}
	fmt.Println(turn.Answer)
	// Output: From calculate: expression: 6*7; value: 42.
}
