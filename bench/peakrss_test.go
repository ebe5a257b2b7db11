package bench

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"testing"
)

const peakChild = "BENCH_PEAK_RSS_CHILD"

// TestPeakRSSChild is the process TestResetPeakRSS measures: it touches
// 128 MiB, hands it back to the kernel, says so and waits for its stdin to
// close.
func TestPeakRSSChild(t *testing.T) {
	if os.Getenv(peakChild) != "1" {
		t.Skip("the child of TestResetPeakRSS")
	}
	b := make([]byte, 128<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	runtime.KeepAlive(b)
	b = nil
	debug.FreeOSMemory()
	os.Stdout.WriteString("freed\n")
	io.Copy(io.Discard, os.Stdin)
}

// TestResetPeakRSS: a process's peak RSS holds memory it has given back
// until ResetPeakRSS, and then no longer, so a turn's peak is its own.
func TestResetPeakRSS(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestPeakRSSChild$")
	cmd.Env = append(os.Environ(), peakChild+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "freed\n" {
		t.Fatalf("the child said %q, %v", line, err)
	}
	target := &Target{Name: "child", cmd: cmd}
	before, err := target.PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	if err := target.ResetPeakRSS(); err != nil {
		t.Fatal(err)
	}
	after, err := target.PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	if before < 128<<20 || after > before-64<<20 {
		t.Errorf("peak RSS %d MiB before the reset, %d MiB after; want at least 128, then 64 less", before>>20, after>>20)
	}
	if err := (&Target{}).ResetPeakRSS(); err != nil {
		t.Errorf("a target without a process: %v", err)
	}
}
