package config

import "testing"

// a Pid beyond what a pid_t holds is accepted; on Linux
// syscall.Kill truncates it, so 4294967297 watches pid 1 (always alive,
// EPERM is not ESRCH) and 4294967295 is kill(-1, 0): the host never sees
// the attached plugin go.
func TestReattachPidOutOfRange(t *testing.T) {
	for _, pid := range []string{"4294967297", "4294967295", "2147483648"} {
		v := `{"Protocol":"grpc","ProtocolVersion":2,"Pid":` + pid + `,"Test":true,"Addr":{"Network":"unix","String":"/tmp/p"}}`
		if r, err := ParseReattach("guard", v); err == nil {
			t.Errorf("Pid %s accepted as %d", pid, r.Pid)
		}
	}
}
