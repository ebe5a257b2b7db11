package testpg

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/testservice"
)

// Server is a PostgreSQL server of the test's own (scripts/services/
// postgres.sh starts it on a free port), which the test may stop and start
// again: a database outage that touches no other test. It runs where the
// shared server does (MODELGATE_TEST_POSTGRES_DSN is set); it is removed
// when the test ends.
type Server struct {
	t   testing.TB
	env []string
	// DSN connects to its database.
	DSN string
}

// NewServer starts a server for the test.
func NewServer(t testing.TB) *Server {
	t.Helper()
	testservice.Env(t, "MODELGATE_TEST_POSTGRES_DSN", "PostgreSQL", "scripts/services/postgres.sh")
	s := &Server{t: t}
	out, err := s.script("start").Output()
	if err != nil {
		t.Fatalf("starting a PostgreSQL server: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		kv, ok := strings.CutPrefix(line, "export ")
		name, value, found := strings.Cut(kv, "=")
		if !ok || !found {
			t.Fatalf("postgres.sh printed %q", line)
		}
		value = strings.Trim(value, "'")
		s.env = append(s.env, name+"="+value)
		if name == "MODELGATE_TEST_POSTGRES_DSN" {
			s.DSN = value
		}
	}
	t.Cleanup(func() { s.script("stop").Run() })
	return s
}

// Down stops the server; Up starts it again on the same port.
func (s *Server) Down() { s.run("down") }
func (s *Server) Up()   { s.run("up") }

func (s *Server) run(command string) {
	s.t.Helper()
	if out, err := s.script(command).CombinedOutput(); err != nil {
		s.t.Fatalf("postgres.sh %s: %v\n%s", command, err, out)
	}
}

// script runs scripts/services/postgres.sh with the server's variables.
func (s *Server) script(command string) *osexec.Cmd {
	_, here, _, _ := runtime.Caller(0)
	cmd := osexec.Command("bash", filepath.Join(filepath.Dir(here), "..", "..", "scripts", "services", "postgres.sh"), command)
	cmd.Env = append(os.Environ(), s.env...)
	return cmd
}
