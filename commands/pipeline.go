package commands

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/urfave/cli/v2"

	"github.com/debussy-dev/debussy/failure"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/internal/buildinfo"
	"github.com/debussy-dev/debussy/internal/gitrun"
	"github.com/debussy-dev/debussy/orchestrator"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/remote"
	"github.com/debussy-dev/debussy/secrets"
)

type pipelineOptions struct {
	PlanPath   string
	ConfigFile string
	Format     string // github, gitlab, k8s
	Output     string // "" = stdout
	Remote     string // the remote phases push to and collect fetches from

	// gitlab and k8s
	Image      string        // "" = the release image of this debussy
	JobTimeout time.Duration // 0 = from the config's time budget, else defaultJobTimeout

	// k8s
	RepoURL   string // the clone URL ("" = the remote's URL here)
	Ref       string // the branch the Jobs clone ("" = the checked-out one)
	Namespace string
	Secret    string
	CPU       string
	CPULimit  string
	Memory    string
	TTL       time.Duration
}

const (
	formatGitHub = "github"
	formatGitLab = "gitlab"
	formatK8s    = "k8s"

	// pushTokenVar is the CI variable (GitLab) or Secret key (k8s) with a
	// token that may push: GitLab's job token may not.
	pushTokenVar = "DEBUSSY_PUSH_TOKEN"
)

