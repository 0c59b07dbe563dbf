// Command kora is the Kora plugin for hookhost: five kora__* tools over a
// ledger of inferences and tool calls, and a model router that escalates
// low-confidence answers from small models to a strong one. The host
// starts it without arguments; run by hand without arguments it only
// explains that, and `kora export` writes the ledger as JSONL. See
// README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/hookhost/hookhost/plugins/kora/internal/cli"
	"github.com/hookhost/hookhost/plugins/kora/internal/kora"
	"github.com/hookhost/hookhost/plugins/sdk"
)

func main() {
	if len(os.Args) > 1 {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	sdk.Serve(kora.New())
}
