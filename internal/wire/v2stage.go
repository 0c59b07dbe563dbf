package wire

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
	pluginv2 "github.com/hookhost/hookhost/plugins/proto/v2"
)

// ModelStage asks the plugin for its hooks of one model-side stage in one
// exchange (see hookstretch.ModelStager): one HookCall with a stage per
// hook, each carrying its own timeout, and the model call serialized once
// as a ModelStage payload, answered stage by stage. A plugin whose
// manifest does not set model_stages is answered hookstretch.ErrNoStretch.
// The exchange ends, and the plugin is told to cancel what it has not
// answered, when ctx ends or the stage is closed.
func (c *V2Client) ModelStage(ctx context.Context, req hookstretch.ModelStageRequest) (hookstretch.Stretch, error) {
	if !c.modelStages.Load() {
		return nil, hookstretch.ErrNoStretch
	}
	if len(req.Stages) == 0 {
		return nil, fmt.Errorf("host: a model stage needs at least one hook")
	}
	rows := make([]*hookRow, len(req.Stages))
	stages := make([]*pluginv2.Stage, len(req.Stages))
	for i, s := range req.Stages {
		row, ok := rowOf(s.Hook)
		if !ok || s.Hook.ModelStage() == 0 {
			return nil, fmt.Errorf("host: hook %q cannot be in a model stage", s.Hook)
		}
		rows[i] = row
		stages[i] = &pluginv2.Stage{Hook: string(s.Hook), TimeoutNs: int64(s.Timeout)}
	}
	return c.exchange(ctx, rows, stages, &pluginv2.ModelStage{Call: llmCallToPB(req.Call), FieldsSet: req.FieldsSet, Text: req.Text})
}

// modelStage answers a model-side stage on the plugin's side, each hook as
// soon as its answer is known (hookstretch.RunModelStage decides which
// hooks run).
func (h *hookStream) modelStage(ctx context.Context, id uint64, stages []*pluginv2.Stage, payload []byte) {
	rows, runStages, ok := h.stageRows(id, stages)
	if !ok {
		return
	}
	req := hookstretch.ModelStageRequest{Stages: runStages}
	var ms pluginv2.ModelStage
	if err := proto.Unmarshal(payload, &ms); err != nil {
		h.fail(id, 0, &failure{pluginv2.Failure_BAD_REQUEST, fmt.Sprintf("undecodable model stage request: %v", err)})
		return
	}
	req.Call = llmCallFromPB(ms.GetCall())
	req.FieldsSet = ms.GetFieldsSet()
	req.Text = ms.GetText()
	h.runStages(ctx, id, rows, func(p hooks.Plugin, emit func(any, error)) { h.runModelStage(ctx, p, req, emit) })
}
