package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Target is something the load is driven at: the fake upstream itself or
// a gateway process in front of it.
type Target struct {
	Name string
	// URL is the base URL (http://127.0.0.1:PORT).
	URL string
	// Admin is the Caddy admin endpoint (pprof, expvar), "" for others.
	Admin string
	cmd   *exec.Cmd
	// exited is closed once the process has been reaped.
	exited chan struct{}
	log    *os.File
}

// BuildCaddy builds the repository's Caddy (standard modules + modelgate)
// into dir once, so every modelgate gateway runs the same binary.
func BuildCaddy(ctx context.Context, repoRoot, dir string) (string, error) {
	return build(ctx, repoRoot, dir, "caddy", "./module/cmd/caddy")
}

// BuildPlainCaddy builds Caddy with its standard modules only, at go.mod's
// Caddy version, into dir: the floor, whose memory is then Caddy's own and
// not that of a binary also carrying modelgate and its dependencies.
func BuildPlainCaddy(ctx context.Context, repoRoot, dir string) (string, error) {
	return build(ctx, repoRoot, dir, "plaincaddy", "./bench/cmd/plaincaddy")
}

func build(ctx context.Context, repoRoot, dir, name, pkg string) (string, error) {
	bin := filepath.Join(dir, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %w\n%s", pkg, err, out)
	}
	return bin, nil
}

// caddyGlobals: no HTTPS, nothing persisted, errors only in the log, and an
// admin endpoint for pprof on its own port.
const caddyGlobals = `{
	admin 127.0.0.1:%d
	persist_config off
	auto_https off
	log {
		level ERROR
	}
}
`

// Gateway configurations under test. %[1]d is the listening port, %[2]s the
// upstream's base URL, %[3]s the client key, %[4]s a scratch folder.
const (
	// caddySite is the floor: plain reverse_proxy, nothing checked.
	caddySite = `http://127.0.0.1:%[1]d {
	reverse_proxy %[2]s
}
`
	// modelgateMinSite has what cannot be turned off (one key, request
	// validation) and nothing else: no limits, no recording, no reply check.
	modelgateMinSite = `http://127.0.0.1:%[1]d {
	modelgate {
		key %[3]s {
			name bench
		}
		upstream provider {
			base_url %[2]s/v1
			api_key sk-upstream-bench
		}
		route chat.completions.create to provider
		response_check off
	}
}
`
	// modelgateFullSite has every feature on: auth, validation, rate limits
	// (high enough never to refuse, so every request is charged and
	// settled), every exchange recorded, replies checked (report) and the
	// dashboard's counting.
	modelgateFullSite = `http://127.0.0.1:%[1]d {
	modelgate {
		key %[3]s {
			name bench
			rpm 1000000000
			tpm 1000000000000
			max_concurrent 100000
		}
		upstream provider {
			base_url %[2]s/v1
			api_key sk-upstream-bench
		}
		route chat.completions.create to provider
		response_check report
		record %[4]s/records.jsonl {
			max_size 64MiB
			max_files 2
		}
		dashboard /dashboard
	}
}
`
)

// GatewaySites names the Caddyfile site of each built-in gateway, in the
// order of the table.
var GatewaySites = []struct{ Name, Site string }{
	{"caddy", caddySite},
	{"modelgate-min", modelgateMinSite},
	{"modelgate-full", modelgateFullSite},
}

// StartCaddy writes the Caddyfile of one gateway into dir and runs the
// binary on it, logging to dir.
func StartCaddy(ctx context.Context, bin, dir, name, site, upstreamURL, key string) (*Target, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	adminPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	scratch, err := scratchDir(dir, name)
	if err != nil {
		return nil, err
	}
	config := fmt.Sprintf(caddyGlobals, adminPort) + fmt.Sprintf(site, port, upstreamURL, key, scratch)
	path := filepath.Join(scratch, "Caddyfile")
	if err := os.WriteFile(path, []byte(config), 0o640); err != nil {
		return nil, fmt.Errorf("writing Caddyfile of %s: %w", name, err)
	}
	cmd := exec.CommandContext(ctx, bin, "run", "--config", path, "--adapter", "caddyfile")
	// Built-in stores default to Caddy's data folder: keep them here.
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+scratch, "XDG_CONFIG_HOME="+scratch)
	// cmd.Path: bin as exec resolved it (a name on PATH, say).
	t, err := start(name, cmd, scratch, port, cmd.Path)
	if err != nil {
		return nil, err
	}
	t.Admin = fmt.Sprintf("http://127.0.0.1:%d", adminPort)
	return t, nil
}

// StartPeer runs a peer gateway from a shell command in which {port},
// {upstream} (the fake upstream's base URL, without /v1) and {key} (the
// client key) are replaced.
func StartPeer(ctx context.Context, dir, name, command, upstreamURL, key string) (*Target, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	scratch, err := scratchDir(dir, name)
	if err != nil {
		return nil, err
	}
	command = strings.NewReplacer("{port}", strconv.Itoa(port), "{upstream}", upstreamURL, "{key}", key).Replace(command)
	// exec, so the process measured is the peer and not the shell.
	cmd := exec.CommandContext(ctx, "sh", "-c", "exec "+command)
	cmd.Dir = scratch
	return start(name, cmd, scratch, port, peerBinary(command, scratch))
}

