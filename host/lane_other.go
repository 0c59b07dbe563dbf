//go:build !unix

package host

import (
	"errors"
	"net"
	"os"
)

// newLane reports that plugins get no lane on this system: their hook
// calls go on the Hooks stream.
func newLane() (net.Conn, *os.File, error) {
	return nil, nil, errors.New("host: plugin lanes need Unix sockets")
}
