package host

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// dumpable reports whether other processes of pid's user can read its
// memory and /proc/<pid>/environ. The kernel makes a process's /proc files
// root's once it is not dumpable, so the owner of that file tells. known
// is false where that cannot be told: for a process running as root, whose
// files are root's either way (and whom every root process may read
// regardless), and for a process that is gone.
func dumpable(pid int) (dumpable, known bool) {
	dir := "/proc/" + strconv.Itoa(pid)
	status, err := os.ReadFile(dir + "/status")
	if err != nil {
		return false, false
	}
	euid := -1
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		if f, ok := bytes.CutPrefix(sc.Bytes(), []byte("Uid:")); ok {
			if ids := bytes.Fields(f); len(ids) >= 2 {
				euid, _ = strconv.Atoi(string(ids[1]))
			}
			break
		}
	}
	var st syscall.Stat_t
	if euid <= 0 || syscall.Stat(dir+"/environ", &st) != nil {
		return false, false
	}
	return int(st.Uid) == euid, true
}
