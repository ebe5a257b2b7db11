package gatewaytest

import (
	"syscall"
	"testing"
	"time"
)

// StopsOnSIGTERM sends SIGTERM, which the child takes as `caddy run`
// does (TestMain), and fails unless the process exits; it returns how
// long that took. The bound is for a process that never exits, not a
// measure of speed.
func (c *ChildGateway) StopsOnSIGTERM(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	c.Cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		t.Fatal("the gateway did not stop on SIGTERM")
	}
	return time.Since(start)
}
