package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/internal/procgroup"
	"github.com/debussy-dev/debussy/secrets"
)

// permanentError is a refusal a retry cannot change (a 4xx answer, a
// program that is not there).
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

func isPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

// client has no timeout of its own: every request carries its delivery's
// deadline. It never follows a redirect to another host's credentials
// (the default policy drops them) and keeps no idle connections to a
// receiver that may be gone by the next event.
var client = &http.Client{Transport: &http.Transport{
	Proxy:             http.ProxyFromEnvironment,
	DisableKeepAlives: true,
}}

// post sends one request and judges its answer.
func post(ctx context.Context, url, contentType string, body []byte, header http.Header) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return &permanentError{fmt.Errorf("build request: %w", err)}
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", "debussy")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) {
			err = ue.Unwrap() // the URL (a secret path) stays out of the message
		}
		return fmt.Errorf("post: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode < 300:
		return nil
	case resp.StatusCode >= 500, resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode == http.StatusRequestTimeout:
		return fmt.Errorf("post: answered %s", resp.Status)
	}
	return &permanentError{fmt.Errorf("post: answered %s", resp.Status)}
}

// webhook POSTs the event as JSON.
type webhook struct{ url string }

func (w *webhook) send(ctx context.Context, ev Event) error {
	body, err := encode(ev)
	if err != nil {
		return err
	}
	return post(ctx, w.url, "application/json", body, nil)
}

// encode is the event's JSON, redacted once more as a whole: every field
// is already, this keeps a field added later from slipping through.
func encode(ev Event) ([]byte, error) {
	body, err := json.Marshal(ev)
	if err != nil {
		return nil, &permanentError{fmt.Errorf("encode event: %w", err)}
	}
	return secrets.Default().JSON(body), nil
}

// slack POSTs an incoming webhook's {"text": …}.
type slack struct{ url string }

func (s *slack) send(ctx context.Context, ev Event) error {
	body, _ := json.Marshal(map[string]string{"text": "*" + Title(ev) + "*\n" + ev.Message})
	return post(ctx, s.url, "application/json", body, nil)
}

// ntfy POSTs the message as text to a topic URL, with ntfy's headers.
type ntfy struct{ url string }

func (n *ntfy) send(ctx context.Context, ev Event) error {
	h := http.Header{}
	// Non-ASCII (the title's dash, a plan's name) goes RFC 2047-encoded,
	// which ntfy decodes; ASCII is left as is.
	h.Set("Title", mime.BEncoding.Encode("UTF-8", headerSafe(Title(ev))))
	h.Set("Priority", priority(ev))
	h.Set("Tags", tags(ev))
	return post(ctx, n.url, "text/plain; charset=utf-8", []byte(ev.Message), h)
}

// headerSafe keeps a header value on one line of printable text.
func headerSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// priority is ntfy's: what needs a person is high.
func priority(ev Event) string {
	switch ev.Event {
	case Blocked, Failed, BudgetExhausted:
		return "high"
	case UsageLimit:
		if !ev.Waiting {
			return "high"
		}
	}
	return "default"
}

// tags are ntfy's emoji shortcodes for the event.
func tags(ev Event) string {
	switch ev.Event {
	case Completed:
		return "white_check_mark,debussy"
	case Failed:
		return "x,debussy"
	case Blocked:
		return "question,debussy"
	case UsageLimit:
		return "hourglass,debussy"
	case BudgetExhausted:
		return "moneybag,debussy"
	case Interrupted:
		return "stop_sign,debussy"
	}
	return "debussy"
}

// Title is the event's headline: "debussy: <plan> — phase 2 blocked".
func Title(ev Event) string {
	what := strings.ReplaceAll(ev.Event, "_", " ")
	if ev.Phase != "" {
		what = "phase " + ev.Phase + " " + what
	} else {
		what = "run " + what
	}
	if ev.Plan == "" {
		return "debussy: " + what
	}
	return "debussy: " + ev.Plan + " — " + what
}

// command runs a program with the event in its environment and the JSON on
// stdin, in its own process group, killed with its group at the deadline.
type command struct{ argv []string }

func (c *command) send(ctx context.Context, ev Event) error {
	body, err := encode(ev)
	if err != nil {
		return err
	}
	path, err := exec.LookPath(c.argv[0])
	if err != nil {
		return &permanentError{fmt.Errorf("run %s: %w", c.argv[0], err)}
	}
	cmd := exec.Command(path, c.argv[1:]...)
	cmd.Env = append(os.Environ(), Environ(ev)...)
	cmd.Stdin = bytes.NewReader(body)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	ex, err := procgroup.Run(ctx, cmd)
	switch {
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("run %s: %w", c.argv[0], err)
	case err != nil:
		return &permanentError{fmt.Errorf("run %s: %w", c.argv[0], err)}
	}
	if ex.Err != nil {
		// Its output is the user's program's, not sent anywhere: only
		// the exit status is reported.
		return fmt.Errorf("run %s: %w", c.argv[0], ex.Err)
	}
	return nil
}

// Environ is the event as environment variables for a command target.
func Environ(ev Event) []string {
	env := []string{
		"DEBUSSY_EVENT=" + ev.Event,
		"DEBUSSY_RUN=" + ev.Run,
		"DEBUSSY_PLAN=" + ev.Plan,
		"DEBUSSY_PHASE=" + ev.Phase,
		"DEBUSSY_STATUS=" + ev.Status,
		"DEBUSSY_TITLE=" + Title(ev),
		"DEBUSSY_MESSAGE=" + ev.Message,
	}
	add := func(k, v string) {
		if v != "" {
			env = append(env, k+"="+v)
		}
	}
	add("DEBUSSY_QUESTION", ev.Question)
	add("DEBUSSY_ANSWER_COMMAND", ev.Answer)
	add("DEBUSSY_REASON", ev.Reason)
	add("DEBUSSY_LIMIT", ev.Limit)
	if !ev.Resets.IsZero() {
		add("DEBUSSY_RESETS", ev.Resets.Format(time.RFC3339))
	}
	if !ev.Until.IsZero() {
		add("DEBUSSY_UNTIL", ev.Until.Format(time.RFC3339))
	}
	if ev.ExitCode != nil {
		add("DEBUSSY_EXIT_CODE", strconv.Itoa(*ev.ExitCode))
	}
	return env
}
