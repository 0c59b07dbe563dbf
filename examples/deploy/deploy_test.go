// Package deploy holds the files that deploy hookhost serve as several
// replicas (Dockerfile, compose.yaml, nginx.conf, hookhost.toml); its test
// checks that they agree with each other, since no container runs here.
package deploy

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/config"
	_ "github.com/hookhost/hookhost/llm/openai"
)

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// compose is what the test reads of compose.yaml: its services, and the
// replicas' shared block (environment and volumes), by indentation, as
// the file is written.
type compose struct {
	services    map[string][]string // name → its lines
	environment map[string]string   // of the x-hookhost block
	volumes     map[string][]string // service → its "source:target" mounts
	raw         string
}

func parseCompose(t *testing.T) compose {
	t.Helper()
	c := compose{services: map[string][]string{}, environment: map[string]string{}, volumes: map[string][]string{}, raw: read(t, "compose.yaml")}
	top, service, sub := "", "", ""
	for _, line := range strings.Split(c.raw, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		switch indent {
		case 0:
			top, _, _ = strings.Cut(trimmed, ":")
			service, sub = "", ""
			if top == "x-hookhost" {
				service = top
			}
		case 2:
			key, _, _ := strings.Cut(trimmed, ":")
			if top == "services" {
				service = key
				c.services[service] = append(c.services[service], trimmed)
			} else {
				sub = key
			}
		default:
			if top == "services" && indent == 4 {
				sub, _, _ = strings.Cut(trimmed, ":")
			}
			if service != "" {
				c.services[service] = append(c.services[service], trimmed)
			}
			if top == "x-hookhost" && sub == "environment" && indent == 4 {
				k, v, _ := strings.Cut(trimmed, ":")
				c.environment[k] = strings.TrimSpace(v)
			}
			if sub == "volumes" && strings.HasPrefix(trimmed, "- ") {
				c.volumes[service] = append(c.volumes[service], strings.TrimPrefix(trimmed, "- "))
			}
		}
	}
	return c
}

// mount is the source of the volume of service mounted at target.
func (c compose) mount(t *testing.T, service, target string) string {
	t.Helper()
	for _, v := range c.volumes[service] {
		parts := strings.Split(v, ":")
		if len(parts) >= 2 && parts[1] == target {
			return parts[0]
		}
	}
	t.Fatalf("compose.yaml: %s mounts nothing at %s (its volumes: %q)", service, target, c.volumes[service])
	return ""
}

