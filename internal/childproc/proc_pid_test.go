//go:build unix

package childproc

import "testing"

// Alive truncates a pid beyond int32 (syscall.Kill passes it
// through as pid_t): 1<<32+1 is pid 1, alive, so an attached plugin with
// such a Pid would never be seen gone. config.ParseReattach accepts it.
func TestProcessAliveOutOfRangePid(t *testing.T) {
	if Alive(1<<32 + 1) {
		t.Fatal("Alive(4294967297) = true: no such process can exist")
	}
}
