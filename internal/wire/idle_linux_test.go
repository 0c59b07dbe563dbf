package wire

import "testing"

func TestCPUTicks(t *testing.T) {
	for _, tc := range []struct {
		stat        string
		idle, total uint64
		ok          bool
	}{
		{"cpu  100 5 50 800 20 0 5 0 0 0\ncpu0 1 2 3 4\n", 800, 980, true},
		{"cpu  1 2 3\n", 0, 0, false},
		{"cpu0 100 5 50 800\n", 0, 0, false},
		{"cpu  100 x 50 800\n", 0, 0, false},
		{"", 0, 0, false},
	} {
		idle, total, ok := cpuTicks([]byte(tc.stat))
		if idle != tc.idle || total != tc.total || ok != tc.ok {
			t.Errorf("cpuTicks(%q) = %d, %d, %v; want %d, %d, %v", tc.stat, idle, total, ok, tc.idle, tc.total, tc.ok)
		}
	}
}
