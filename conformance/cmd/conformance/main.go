// Command conformance runs the modelgate conformance suite against any
// implementation of the model API, and checks or replays recorded traffic.
//
//	conformance run --base-url URL --api-key KEY [--second-api-key KEY] [--profile spec|openai] [--areas a,b] [--format text|json] [--junit FILE] [--html FILE] [--seed N] [--max-cases N] [--expect-stream-interval D] [--strict] [--unsupported a,b] [--deterministic]
//	conformance list
//	conformance check FILE.jsonl...           (also: check-records)
//	conformance replay --base-url URL --api-key KEY [--areas a,b] FILE.jsonl...
//	conformance diff --base-url A --against B --api-key KEY [--against-api-key KEY] [--model M] [--format text|json]
//
// The exit status is 0 when everything passed, 1 when a check failed (with
// --strict, also when one warned; or a record has findings, or a replay or
// diff differs), 2 when the run could not be made.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"

	"github.com/modelgate/modelgate/conformance"
)

// errFailed is a run that worked and found departures from the spec.
var errFailed = errors.New("departures from the spec found")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout)
	switch {
	case errors.Is(err, errFailed):
		os.Exit(1)
	case err != nil:
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(2)
	}
}

const usage = `usage:
  conformance run --base-url URL --api-key KEY [flags]   run the suite
  conformance list                                        list the checks
  conformance check FILE...                               check recorded traffic against the schemas
  conformance replay --base-url URL --api-key KEY FILE... send recorded requests again and compare
  conformance diff --base-url A --against B [flags]       send the same requests to both and list what B changes`

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%s", usage)
	}
	switch args[0] {
	case "run":
		return runSuite(ctx, args[1:], out)
	case "list":
		return conformance.WriteCatalogue(out)
	case "check-records", "check":
		return checkRecords(args[1:], out)
	case "replay":
		return replay(ctx, args[1:], out)
	case "diff":
		return diff(ctx, args[1:], out)
	}
	return fmt.Errorf("unknown command %q\n%s", args[0], usage)
}

// targetFlags are the flags naming the implementation under test.
func targetFlags(fs *flag.FlagSet, cfg *conformance.Config) {
	fs.StringVar(&cfg.BaseURL, "base-url", "", "root URL of the implementation (a trailing /v1 is accepted)")
	fs.StringVar(&cfg.APIKey, "api-key", os.Getenv("CONFORMANCE_API_KEY"), "a valid API key (default $CONFORMANCE_API_KEY)")
	fs.DurationVar(&cfg.RequestTimeout, "timeout", 0, "bound of each HTTP exchange (default 60s)")
}

// areasFlag is --areas: the areas of the suite a run or replay covers.
func areasFlag(fs *flag.FlagSet, cfg *conformance.Config) {
	fs.Func("areas", "comma-separated areas to include (default all): "+strings.Join(conformance.AllAreas, ","), func(s string) error {
		cfg.Areas = strings.Split(s, ",")
		for _, a := range cfg.Areas {
			if !slices.Contains(conformance.AllAreas, a) {
				return fmt.Errorf("unknown area %q", a)
			}
		}
		return nil
	})
}