// peerBinary is the file a peer's command runs, its first word: a path
// (relative to dir, where the command runs) or a name on PATH; "" when the
// first word names no file.
func peerBinary(command, dir string) string {
	fields := strings.Fields(command)
	if len(fields) == 0 {
		return ""
	}
	path := fields[0]
	if !strings.Contains(path, "/") {
		var err error
		if path, err = exec.LookPath(path); err != nil {
			return ""
		}
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return path
}

// scratchDir is the folder of one gateway's config, log and records.
func scratchDir(dir, name string) (string, error) {
	scratch := filepath.Join(dir, "gateways", name)
	if err := os.MkdirAll(scratch, 0o750); err != nil {
		return "", fmt.Errorf("scratch folder of %s: %w", name, err)
	}
	return scratch, nil
}

// start runs cmd, bin (the binary it runs, "" if none) evicted from the
// page cache first, and waits for it to listen on port.
func start(name string, cmd *exec.Cmd, scratch string, port int, bin string) (*Target, error) {
	if bin != "" {
		if err := evict(bin); err != nil {
			return nil, fmt.Errorf("starting %s: %w", name, err)
		}
	}
	log, err := os.Create(filepath.Join(scratch, "output.log"))
	if err != nil {
		return nil, fmt.Errorf("log of %s: %w", name, err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	t := &Target{Name: name, URL: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd, exited: make(chan struct{}), log: log}
	go func() {
		cmd.Wait()
		close(t.exited)
	}()
	if err := waitListening(t, port, 60*time.Second); err != nil {
		t.Stop()
		return nil, fmt.Errorf("%s did not start (see %s): %w", name, log.Name(), err)
	}
	return t, nil
}

func waitListening(t *Target, port int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for time.Now().Before(deadline) {
		select {
		case <-t.exited:
			return errors.New("the process exited")
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("nothing listens on %s after %s", addr, limit)
}

// Stop ends the process (SIGTERM, then SIGKILL) and waits for it.
func (t *Target) Stop() {
	if t.cmd == nil {
		return
	}
	select {
	case <-t.exited:
	default:
		t.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-t.exited:
		case <-time.After(5 * time.Second):
			t.cmd.Process.Kill()
			<-t.exited
		}
	}
	t.log.Close()
}

// PeakRSS is the process's peak resident set size in bytes (VmHWM), 0 for
// a target that is not a process of its own.
func (t *Target) PeakRSS() (int64, error) { return t.procStatus("VmHWM:") }

// ResetPeakRSS sets the process's peak resident set size (VmHWM) to its
// current one, so that PeakRSS reads the peak from now on.
func (t *Target) ResetPeakRSS() error {
	if t.cmd == nil || t.cmd.Process == nil {
		return nil
	}
	// "5" resets the peak (proc(5), /proc/pid/clear_refs).
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", t.cmd.Process.Pid), []byte("5"), 0); err != nil {
		return fmt.Errorf("resetting the peak RSS of %s: %w", t.Name, err)
	}
	return nil
}

// RSS is the process's current resident set size in bytes (VmRSS).
func (t *Target) RSS() (int64, error) { return t.procStatus("VmRSS:") }

func (t *Target) procStatus(field string) (int64, error) {
	if t.cmd == nil || t.cmd.Process == nil {
		return 0, nil
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", t.cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("reading the status of %s: %w", t.Name, err)
	}
	defer f.Close()
	return parseStatusField(f, field)
}

// CPU is the CPU time (user and system, all threads) the process has used
// so far, 0 for a target that is not a process of its own.
func (t *Target) CPU() (time.Duration, error) {
	if t.cmd == nil || t.cmd.Process == nil {
		return 0, nil
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", t.cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("reading the CPU time of %s: %w", t.Name, err)
	}
	return parseStatCPU(string(stat))
}

// userHZ is the unit of /proc's CPU times: the kernel's USER_HZ, 100 on
// every Linux architecture.
const userHZ = 100

// parseStatCPU reads utime and stime, the 14th and 15th fields of
// /proc/PID/stat, counted after the command name (in parentheses, which
// may hold spaces).
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("the process stat %q has no command name", stat)
	}
	fields := strings.Fields(stat[i+1:])
	// fields[0] is the state, the 3rd field of the line.
	if len(fields) < 13 {
		return 0, fmt.Errorf("the process stat %q is too short", stat)
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing the process stat's CPU time %q: %w", f, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// parseStatusField reads a "Name:   123 kB" line of /proc/PID/status.
func parseStatusField(status io.Reader, field string) (int64, error) {
	sc := bufio.NewScanner(status)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), field)
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing %s %q: %w", field, rest, err)
		}
		return kb << 10, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("reading the process status: %w", err)
	}
	return 0, fmt.Errorf("the process status has no %s line", field)
}

// FreePort asks the kernel for a free loopback port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
