package testredis

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/modelgate/modelgate/internal/testservice"
)

// Server is a redis-server of the test's own (scripts/services/redis.sh
// starts it on a free port), which the test may freeze (SIGSTOP) and thaw:
// a Redis stall that touches no other test. It runs where the shared one
// does (MODELGATE_TEST_REDIS_ADDR is set); it is stopped when the test
// ends.
type Server struct {
	t    testing.TB
	Addr string
	pid  int
}

// NewServer starts a server for the test.
func NewServer(t testing.TB) *Server {
	t.Helper()
	testservice.Env(t, "MODELGATE_TEST_REDIS_ADDR", "Redis", "scripts/services/redis.sh")
	_, here, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(here), "..", "..", "scripts", "services", "redis.sh")
	out, err := exec.Command("bash", script).Output()
	if err != nil {
		t.Fatalf("starting a redis-server: %v", err)
	}
	var dir string
	s := &Server{t: t}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, value, _ := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		switch name {
		case "MODELGATE_TEST_REDIS_ADDR":
			s.Addr = value
		case "MODELGATE_TEST_REDIS_DIR":
			dir = value
		}
	}
	pid, err := os.ReadFile(filepath.Join(dir, "redis.pid"))
	if err == nil {
		s.pid, err = strconv.Atoi(strings.TrimSpace(string(pid)))
	}
	if s.Addr == "" || err != nil {
		t.Fatalf("redis.sh printed %q (pid file: %v)", out, err)
	}
	t.Cleanup(func() {
		s.Thaw()
		stop := exec.Command("bash", script, "stop")
		stop.Env = append(os.Environ(), "MODELGATE_TEST_REDIS_DIR="+dir)
		stop.Run()
	})
	return s
}

// Freeze stops the server's process (SIGSTOP): connections stay open and
// nothing is answered. Thaw resumes it.
func (s *Server) Freeze() { s.signal(syscall.SIGSTOP) }
func (s *Server) Thaw()   { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	if err := syscall.Kill(s.pid, sig); err != nil {
		s.t.Fatalf("signalling redis-server %d: %v", s.pid, err)
	}
}