// parseWithFiles parses flags given before, between or after file names,
// and returns the file names.
func parseWithFiles(fs *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return files, nil
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func runSuite(ctx context.Context, args []string, out io.Writer) error {
	var cfg conformance.Config
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	targetFlags(fs, &cfg)
	fs.StringVar(&cfg.Profile, "profile", conformance.ProfileSpec, "shape the target is held to where spec and public API differ: spec or openai")
	fs.StringVar(&cfg.BetaHeader, "beta-header", "", "name of the header carrying assistants=v2 (default Vendor-Beta, OpenAI-Beta with --profile openai)")
	fs.StringVar(&cfg.Model, "model", "", "chat model to ask for (default reference)")
	areasFlag(fs, &cfg)
	fs.IntVar(&cfg.Parallel, "parallel", 0, "checks run at once (default 4)")
	fs.Func("only", "comma-separated check IDs or patterns (generated.*) to run, of those the areas include", func(s string) error {
		cfg.Only = strings.Split(s, ",")
		return nil
	})
	fs.DurationVar(&cfg.WaitTimeout, "wait", 0, "bound of waiting for batches and ingestion (default 3m)")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the generated cases (the same seed, the same requests)")
	fs.IntVar(&cfg.MaxCases, "max-cases", 40, "generated cases per generated check at most")
	fs.BoolVar(&cfg.Heavy, "heavy", false, "include the limit probes that upload large inputs")
	fs.BoolVar(&cfg.Strict, "strict", false, "warnings (allowed but discouraged, or model-dependent) fail the run too")
	fs.BoolVar(&cfg.Deterministic, "deterministic", false, "the target answers the same request the same way (assumed with --model reference): model-dependent differences fail instead of warning")
	fs.Func("unsupported", "comma-separated areas or check IDs (patterns) the target declares it does not serve: reported unsupported, not run", func(s string) error {
		cfg.Unsupported = strings.Split(s, ",")
		return nil
	})
	fs.StringVar(&cfg.SecondAPIKey, "second-api-key", os.Getenv("CONFORMANCE_SECOND_API_KEY"), "a valid key of another owner, for the isolation checks (default $CONFORMANCE_SECOND_API_KEY; without it they are skipped)")
	fs.DurationVar(&cfg.ExpectStreamInterval, "expect-stream-interval", 0, "pacing the target declares between stream events (e.g. the reference engine's stream_interval); a stream delivered in one burst then fails")
	format := fs.String("format", "text", "report format on stdout: text or json")
	junit := fs.String("junit", "", "also write a JUnit XML report to this file")
	html := fs.String("html", "", "also write a self-contained HTML report to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkFormat(*format); err != nil {
		return err
	}
	report, err := conformance.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if err := writeFormat(out, *format, report.WriteText, report.WriteJSON); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	for _, out := range []struct {
		path, what string
		write      func(io.Writer) error
	}{{*junit, "JUnit", report.WriteJUnit}, {*html, "HTML", report.WriteHTML}} {
		if out.path == "" {
			continue
		}
		if err := writeFile(out.path, out.write); err != nil {
			return fmt.Errorf("writing the %s report: %w", out.what, err)
		}
	}
	if report.Failed() > 0 {
		return errFailed
	}
	return nil
}

// writeFile creates path and writes it with write.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func checkRecords(args []string, out io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("check-records needs at least one recording file")
	}
	results, err := conformance.CheckRecords(args...)
	if err != nil {
		return err
	}
	bad, err := conformance.WriteRecordFindings(out, results)
	if err != nil {
		return fmt.Errorf("writing findings: %w", err)
	}
	if bad > 0 {
		return errFailed
	}
	return nil
}

func replay(ctx context.Context, args []string, out io.Writer) error {
	var cfg conformance.Config
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	targetFlags(fs, &cfg)
	areasFlag(fs, &cfg)
	files, err := parseWithFiles(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("replay needs at least one recording file")
	}
	var recs []conformance.Record
	for _, path := range files {
		r, err := conformance.ReadRecords(path)
		if err != nil {
			return err
		}
		recs = append(recs, r...)
	}
	results, err := conformance.Replay(ctx, cfg, recs)
	if err != nil {
		return err
	}
	differ, err := conformance.WriteReplay(out, results)
	if err != nil {
		return fmt.Errorf("writing the replay report: %w", err)
	}
	if differ > 0 {
		return errFailed
	}
	return nil
}

// diff runs the differential mode: the same requests to two targets.
func diff(ctx context.Context, args []string, out io.Writer) error {
	var base, against conformance.Config
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	targetFlags(fs, &base)
	fs.StringVar(&against.BaseURL, "against", "", "root URL of the second target, whose differences from the first are reported")
	fs.StringVar(&against.APIKey, "against-api-key", "", "a valid API key of the second target (default: --api-key)")
	fs.StringVar(&base.Model, "model", "", "chat model to ask both for (default reference)")
	fs.StringVar(&base.BetaHeader, "beta-header", "", "name of the header carrying assistants=v2 (default Vendor-Beta)")
	format := fs.String("format", "text", "report format on stdout: text or json")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkFormat(*format); err != nil {
		return err
	}
	if against.APIKey == "" {
		against.APIKey = base.APIKey
	}
	against.Model, against.BetaHeader, against.RequestTimeout = base.Model, base.BetaHeader, base.RequestTimeout
	report, err := conformance.Diff(ctx, base, against)
	if err != nil {
		return err
	}
	if err := writeFormat(out, *format, report.WriteText, report.WriteJSON); err != nil {
		return fmt.Errorf("writing the diff: %w", err)
	}
	if len(report.Differences) > 0 {
		return errFailed
	}
	return nil
}

// checkFormat refuses a --format other than text or json.
func checkFormat(format string) error {
	if format != "text" && format != "json" {
		return fmt.Errorf("format must be text or json, got %q", format)
	}
	return nil
}

// writeFormat writes a report in the format --format chose.
func writeFormat(out io.Writer, format string, text, json func(io.Writer) error) error {
	if format == "json" {
		return json(out)
	}
	return text(out)
}
