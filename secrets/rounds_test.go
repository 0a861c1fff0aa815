package secrets

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Round four's corpus (issue 53) is text files under testdata/round4: each
// case opens with a "=== name" line; in a secrets file its text holds
// {S:kind} where a secret stands, rendered with fake values of that kind
// (two value sets per case); in a look-alikes file the text must come back
// byte for byte ({L:kind} renders a random look-alike value). The tuning
// set (tune/) is what the rules were written against; the held-out set
// (heldout/) was written at the same time by the same hand and looked at
// only as a score, to say honestly how the rules generalize.

// roundCase is one rendered case: its text and the secrets it holds.
type roundCase struct {
	file, name, text string
	secrets          []string
}

var placeholderKind = regexp.MustCompile(`\{([SL]):([a-z0-9_]+)\}`)

// valueOf renders a value of kind.
func (f faker) valueOf(kind string) string {
	words := []string{"amber", "river", "falcon", "copper", "meadow", "violet", "harbor", "cinder", "maple", "orbit", "tundra", "willow", "sable", "quartz", "ember", "lagoon"}
	n := func(prefix string) int {
		var k int
		fmt.Sscanf(strings.TrimPrefix(kind, prefix), "%d", &k)
		return k
	}
	switch {
	case kind == "pw":
		return f.s(alnum, 5) + string("!#%&+-.=@^_~"[f.r.IntN(12)]) + f.s(alnum, 5) + f.s("0123456789", 1)
	case kind == "pwc": // with a comma and a star: values cut there leaked
		return f.s(alnum, 4) + "," + f.s(alnum, 3) + "*" + f.s(alnum, 4) + f.s("0123456789", 1)
	case kind == "word":
		return words[f.r.IntN(len(words))] + f.s("0123456789", 2) + words[f.r.IntN(len(words))]
	case kind == "phrase":
		return words[f.r.IntN(len(words))] + " " + words[f.r.IntN(len(words))] + " " + words[f.r.IntN(len(words))] + " " + words[f.r.IntN(len(words))]
	case kind == "uuid":
		return f.s(hexLow, 8) + "-" + f.s(hexLow, 4) + "-4" + f.s(hexLow, 3) + "-a" + f.s(hexLow, 3) + "-" + f.s(hexLow, 12)
	case kind == "short":
		return f.s(alnum, 7) + f.s("0123456789", 1)
	case strings.HasPrefix(kind, "alnum"):
		return f.s(alnum, n("alnum"))
	case strings.HasPrefix(kind, "lower"):
		return f.s("abcdefghijklmnopqrstuvwxyz0123456789", n("lower"))
	case strings.HasPrefix(kind, "upper"):
		return f.s(upper, n("upper"))
	case strings.HasPrefix(kind, "hexup"):
		return f.s("0123456789ABCDEF", n("hexup"))
	case strings.HasPrefix(kind, "hex"):
		return f.s(hexLow, n("hex"))
	case strings.HasPrefix(kind, "digits"):
		return f.s("123456789", 1) + f.s("0123456789", n("digits")-1)
	case strings.HasPrefix(kind, "b64_"):
		k := n("b64_")
		s := f.s(b64, k)
		if k%4 == 0 {
			s = s[:k-1] + "="
		}
		return s
	case strings.HasPrefix(kind, "url"):
		return f.s(url64, n("url"))
	case strings.HasPrefix(kind, "b58_"):
		return f.s("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz", n("b58_"))
	}
	panic("unknown value kind " + kind)
}

// roundCases reads the case files of dir matching glob and renders each
// case with seeds value sets.
func roundCases(t testing.TB, dir, glob string, seeds int) []roundCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "round4", dir, glob))
	if err != nil || len(files) == 0 {
		t.Fatalf("round four %s/%s: %v, %d files", dir, glob, err, len(files))
	}
	slices.Sort(files)
	var out []roundCase
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, block := range strings.Split("\n"+string(data), "\n=== ")[1:] {
			name, text, _ := strings.Cut(block, "\n")
			text = strings.TrimSuffix(text, "\n")
			for seed := range seeds {
				f := faker{rand.New(rand.NewPCG(uint64(53+seed), uint64(i+1)*7919))}
				c := roundCase{file: filepath.Base(file), name: name}
				c.text = placeholderKind.ReplaceAllStringFunc(text, func(m string) string {
					sub := placeholderKind.FindStringSubmatch(m)
					v := f.valueOf(sub[2])
					if sub[1] == "S" {
						c.secrets = append(c.secrets, v)
					}
					return v
				})
				out = append(out, c)
				if !strings.Contains(text, "{") {
					break // a literal case renders once
				}
			}
		}
	}
	return out
}

