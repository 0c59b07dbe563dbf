// Command execjson is the process-per-hook baseline: it reads one tool call
// as JSON on stdin, writes one result as JSON on stdout and exits, the way
// shell-hook systems run a hook.
package main

import (
	"encoding/json"
	"fmt"
	"os"
)

type request struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type result struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error"`
}

func main() {
	var req request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fmt.Fprintln(os.Stderr, "execjson:", err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(result{Content: `{"ok":true}`}); err != nil {
		os.Exit(1)
	}
}
