package wire

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// machineIdle tells whether the machine's processors were at least a
// quarter idle lately, read from /proc/stat at most every 100ms. A lane
// reader polls only then: on a busy machine a thread that polls instead
// of sleeping is scheduled as one that computes, behind the others, and
// the plugin it waits for gets less of the processors.
func machineIdle() bool {
	now := time.Now().UnixNano()
	if last := idleSampled.Load(); now-last > int64(100*time.Millisecond) && idleSampled.CompareAndSwap(last, now) {
		sampleIdle()
	}
	return idleNow.Load()
}

var (
	idleSampled atomic.Int64
	idleNow     atomic.Bool
	idleMu      sync.Mutex
	idlePrev    [2]uint64 // idle and total ticks at the last sample
)

func sampleIdle() {
	b, err := os.ReadFile("/proc/stat")
	idle, total, ok := cpuTicks(b)
	if err != nil || !ok {
		idleNow.Store(false)
		return
	}
	idleMu.Lock()
	defer idleMu.Unlock()
	dIdle, dTotal := idle-idlePrev[0], total-idlePrev[1]
	idlePrev = [2]uint64{idle, total}
	idleNow.Store(dTotal > 0 && dIdle*4 >= dTotal)
}

// cpuTicks reads the idle and total ticks of all processors from the
// first line of /proc/stat.
func cpuTicks(stat []byte) (idle, total uint64, ok bool) {
	line, _, _ := bytes.Cut(stat, []byte("\n"))
	fields := bytes.Fields(line)
	if len(fields) < 5 || string(fields[0]) != "cpu" {
		return 0, 0, false
	}
	for i, f := range fields[1:] {
		v, err := strconv.ParseUint(string(f), 10, 64)
		if err != nil {
			return 0, 0, false
		}
		total += v
		if i == 3 {
			idle = v
		}
	}
	return idle, total, true
}
