package gatewaytest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/testgateway"
	"github.com/modelgate/modelgate/internal/testpg"
)

// LeaseHolder returns the index of the gateway whose worker holds the
// batch's lease (its owner is host/pid/random/claim), -1 when none does.
func LeaseHolder(t *testing.T, conn *pgx.Conn, id string, gateways []*ChildGateway) int {
	t.Helper()
	var owner string
	if err := conn.QueryRow(context.Background(), `SELECT lease_owner FROM batches WHERE id = $1`, id).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	for i, g := range gateways {
		if strings.Contains(owner, "/"+strconv.Itoa(g.Cmd.Process.Pid)+"/") {
			return i
		}
	}
	return -1
}

// TakeoverFixture: two gateway processes on one PostgreSQL schema (batch
// lease 2s), a batch of n requests running on one of them, and a
// connection to the database.
type TakeoverFixture struct {
	Gateways []*ChildGateway
	Conn     *pgx.Conn
	Batch    *openai.Batch
	Holder   int
}

// NewTakeoverFixture is a TakeoverFixture whose batch has n requests.
func NewTakeoverFixture(t *testing.T, n int) *TakeoverFixture {
	t.Helper()
	return NewTakeoverFixtureWith(t, n, "")
}

// NewTakeoverFixtureWith is NewTakeoverFixture with extra lines in both
// gateways' modelgate blocks (upstreams, routes).
func NewTakeoverFixtureWith(t *testing.T, n int, extra string) *TakeoverFixture {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a batch of thousands of requests on two gateway processes")
	}
	dsn := testpg.DSN(t)
	f := &TakeoverFixture{Gateways: []*ChildGateway{
		StartChildWith(t, "postgres "+dsn, extra, testgateway.FreePort(t)),
		StartChildWith(t, "postgres "+dsn, extra, testgateway.FreePort(t)),
	}}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	f.Conn = conn
	f.Batch, _ = RunningBatch(t, SDK(f.Gateways[0].Base), n)
	if f.Holder = LeaseHolder(t, conn, f.Batch.ID, f.Gateways); f.Holder < 0 {
		t.Fatal("neither gateway holds the batch's lease")
	}
	return f
}

// Other is a client of a gateway other than the batch's lease holder.
func (f *TakeoverFixture) Other() openai.Client { return SDK(f.Gateways[1-f.Holder].Base) }

// Pause stops the holder's process with SIGSTOP, as a VM pause or a long
// stall would, and resumes it when the test ends. The pause seeks the
// worst moment: up to 10 times it resumes the process and pauses it
// again until the pause finds the batch's row locked (a holder that kept
// a transaction open across its work is caught holding it); a holder
// that never holds a lock beyond a statement is left paused after the
// last try.
func (f *TakeoverFixture) Pause(t *testing.T) (resume func()) {
	t.Helper()
	p := f.Gateways[f.Holder].Cmd.Process
	resume = func() { p.Signal(syscall.SIGCONT) }
	t.Cleanup(resume)
	for try := range 10 {
		if err := p.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond) // for statements under way on the server to end
		_, err := f.Conn.Exec(context.Background(), `SELECT 1 FROM batches WHERE id = $1 FOR UPDATE NOWAIT`, f.Batch.ID)
		if err != nil {
			t.Logf("paused the holder holding the batch's row locked (try %d): %v", try+1, err)
			return resume
		}
		if try < 9 {
			resume()
			time.Sleep(time.Duration(try%7) * 3 * time.Millisecond)
		}
	}
	return resume
}

// CheckExactlyOnce checks a finished batch of n requests: every custom_id
// is in the output or the error file, once, and the counts agree.
func CheckExactlyOnce(t *testing.T, client openai.Client, done *openai.Batch, n int) (out, errs map[string]map[string]any) {
	t.Helper()
	out, errs = ResultLines(t, client, done.OutputFileID), ResultLines(t, client, done.ErrorFileID)
	if done.RequestCounts.Total != int64(n) || int64(len(out)) != done.RequestCounts.Completed || int64(len(errs)) != done.RequestCounts.Failed {
		t.Fatalf("%d output and %d error lines for %s", len(out), len(errs), done.RawJSON())
	}
	for i := range n {
		id := fmt.Sprintf("req-%d", i)
		_, inOut := out[id]
		_, inErr := errs[id]
		if inOut == inErr {
			t.Fatalf("%s: in the output %v, in the errors %v; want exactly one", id, inOut, inErr)
		}
	}
	return out, errs
}
