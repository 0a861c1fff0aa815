package public

import (
	"context"
	"log/slog"
	"strings"

	"github.com/charmbracelet/x/term"
)

// TextShown reports whether free text may be shown on w: asked for
// (--log-text, log_text), or w is a terminal outside CI. A CI job's log
// (InCI, even behind a pseudo-terminal) and every pipe or file get
// structure only.
func TextShown(w any, getenv func(string) string, asked bool) bool {
	if asked {
		return true
	}
	if getenv != nil && InCI(getenv) {
		return false
	}
	return IsTerminal(w)
}

// InCI reports whether debussy runs in a CI job: CI set (to anything but
// "false" or "0": runners set "true", some "1" or "True"), or GitHub's or
// GitLab's own variable.
func InCI(getenv func(string) string) bool {
	ci := getenv("CI")
	return ci != "" && ci != "0" && !strings.EqualFold(ci, "false") ||
		getenv("GITHUB_ACTIONS") != "" || getenv("GITLAB_CI") != ""
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w any) bool {
	f, ok := w.(interface{ Fd() uintptr }) // an *os.File, maybe behind secrets.Writer
	return ok && term.IsTerminal(f.Fd())
}

// Handler is the log's sink rule: with text false, every record's
// attributes pass Value before inner formats them; with text true they
// pass whole (Publishers shown in full). It is the one place that decides
// what a log line may carry, whoever logs it.
type Handler struct {
	inner slog.Handler
	text  bool
}

// NewHandler wraps inner.
func NewHandler(inner slog.Handler, text bool) *Handler { return &Handler{inner, text} }

// Inner is the handler formatting the lines (the live view redirects it).
func (h *Handler) Inner() slog.Handler { return h.inner }

func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = h.attr(a)
	}
	return &Handler{h.inner.WithAttrs(out), h.text}
}

func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{h.inner.WithGroup(name), h.text}
}

// attr is a as the line may carry it.
func (h *Handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, len(g))
		for i, x := range g {
			out[i] = h.attr(x)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		x := v.Any()
		if h.text {
			if w, ok := x.(words); ok {
				return slog.String(a.Key, w.full)
			}
			return slog.Any(a.Key, x)
		}
		return slog.Any(a.Key, Value(a.Key, x))
	case slog.KindString:
		if h.text {
			return a
		}
		return slog.Any(a.Key, Value(a.Key, v.String()))
	}
	return slog.Attr{Key: a.Key, Value: v}
}

var _ slog.Handler = (*Handler)(nil)
