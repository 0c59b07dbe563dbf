//go:build !unix

package wire

import (
	"io"
	"net"
)

// laneReader reads a lane as it is: hosts elsewhere hand plugins no lane,
// so this serves only a plugin given one by hand.
func laneReader(conn net.Conn) io.Reader { return conn }

// laneWriter writes a lane as it is.
func laneWriter(conn net.Conn) io.Writer { return conn }

// sendRoom is laneRoom.
func sendRoom(net.Conn) int { return laneRoom }
