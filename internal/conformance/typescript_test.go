package conformance

import (
	"testing"

	"github.com/hookhost/hookhost/plugins/typescript/tsbuild"
)

// TestTypeScript checks the TypeScript conform plugin, written with the
// SDK @hookhost/plugin (plugins/typescript/conform/conform.ts) and built by
// `make typescript`, over protocols 1 and 2, its calls on the lane over
// protocol 2. Without the build it skips, saying how to build it; under CI
// it fails.
func TestTypeScript(t *testing.T) {
	t.Parallel()
	Run(t, Plugin{Language: "typescript", Path: tsbuild.Need(t, "plugins/typescript/dist/conform/conform.js"), ModelStages: true, Lane: true})
}
