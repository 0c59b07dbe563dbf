package typescript

import (
	"os/exec"
	"testing"

	"github.com/hookhost/hookhost/plugins/typescript/tsbuild"
)

// TestSDKUnitTests runs `npm test` (node:test over the built tests in
// dist/test) and fails with its output when any test fails.
func TestSDKUnitTests(t *testing.T) {
	tsbuild.Need(t, "plugins/typescript/dist/test/sdk.test.js")
	cmd := exec.Command("npm", "test", "--silent")
	cmd.Dir = "."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("npm test in plugins/typescript failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
