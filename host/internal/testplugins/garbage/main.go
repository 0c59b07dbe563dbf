// Command garbage is a test binary that is not a plugin: it prints to
// stdout, where the host expects go-plugin's handshake line, and lingers.
package main

import (
	"fmt"
	"time"
)

func main() {
	fmt.Println("hello world")
	time.Sleep(time.Minute)
}
