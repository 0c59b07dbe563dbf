package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookhost/hookhost/gateway/statestore/statestoretest"
)

const stateConfig = serveConfig + "\n[state]\nbackend = \"redis\"\nurl_env = \"HOOKHOST_TEST_REDIS_URL\"\n"

// serve refuses to start when the variable holding the Redis URL is unset,
// naming it and the line of the file that asks for it.
func TestServeStateURLUnset(t *testing.T) {
	t.Setenv("HOOKHOST_TEST_REDIS_URL", "")
	code, _, errOut := runCLI(t, "", "serve", "-c", writeConfig(t, stateConfig))
	want := "/hookhost.toml:7: state.url_env: the environment variable HOOKHOST_TEST_REDIS_URL is unset or empty"
	if code != 2 || !strings.Contains(errOut, want) || !strings.Contains(errOut, "\nhookhost: config: /") {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, errOut, want)
	}
}

// serve with [state] backend = "redis" keeps stored responses there, shows
// it on /readyz, and closes its connections when it stops.
func TestServeRedisState(t *testing.T) {
	srv := statestoretest.StartRedis(t)
	t.Setenv("HOOKHOST_TEST_REDIS_URL", srv.URL())
	base, _, _, sigs, done := startServe(t, stateConfig)

	post := func(body string) (int, map[string]any) {
		resp, err := http.Post(base+"/v1/responses", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatalf("not JSON: %s", raw)
		}
		return resp.StatusCode, obj
	}
	code, r1 := post(`{"model":"offline-large","input":"first question"}`)
	if code != 200 {
		t.Fatalf("first turn: %d %v", code, r1)
	}
	if code, r2 := post(`{"model":"offline-large","previous_response_id":"` + r1["id"].(string) + `","input":"second"}`); code != 200 {
		t.Fatalf("continuation: %d %v", code, r2)
	}
	if n := dbSize(t, srv.Addr()); n == 0 {
		t.Fatal("nothing was stored in redis")
	}
	if code, body := get(t, base+"/readyz"); code != 200 || !strings.Contains(body, `"state":{"backend":"redis","addr":"`+srv.Addr()+`","state":"up"}`) {
		t.Fatalf("/readyz: %d %s", code, body)
	}
	if n := clients(t, srv.Addr()); n < 2 {
		t.Fatalf("%d clients connected while serving, want serve's and this test's", n)
	}

	sigs <- syscall.SIGTERM
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("serve did not return within a minute of SIGTERM")
	}
	if n := clients(t, srv.Addr()); n != 1 {
		t.Fatalf("%d clients connected after serve returned, want only this test's: serve did not close its own", n)
	}
}

// command sends one command in Redis's inline form and returns its reply
// line and, for a bulk reply, its body.
func command(t *testing.T, addr, cmd string) (string, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "%s\r\n", cmd)
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	line = strings.TrimRight(line, "\r\n")
	if !strings.HasPrefix(line, "$") {
		return line, ""
	}
	n, _ := strconv.Atoi(line[1:])
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		t.Fatal(err)
	}
	return line, string(body)
}

func dbSize(t *testing.T, addr string) int {
	line, _ := command(t, addr, "DBSIZE")
	n, err := strconv.Atoi(strings.TrimPrefix(line, ":"))
	if err != nil {
		t.Fatalf("DBSIZE answered %q", line)
	}
	return n
}

// clients counts the connections the server has, this one included.
func clients(t *testing.T, addr string) int {
	_, body := command(t, addr, "CLIENT LIST")
	return strings.Count(body, "id=")
}