// roundScore redacts each case with redact and counts the secrets caught
// (occurrences) and the look-alike cases changed, logging what failed.
func roundScore(t *testing.T, redact func(string) string, secrets, looks []roundCase, logFailures bool) (caught, total, changed int) {
	t.Helper()
	for _, c := range secrets {
		got := redact(c.text)
		for _, s := range c.secrets {
			total++
			if leaked(got, s) {
				if logFailures {
					t.Logf("leak %s %q (%s):\n in: %q\nout: %q", c.file, c.name, s, c.text, got)
				}
				continue
			}
			caught++
		}
	}
	for _, c := range looks {
		if got := redact(c.text); got != c.text {
			changed++
			if logFailures {
				t.Logf("changed %s %q:\n in: %q\nout: %q", c.file, c.name, c.text, got)
			}
		}
	}
	return caught, total, changed
}

// places are where debussy writes what it redacts: the text as a gate's
// output or a tool's (checkpoint files, the restart prompt), inside a
// handoff's fenced block, a JSON event's string, debussy logs' lines
// written one by one, a report's field.
func places() map[string]func(string) string {
	return map[string]func(string) string{
		"text": func(s string) string { return Default().String(s) },
		"checkpoint.md": func(s string) string {
			out := Default().String("## Handoff\n\n```\n" + s + "\n```\n")
			return strings.TrimSuffix(strings.TrimPrefix(out, "## Handoff\n\n```\n"), "\n```\n")
		},
		"events.jsonl": func(s string) string {
			doc, _ := json.Marshal(map[string]any{"event": "gate", "output": s})
			var back map[string]string
			_ = json.Unmarshal(Default().JSON(doc), &back)
			return back["output"]
		},
		"debussy logs": func(s string) string {
			var out strings.Builder
			b := NewBlockWriter(&out)
			for _, l := range strings.Split(s, "\n") {
				b.Write([]byte("  " + l + "\n"))
			}
			_ = b.Close()
			return strings.TrimSuffix(strings.TrimPrefix(strings.ReplaceAll(out.String(), "\n  ", "\n"), "  "), "\n")
		},
		"report": func(s string) string {
			v := &struct{ Output []string }{[]string{s}}
			Default().Value(v)
			return v.Output[0]
		},
	}
}

// roundReport scores set everywhere debussy writes and fails below the
// issue's bars: minRecall of the secrets caught, at most maxChanged of the
// look-alikes changed, in every place.
func roundReport(t *testing.T, set string, minRecall, maxChanged float64) {
	secrets := roundCases(t, set, "secrets-*.txt", 2)
	looks := roundCases(t, set, "lookalikes-*.txt", 1)
	names := []string{"text", "checkpoint.md", "events.jsonl", "debussy logs", "report"}
	for _, place := range names {
		caught, total, changed := roundScore(t, places()[place], secrets, looks, place == "text" && testing.Verbose())
		recall, share := float64(caught)/float64(total), float64(changed)/float64(len(looks))
		t.Logf("%s %s: %d/%d secrets caught (%.1f%%), %d/%d look-alikes changed (%.1f%%)",
			set, place, caught, total, 100*recall, changed, len(looks), 100*share)
		if recall < minRecall || share > maxChanged {
			t.Errorf("%s %s: %.1f%% caught, %.1f%% of look-alikes changed; want ≥ %.0f%% and ≤ %.0f%%",
				set, place, 100*recall, 100*share, 100*minRecall, 100*maxChanged)
		}
	}
}

// TestRoundFour: the tuning set, held to more than the issue asks.
func TestRoundFour(t *testing.T) { roundReport(t, "tune", 0.95, 0.02) }

// TestRoundFourHeldOut: the held-out set, held to the bars
// (≥ 85 % caught, ≤ 3 % of look-alikes changed).
func TestRoundFourHeldOut(t *testing.T) { roundReport(t, "heldout", 0.85, 0.03) }

// TestRoundFourHeldOut2: a second held-out set, written after the first
// had been scored (and its failures read), run only at the end: the
// honest figure for material no rule was tuned on.
func TestRoundFourHeldOut2(t *testing.T) { roundReport(t, "heldout2", 0.85, 0.03) }
