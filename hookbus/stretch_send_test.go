package hookbus_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
)

// refusing is a plugin whose Stretch fails at once with err.
type refusing struct {
	hooks.Plugin
	err error
}

func (r refusing) Stretch(context.Context, hookstretch.Request) (hookstretch.Stretch, error) {
	return nil, r.err
}

func (refusing) HonoursContext() bool { return true }

// A stretch that cannot be sent for any reason but ErrNoStretch is its first
// stage's failure, counted once, and that stage is not asked again by a
// plain call; ErrNoStretch alone means asking every hook plainly.
func TestAStretchThatFailsToSendIsItsFirstStagesFailure(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want outcome
	}{
		{errors.New("the plugin's process is not running"), outcome{
			Arguments: `{}`, ProvidedBy: "P",
			Content: `["P","provided_by:P",{"by":"P","args":{}}]`, TransformedBy: []string{"P"},
			Stats: []string{"P pre_tool_call calls=1 error=1", "P pre_tool_call_can_provide_result calls=1", "P transform_tool_result calls=1"},
		}},
		{hookstretch.ErrNoStretch, outcome{
			Arguments: `{"P":0}`, ModifiedBy: []string{"P"}, ProvidedBy: "P",
			Content: `["P","provided_by:P",{"by":"P","args":{"P":0}}]`, TransformedBy: []string{"P"},
			Stats: []string{"P pre_tool_call calls=1", "P pre_tool_call_can_provide_result calls=1", "P transform_tool_result calls=1"},
		}},
	} {
		b := newBus(t, hookbus.Member{Plugin: refusing{full("P"), tc.err}, Options: hookbus.Options{Timeout: preStageTimeout}})
		var got outcome
		within(t, func() { got = fire(context.Background(), b, true, call) })
		if !reflect.DeepEqual(got, tc.want) {
			t.Fatalf("Stretch failing with %v: outcome\n got %+v\nwant %+v", tc.err, got, tc.want)
		}
	}
}
