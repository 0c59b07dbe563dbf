package sdk

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/plugins/handshake"
)

// killOwnCgroup kills the cgroup the host started the plugin in, and with
// it the plugin and everything it spawned, even children that left its
// process group with setsid, which the group kill that follows would miss.
// It acts only when the plugin is in the cgroup handshake.CgroupEnv names,
// so a stale or borrowed variable cannot kill anything else.
func killOwnCgroup(log hclog.Logger) {
	dir := os.Getenv(handshake.CgroupEnv)
	if dir == "" {
		return
	}
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(own), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok && p != "/" && strings.HasSuffix(filepath.Clean(dir), filepath.Clean(p)) {
			log.Warn("killing the plugin's cgroup", "cgroup", dir)
			if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0); err != nil {
				log.Warn("cannot kill the plugin's cgroup", "cgroup", dir, "error", err.Error())
			}
			return
		}
	}
}
