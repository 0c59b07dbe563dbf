// Command kora is the Kora plugin for hookhost: five kora__* tools over an
// append-only ledger of inferences and tool calls, and a model router that
// escalates low-confidence answers from small models to a strong one. The
// host starts it; run by hand it only explains that. See README.md.
package main

import (
	"github.com/hookhost/hookhost/plugins/kora/internal/kora"
	"github.com/hookhost/hookhost/plugins/sdk"
)

func main() { sdk.Serve(kora.New()) }