func (e *Env) pipelineCommand() *cli.Command {
	return &cli.Command{
		Name:      "pipeline",
		Usage:     "write what a CI engine runs for the plan: a GitHub matrix, a GitLab child pipeline, Kubernetes Jobs",
		ArgsUsage: "MASTER_PLAN.md --format github|gitlab|k8s [-o FILE]",
		Description: `Writes, from the plan and git's ledger (the commits reachable from HEAD; phases
completed there are left out), what an engine runs. Every phase job runs
  debussy run PLAN --only ID --base deps --push origin
which merges its dependencies' result branches before the first session and pushes
its own, debussy/<plan-id>/phase-<ID>, after every commit; collect then merges the
completed ones:
  debussy collect PLAN --from origin --push

--format github   the phases ready now as a GitHub Actions matrix, one line of JSON (as
                  debussy matrix): one wave per workflow run; examples/github-actions-matrix.yml
                  runs the waves and collects.
--format gitlab   a child pipeline: one job per phase not completed, needs: from the
                  plan's dependencies, and a collect job that runs when they are done,
                  into the pipeline's branch. The parent pipeline generates it as an
                  artifact and triggers it (examples/gitlab-ci.yml). Jobs need the whole
                  history (GIT_DEPTH "0": the ledger is the history) and a token that may
                  push: set DEBUSSY_PUSH_TOKEN (a project access token with
                  write_repository) as a CI variable; the job token may not push.
                  Each job works in a private clone of its checkout, in a fresh
                  temporary directory (before_script), so jobs that share one
                  checkout never share a working tree; after_script removes it
                  when the job passed and keeps it (with its raw logs) when not.
--format k8s      one batch/v1 Job per phase ready now (backoffLimit 0: debussy retries
                  itself), each cloning --repo at --ref into an emptyDir and running the
                  phase; it reads CLAUDE_CODE_OAUTH_TOKEN or ANTHROPIC_API_KEY (and
                  DEBUSSY_PUSH_TOKEN, for an https remote that needs one) from a
                  Kubernetes Secret, by default the one called debussy (--secret).
                  A driver applies them, waits, collects and asks again until nothing
                  is ready (examples/k8s-driver.sh); with nothing ready, nothing is
                  written.

When a usage limit is recorded for the account (an account hold), nothing starts before
it resets: GitLab's jobs are delayed (when: delayed), Kubernetes' Jobs wait in their
command, and the note says until when.

Exit codes: 0 written (also when nothing is left to run), 2 bad usage, config or plan.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Usage: "what to write: github, gitlab or k8s (`FORMAT`)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` instead of stdout"},
			&cli.StringFlag{Name: "remote", Value: "origin", Usage: "the `REMOTE` phases push to and collect fetches from"},
			&cli.StringFlag{Name: "image", Usage: "gitlab, k8s: the jobs' container `IMAGE`, with git, debussy and claude (default: this release's, " + buildinfo.ImageRepo + ":vX.Y.Z; a dev build needs it)"},
			&cli.DurationFlag{Name: "job-timeout", Aliases: []string{"deadline"}, Usage: "gitlab, k8s: a phase job's timeout (GitLab's timeout:, a Job's activeDeadlineSeconds), as a `DURATION`",
				DefaultText: "the config's budget.phase.duration, else budget.plan.duration, plus " + jobHeadroom.String() + "; else " + defaultJobTimeout.String()},
			&cli.StringFlag{Name: "repo", Usage: "k8s: the `URL` Jobs clone (default: the remote's URL here)"},
			&cli.StringFlag{Name: "ref", Usage: "k8s: the `BRANCH` Jobs clone (default: the checked-out branch)"},
			&cli.StringFlag{Name: "namespace", Usage: "k8s: the Jobs' `NAMESPACE` (default: kubectl's)"},
			&cli.StringFlag{Name: "secret", Value: "debussy", Usage: "k8s: the `SECRET` holding CLAUDE_CODE_OAUTH_TOKEN or ANTHROPIC_API_KEY"},
			&cli.StringFlag{Name: "cpu", Value: "1", Usage: "k8s: CPU request `QUANTITY`"},
			&cli.StringFlag{Name: "cpu-limit", Value: "2", Usage: "k8s: CPU limit `QUANTITY`"},
			&cli.StringFlag{Name: "memory", Value: "2Gi", Usage: "k8s: memory request and limit `QUANTITY`"},
			&cli.DurationFlag{Name: "ttl", Value: 24 * time.Hour, Usage: "k8s: ttlSecondsAfterFinished, as a `DURATION`"},
			&cli.StringFlag{Name: "config", Usage: "config `FILE`"},
		},
		Action: func(c *cli.Context) error {
			plan, err := oneArg(c, "MASTER_PLAN.md")
			if err != nil {
				return err
			}
			opts := pipelineOptions{PlanPath: plan, ConfigFile: c.String("config"), Format: c.String("format"),
				Output: c.String("output"), Remote: c.String("remote"), Image: c.String("image"),
				RepoURL: c.String("repo"), Ref: c.String("ref"), Namespace: c.String("namespace"), Secret: c.String("secret"),
				CPU: c.String("cpu"), CPULimit: c.String("cpu-limit"), Memory: c.String("memory"),
				JobTimeout: c.Duration("job-timeout"), TTL: c.Duration("ttl")}
			switch opts.Format {
			case formatGitHub, formatGitLab, formatK8s:
			case "":
				return fmt.Errorf("%w: pipeline needs --format github, gitlab or k8s", ErrUsage)
			default:
				return fmt.Errorf("%w: --format %s: the formats are github, gitlab and k8s", ErrUsage, opts.Format)
			}
			if c.IsSet("job-timeout") && opts.JobTimeout < time.Minute || opts.TTL < 0 {
				return fmt.Errorf("%w: --job-timeout must be at least 1m and --ttl not negative", ErrUsage)
			}
			return e.pipeline(c.Context, opts)
		},
	}
}

