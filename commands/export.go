package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/outcome"
	"github.com/debussy-dev/debussy/public"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/report"
	"github.com/debussy-dev/debussy/secrets"
	"github.com/debussy-dev/debussy/state"
)

type exportOptions struct {
	Run string
	Dir string // where the bundle goes; created
}

// exportFiles are the bundle's files, in the order they are written.
var exportFiles = []string{"report.html", "report.md", "summary.md", "summary.txt", "run.json", "events.jsonl"}

func (e *Env) exportCommand() *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "write what may leave the machine (report, summary, structured events) to a directory, to upload as a CI artifact",
		Description: `Writes a run's bundle to DIR: the report (report.html, report.md), the summary
(summary.md, summary.txt, run.json) and the structured events (events.jsonl). It carries
structure only — phases, sessions, tools and their counts, gates by name and exit code,
commits, paths, tokens, cost — and never the agent's text, a tool's input or output, a
gate's output or a session's stream: those stay in .debussy/ (0600), which is never to be
uploaded. What remains is redacted too.

Examples:
  debussy export -o debussy-export             # the latest run
  debussy export --run 20261121-2230-4f2c -o out`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "run", Usage: "run `ID` (default: the latest; debussy status shows ids)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the bundle into `DIR` (created if missing)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr(c, "unexpected arguments: %s", strings.Join(c.Args().Slice(), " "))
			}
			if c.String("output") == "" {
				return usageErr(c, "missing -o DIR: where the bundle goes")
			}
			return e.export(c.Context, exportOptions{Run: c.String("run"), Dir: e.abs(c.String("output"))})
		},
	}
}

func (e *Env) export(_ context.Context, opts exportOptions) error {
	repo, root, store, run, err := e.findRun(opts.Run, (*state.Ledger).Latest)
	if none := (*noRunsYet)(nil); errors.As(err, &none) {
		fmt.Fprintln(e.Stdout, none.Error())
		return nil
	}
	if err != nil {
		return err
	}
	if rel, rerr := filepath.Rel(store.Dir, opts.Dir); rerr == nil && !strings.HasPrefix(rel, "..") {
		return fmt.Errorf("%w: -o %s is inside %s, which is never uploaded; choose a directory outside it", ErrUsage, opts.Dir, store.Dir)
	}
	cfg, _, cerr := config.Load(root, "", e.Environ())
	if cerr != nil {
		cfg = config.Defaults()
	}
	events, lines, err := exportEvents(store.EventsPath(run.ID), root)
	if err != nil {
		return err
	}
	in, err := reportInput(store, repo, run, cfg, lines)
	if err != nil {
		return err
	}
	in.Run = outcome.PublicRun(run)
	for id, sig := range in.Signals {
		s := *sig
		s.Reason = text.OneLine(s.Reason, 200) // the agent's own line, as a commit trailer has it
		in.Signals[id] = &s
	}
	rep := report.Build(in) // redacted
	files := map[string][]byte{"events.jsonl": events}
	var html, md bytes.Buffer
	if err := report.HTML(&html, rep); err != nil {
		return err
	}
	if err := report.Markdown(&md, rep); err != nil {
		return err
	}
	files["report.html"], files["report.md"] = html.Bytes(), md.Bytes()
	step := report.StepSummary(planTitle(run.Plan), in.Run)
	var charts, sum bytes.Buffer
	report.Charts(&charts, rep)
	files["summary.md"] = []byte(step + "\n" + charts.String())
	report.PublicSummary(&sum, in.Run)
	files["summary.txt"] = sum.Bytes()
	if files["run.json"], err = publicJSON(in.Run, root); err != nil {
		return err
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return fmt.Errorf("create export directory: %w", err)
	}
	for _, name := range exportFiles {
		// Whatever a renderer added is judged again, whole, as the
		// terminal's writer judges what it prints.
		data := files[name]
		if !strings.HasSuffix(name, "json") && !strings.HasSuffix(name, ".jsonl") {
			data = []byte(secrets.Redact(string(data)))
		}
		if err := os.WriteFile(filepath.Join(opts.Dir, name), data, 0o644); err != nil {
			return fmt.Errorf("write export: %w", err)
		}
	}
	fmt.Fprintf(e.Stdout, "run %s exported to %s: %s\n", run.ID, opts.Dir, strings.Join(exportFiles, ", "))
	return nil
}

// exportEvents is events.jsonl under public's rule, local paths made
// relative (localPaths), redacted — each line's structure, its free text
// replaced by its size — and those lines parsed, for the report.
func exportEvents(path, root string) ([]byte, []record.Line, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read events: %w", err)
	}
	var out bytes.Buffer
	var lines []record.Line
	for _, line := range bytes.Split(data, []byte("\n")) {
		if line = bytes.TrimSpace(line); len(line) == 0 {
			continue
		}
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		if dec.Decode(&m) == nil && m != nil {
			line = public.ObjectLine(localPaths(m, root).(map[string]any))
		} else {
			line = public.JSONLine(line) // withheld, as "unreadable"
		}
		line = secrets.Default().JSON(line)
		if l, err := record.Parse(line); err == nil {
			lines = append(lines, l)
		}
		out.Write(line)
		out.WriteByte('\n')
	}
	return out.Bytes(), lines, nil
}

// localPaths is v with every absolute path made relative to the
// repository's root, or cut to its last element outside it: a local path
// (a home directory's name) says nothing elsewhere, as outcome's public
// forms have it.
func localPaths(v any, root string) any {
	switch x := v.(type) {
	case string:
		if !filepath.IsAbs(x) {
			return x
		}
		if rel, err := filepath.Rel(root, x); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
		return filepath.Base(x)
	case map[string]any:
		for k, e := range x {
			x[k] = localPaths(e, root)
		}
	case []any:
		for i, e := range x {
			x[i] = localPaths(e, root)
		}
	}
	return v
}

// publicJSON is the run's record as JSON under public's rule, redacted.
func publicJSON(run *state.Run, root string) ([]byte, error) {
	raw, err := json.Marshal(run)
	if err != nil {
		return nil, fmt.Errorf("encode run: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("encode run: %w", err)
	}
	out, err := json.MarshalIndent(public.Object(localPaths(m, root).(map[string]any)), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode run: %w", err)
	}
	return append(secrets.Default().JSON(out), '\n'), nil
}