// The files refer to each other consistently: what nginx proxies to are
// the compose services running hookhost, on the port hookhost.toml
// listens on; the config compose mounts is where the Dockerfile's
// entrypoint reads it, and names only variables compose sets; the URLs
// point at the Valkey and PostgreSQL services; the image's plugin
// directory and state are where the config looks.
func TestFilesAgree(t *testing.T) {
	data := read(t, "hookhost.toml")
	cfg, err := config.Parse([]byte(data), "hookhost.toml", ".")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.State.Backend != config.StateRedis {
		t.Errorf("hookhost.toml: state.backend = %q, want redis: replicas must share their state", cfg.State.Backend)
	}
	_, listenPort, _ := strings.Cut(cfg.Server.Listen, ":")
	c := parseCompose(t)
	nginx := read(t, "nginx.conf")
	docker := read(t, "Dockerfile")

	// nginx → the replicas.
	var replicas []string
	for _, m := range regexp.MustCompile(`(?m)^\s*server\s+([a-z0-9-]+):(\d+)`).FindAllStringSubmatch(nginx, -1) {
		replicas = append(replicas, m[1])
		if m[2] != listenPort {
			t.Errorf("nginx.conf proxies to %s:%s, but hookhost.toml listens on %s", m[1], m[2], cfg.Server.Listen)
		}
		if lines := c.services[m[1]]; len(lines) == 0 || !strings.Contains(lines[0], "*hookhost") {
			t.Errorf("nginx.conf proxies to %s, which is not a hookhost service of compose.yaml", m[1])
		}
	}
	var want []string
	for name, lines := range c.services {
		if strings.Contains(lines[0], "*hookhost") {
			want = append(want, name)
		}
	}
	slices.Sort(want)
	slices.Sort(replicas)
	if len(want) != 3 || !slices.Equal(replicas, want) {
		t.Errorf("nginx.conf proxies to %q, compose.yaml runs hookhost as %q; want the same three", replicas, want)
	}
	nginxListen := regexp.MustCompile(`(?m)^\s*listen\s+(\d+);`).FindStringSubmatch(nginx)
	if nginxListen == nil || !strings.Contains(strings.Join(c.services["nginx"], "\n"), `:`+nginxListen[1]+`"`) {
		t.Errorf("compose.yaml does not publish nginx's port (nginx.conf listens on %v)", nginxListen)
	}
	if src := c.mount(t, "nginx", "/etc/nginx/nginx.conf"); filepath.Clean(src) != "nginx.conf" {
		t.Errorf("compose.yaml mounts %s as nginx's config, want ./nginx.conf", src)
	}

	// compose → the image and the config.
	entry := regexp.MustCompile(`ENTRYPOINT \[(.*)\]`).FindStringSubmatch(docker)
	var args []string
	if entry == nil || json.Unmarshal([]byte("["+entry[1]+"]"), &args) != nil || !slices.Contains(args, "-c") {
		t.Fatalf("Dockerfile: no ENTRYPOINT running hookhost serve -c <file>: %v", entry)
	}
	confPath := args[slices.Index(args, "-c")+1]
	if src := c.mount(t, "x-hookhost", confPath); filepath.Clean(src) != "hookhost.toml" {
		t.Errorf("compose.yaml mounts %s at %s, where the entrypoint reads its config; want ./hookhost.toml", src, confPath)
	}
	if m := regexp.MustCompile(`(?m)^\s*dockerfile:\s*(\S+)`).FindStringSubmatch(c.raw); m == nil {
		t.Error("compose.yaml builds no Dockerfile")
	} else if ctx := regexp.MustCompile(`(?m)^\s*context:\s*(\S+)`).FindStringSubmatch(c.raw); ctx == nil {
		t.Error("compose.yaml gives no build context")
	} else if _, err := os.Stat(filepath.Join(ctx[1], m[1])); err != nil || filepath.Clean(filepath.Join(ctx[1], "go.mod")) != "../../go.mod" {
		t.Errorf("compose.yaml builds %s in %s, which is not this Dockerfile from the repository's root: %v", m[1], ctx[1], err)
	}

	// The variables the config names are set for every replica.
	kora := cfg.Plugins.Entries["kora"]
	var koraCfg struct {
		StateDir string `json:"state_dir"`
		Ledger   struct {
			DSNEnv string `json:"dsn_env"`
		} `json:"ledger"`
	}
	if err := json.Unmarshal(kora.Config, &koraCfg); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(kora.Env, koraCfg.Ledger.DSNEnv) {
		t.Errorf("Kora's ledger.dsn_env %q is not in plugins.entries.kora.env %q: the host would not pass it", koraCfg.Ledger.DSNEnv, kora.Env)
	}
	for _, name := range append([]string{cfg.Server.APIKeyEnv, cfg.LLM.APIKeyEnv, cfg.State.URLEnv}, kora.Env...) {
		if c.environment[name] == "" {
			t.Errorf("hookhost.toml names %s, which compose.yaml does not set for the replicas", name)
		}
	}
	for name, service := range map[string]string{cfg.State.URLEnv: "valkey", koraCfg.Ledger.DSNEnv: "postgres"} {
		u, err := url.Parse(c.environment[name])
		if err != nil || c.services[u.Hostname()] == nil || u.Hostname() != service {
			t.Errorf("%s = %q does not point at the %s service of compose.yaml", name, c.environment[name], service)
		}
	}

	// The image holds what the config points at, and runs unprivileged
	// and static.
	if !strings.Contains(docker, " "+cfg.Plugins.Dir+"\n") {
		t.Errorf("the Dockerfile does not put the plugins in %s, plugins.dir", cfg.Plugins.Dir)
	}
	if m := regexp.MustCompile(`--chown=\S+ \S+ (\S+)`).FindStringSubmatch(docker); m == nil || !strings.HasPrefix(koraCfg.StateDir, m[1]+"/") {
		t.Errorf("Kora's state_dir %s is not in a directory the Dockerfile gives the user it runs as (%v)", koraCfg.StateDir, m)
	}
	user := regexp.MustCompile(`(?m)^USER (\S+)`).FindStringSubmatch(docker)
	if user == nil || strings.HasPrefix(user[1], "0") || strings.HasPrefix(user[1], "root") {
		t.Errorf("the Dockerfile runs as %v, want a non-root user", user)
	}
	if !strings.Contains(docker, "CGO_ENABLED=0") {
		t.Error("the Dockerfile does not build with CGO_ENABLED=0: the final image has no C library")
	}
}
