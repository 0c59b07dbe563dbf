package hookhost_test

import (
	"context"
	"fmt"
	"log"

	"github.com/hookhost/hookhost"
	"github.com/hookhost/hookhost/config"
)

// A Go program embeds hookhost by opening a host from a config, running
// sessions on it and closing it. config.Load reads a hookhost.toml
// instead of the built-in defaults (the offline model, no plugins).
func ExampleOpen() {
	ctx := context.Background()
	cfg := config.Default()
	h, err := hookhost.Open(ctx, cfg, hookhost.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(ctx)
	for _, e := range h.StartErrors() {
		log.Print(e) // a plugin that did not start; the host runs without it
	}

	s, err := h.NewSession(hookhost.SessionOptions{})
	if err != nil {
		log.Fatal(err)
	}
	turn, err := s.Send(ctx, "what is 6*7")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(turn.Answer)
	// Output: From calculate: expression: 6*7; value: 42.
}
