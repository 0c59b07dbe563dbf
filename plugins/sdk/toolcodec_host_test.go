package sdk_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/plugins/sdk"
	"github.com/hookhost/hookhost/plugins/sdk/plugintest"
)

type countTool struct{ sdk.Base }

func (countTool) Info() sdk.Info {
	return sdk.Info{Name: "rv", Version: "1", ToolFuncs: []sdk.Tool{
		sdk.NewTool("rv__count", "counts", func(_ context.Context, a intArg) (any, error) { return a.N, nil }),
	}}
}

// end to end, the host's schema check passes {"n":1e9223372036854775807}
// for an int field and the SDK's decoder panics: the model gets "plugin gave no
// result" (a plugin failure), not the argument error it could correct.
func TestHugeExponentThroughHost(t *testing.T) {
	for _, v := range []int{0, 1, 2} {
		t.Run(fmt.Sprintf("protocol%d", v), func(t *testing.T) {
			h := plugintest.New(t, countTool{}, plugintest.WithProtocol(v))
			out := h.ToolCall("rv__count", `{"n":1e9223372036854775807}`)
			if !strings.Contains(out.Result.Content, "args.n") {
				t.Errorf("want an argument error naming args.n, got %s (status %s, path %s)", out.Result.Content, out.Status, out.Path)
			}
		})
	}
}