func (e *Env) pipeline(ctx context.Context, opts pipelineOptions) error {
	if opts.Format != formatGitHub {
		image, err := jobImage(opts.Image, e.build())
		if err != nil {
			return err
		}
		opts.Image = image
	}
	ps, err := e.planState(opts.ConfigFile, opts.PlanPath)
	if err != nil {
		return err
	}
	timeout := jobTimeout(opts.JobTimeout, ps.ws.Config)
	var hold *remote.Hold
	if h, ok := e.holdAt(ctx, ps.ws.Root, opts.Remote); ok {
		hold = &h
		fmt.Fprintf(e.Stderr, "debussy: %s\n", holdLine(h, time.Now()))
	}
	var buf bytes.Buffer
	switch opts.Format {
	case formatGitHub:
		ready, err := ps.ready()
		if err != nil {
			return err
		}
		notBefore := ""
		if hold != nil {
			notBefore = hold.Resets.UTC().Format(time.RFC3339)
		}
		err = writeMatrix(&buf, ready, notBefore)
		if err != nil {
			return err
		}
	case formatGitLab:
		remaining, err := ps.remaining()
		if err != nil {
			return err
		}
		if err := writeGitLab(&buf, ps, remaining, opts, timeout, hold); err != nil {
			return err
		}
	case formatK8s:
		ready, err := ps.ready()
		if err != nil {
			return err
		}
		if opts.RepoURL == "" {
			if opts.RepoURL, err = gitOut(ctx, ps.ws.Root, "remote", "get-url", "--", opts.Remote); err != nil {
				return fmt.Errorf("%w: the Jobs clone the remote %q, which is not here (%v): name the clone URL with --repo", orchestrator.ErrSetup, opts.Remote, err)
			}
		}
		if clean, had := withoutCredentials(opts.RepoURL); had {
			fmt.Fprintln(e.Stderr, "debussy: the clone URL carries credentials; the Jobs get it without them (put a token that may push in the Secret as DEBUSSY_PUSH_TOKEN)")
			opts.RepoURL = clean
		}
		if opts.Ref == "" {
			if opts.Ref, err = gitOut(ctx, ps.ws.Root, "symbolic-ref", "--quiet", "--short", "HEAD"); err != nil {
				return fmt.Errorf("%w: HEAD is detached: name the branch the Jobs clone with --ref", orchestrator.ErrSetup)
			}
		}
		if err := writeK8s(&buf, ps, ready, opts, timeout, hold); err != nil {
			return err
		}
		if len(ready) == 0 {
			fmt.Fprintln(e.Stderr, "debussy: no phase is ready: every phase is completed, or waits on one that is not (no Job written)")
		}
	}
	if opts.Output == "" {
		// Not through the redactor: the scripts name tokens by their
		// variables (password=$DEBUSSY_PUSH_TOKEN), which it would take for
		// secrets; what came from the user was redacted as it was put in.
		out := e.RawStdout
		if out == nil {
			out = e.Stdout
		}
		_, err = out.Write(buf.Bytes())
		return err
	}
	// Not private: a CI artifact other jobs read.
	if err := os.WriteFile(e.abs(opts.Output), buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", opts.Output, err)
	}
	return nil
}

// withoutCredentials strips the user and password from an http(s) URL,
// saying whether there were any: a generated Job leaves the machine.
func withoutCredentials(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil || (u.Scheme != "http" && u.Scheme != "https") {
		return raw, false
	}
	u.User = nil
	return u.String(), true
}

// gitOut runs git in root and returns its trimmed output.
func gitOut(ctx context.Context, root string, args ...string) (string, error) {
	run := gitrun.Runner{Dir: root, NoPrompt: true}
	out, err := run.Run(ctx, gitrun.Call{}, args...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// holdNote is a hold in a generated file's header.
func holdNote(h *remote.Hold) string {
	s := fmt.Sprintf("the account's %s usage limit resets at %s", failure.LimitName(h.Limit), h.Resets.UTC().Format(time.RFC3339))
	if h.Phase != "" {
		s += " (met by phase " + h.Phase + ")"
	}
	return s + ": nothing starts before then"
}

// header is the comment the YAML formats begin with: what made it, from
// which commit, what was left out.
func header(ps *planState, format string, h *remote.Hold) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# debussy pipeline %s --format %s, at %s.\n", secrets.Redact(ps.rel), format, gitcommit.Short(ps.head))
	var done []string
	for _, ph := range ps.plan.Phases {
		if ps.completed(ph.ID) {
			done = append(done, ph.ID)
		}
	}
	if len(done) > 0 {
		fmt.Fprintf(&b, "# Completed per git, left out: %s.\n", strings.Join(done, ", "))
	}
	if h != nil {
		fmt.Fprintf(&b, "# Hold: %s.\n", holdNote(h))
	}
	return b.String()
}

// phaseCommand is the command every engine runs for one phase.
func phaseCommand(planVar, id, remote string) string {
	return fmt.Sprintf(`debussy run "$%s" --only %s --base deps --push %s`, planVar, shellQuote(id), shellQuote(remote))
}

// gitlabJob is one job of the child pipeline, its keys in GitLab's usual
// order.
type gitlabJob struct {
	Stage   string   `yaml:"stage"`
	Needs   []string `yaml:"needs,omitempty,flow"`
	When    string   `yaml:"when,omitempty"`
	StartIn string   `yaml:"start_in,omitempty"`
	Script  []string `yaml:"script"`
}

// gitlabDefault applies to every job: the image, how long a job may run
// (GitLab's own default, 1 h, would cut a long phase), and interruptible
// (a newer pipeline on the branch may cancel it: what a phase committed is
// pushed, and a rerun resumes).
type gitlabDefault struct {
	Image         gitlabImage `yaml:"image"`
	Timeout       string      `yaml:"timeout"`
	Interruptible bool        `yaml:"interruptible"`
	BeforeScript  []string    `yaml:"before_script"`
	AfterScript   []string    `yaml:"after_script"`
}

// gitlabImage is an image whose entrypoint GitLab bypasses: its Docker
// executor starts the job's shell through the entrypoint, and the image's
// is debussy.
type gitlabImage struct {
	Name       string   `yaml:"name"`
	Entrypoint []string `yaml:"entrypoint,flow"`
}

// gitlabClone is the prefix of the job's clone, found again by its job
// id: after_script runs in a shell of its own, where before_script's cd
// and variables are gone.
const gitlabClone = `${TMPDIR:-/tmp}/debussy-job-${CI_JOB_ID}`

// gitlabAfterScript removes the job's clone when the job passed: a shell
// runner would otherwise keep one full clone per job in its TMPDIR for
// ever. A job that did not pass keeps it, with the .debussy/ raw logs its
// pushed commits do not carry, and says where.
var gitlabAfterScript = []string{
	`if [ "${CI_JOB_STATUS:-}" = success ]; then rm -rf "` + gitlabClone + `".*; else echo "debussy: this job's clone, with its .debussy/ raw logs, is kept in" "` + gitlabClone + `".*; fi`,
}

// gitlabRootSandbox lets claude bypass permissions in a job that runs as
// root (an image of the user's, a root shell runner), which it refuses
// otherwise: such a job runs in the container or machine it was given.
// debussy's image runs as a user, and needs none of it.
const gitlabRootSandbox = `if [ "$(id -u)" = 0 ]; then export IS_SANDBOX=1; fi`

// gitlabBeforeScript makes every job's working tree its own: a private
// clone of the job's checkout at the pipeline's commit, in a fresh
// temporary directory named for the job (gitlabAfterScript removes it).
// Jobs that share one checkout (a shell runner's shared builds dir,
// gitlab-ci-local without --shell-isolation) would otherwise share one
// working tree and .debussy/, and two phases collide on its lock and on
// git's checkout. The clone is local (no download) and
// holds exactly the checkout's history, so GIT_DEPTH still decides it;
// unlike a worktree it shares no refs, so concurrent fetches take no ref
// locks from each other. GitLab runs before_script and script in one
// shell: the cd holds. Then the clone's remote is the checkout's (with a
// token that may push when the CI variable holds one: the job token may
// not), and it gets a git identity.
func gitlabBeforeScript(remoteName string) []string {
	lines := []string{
		gitlabRootSandbox,
		`cd "$(mktemp -d "` + gitlabClone + `.XXXXXX")" && git clone --quiet --no-checkout "$CI_PROJECT_DIR" . && git checkout --quiet --detach "$CI_COMMIT_SHA"`,
		`git remote set-url origin "$(git -C "$CI_PROJECT_DIR" remote get-url origin)"`,
	}
	if remoteName != "origin" {
		r := shellQuote(remoteName)
		lines = append(lines, fmt.Sprintf(`git remote add %s "$(git -C "$CI_PROJECT_DIR" remote get-url %s)"`, r, r))
	}
	return append(lines,
		`git config user.name >/dev/null || git config user.name "${GITLAB_USER_NAME:-debussy}"`,
		`git config user.email >/dev/null || git config user.email "${GITLAB_USER_EMAIL:-debussy@localhost}"`,
		`if [ -n "${`+pushTokenVar+`:-}" ]; then git remote set-url origin "${CI_SERVER_PROTOCOL}://oauth2:${`+pushTokenVar+`}@${CI_SERVER_URL#*://}/${CI_PROJECT_PATH}.git"; fi`,
	)
}

func jobName(id string) string { return "phase-" + id }

func writeGitLab(w io.Writer, ps *planState, remaining []*plans.Phase, opts pipelineOptions, timeout timeoutChoice, h *remote.Hold) error {
	in := map[string]bool{}
	for _, ph := range remaining {
		in[ph.ID] = true
	}
	doc := yaml.MapSlice{
		{Key: "variables", Value: yaml.MapSlice{
			{Key: "GIT_DEPTH", Value: "0"}, // the ledger is the history
			{Key: "DEBUSSY_PLAN", Value: secrets.Redact(ps.rel)},
		}},
		{Key: "stages", Value: []string{"phases", "collect"}},
		{Key: "default", Value: gitlabDefault{
			Image:   gitlabImage{Name: opts.Image, Entrypoint: []string{""}},
			Timeout: shortDuration(timeout.d), Interruptible: true,
			BeforeScript: gitlabBeforeScript(opts.Remote), AfterScript: gitlabAfterScript}},
	}
	for _, ph := range remaining {
		job := gitlabJob{Stage: "phases", Needs: []string{},
			Script: []string{phaseCommand("DEBUSSY_PLAN", ph.ID, opts.Remote)}}
		for _, d := range ph.DependsOn {
			if in[d] {
				job.Needs = append(job.Needs, jobName(d))
			}
		}
		if h != nil && len(job.Needs) == 0 {
			job.When, job.StartIn = "delayed", startIn(h.Resets)
		}
		doc = append(doc, yaml.MapItem{Key: jobName(ph.ID), Value: job})
	}
	// Without needs: the collect stage starts once every phase job ended
	// (GitLab caps needs: at 50 jobs), and when: always merges the
	// completed ones after a failure too.
	doc = append(doc, yaml.MapItem{Key: "collect", Value: gitlabJob{Stage: "collect", When: "always",
		Script: []string{fmt.Sprintf(`debussy collect "$DEBUSSY_PLAN" --from %s --into "$CI_COMMIT_REF_NAME" --push`, shellQuote(opts.Remote))}}})
	b, err := yaml.MarshalWithOptions(doc, yaml.Indent(2), yaml.IndentSequence(true))
	if err != nil {
		return fmt.Errorf("encode the gitlab pipeline: %w", err)
	}
	n := len(remaining)
	note := fmt.Sprintf("# A GitLab child pipeline: %d phase job(s), then collect into the pipeline's branch.\n", n)
	note += "# Trigger it from a parent (examples/gitlab-ci.yml). Jobs need GIT_DEPTH \"0\" and\n" +
		"# " + pushTokenVar + " (a project access token that may push) as a CI variable. Each job\n" +
		"# works in a private clone of its checkout (before_script), so jobs that share a\n" +
		"# checkout do not share a working tree; after_script removes the clone of a job\n" +
		"# that passed.\n" +
		fmt.Sprintf("# Image %s (--image).\n# Job timeout %s (%s).\n", opts.Image, shortDuration(timeout.d), timeout.why)
	_, err = fmt.Fprintf(w, "%s%s%s", header(ps, formatGitLab, h), note, b)
	return err
}

// startIn is GitLab's start_in for a job that must wait until t, in whole
// minutes rounded up (GitLab's delay is at most a week).
func startIn(t time.Time) string {
	m := int(time.Until(t).Minutes()) + 1
	m = max(1, min(m, 7*24*60))
	return fmt.Sprintf("%d minutes", m)
}
