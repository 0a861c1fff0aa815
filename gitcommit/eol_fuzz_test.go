package gitcommit

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var (
	eolFuzzSeed = flag.Uint64("eol-fuzz-seed", 19, "seed of TestEOLFuzz")
	eolFuzzSets = flag.Int("eol-fuzz-sets", 120, "attribute sets per core.autocrlf value TestEOLFuzz compares with git add")
)

// The attributes/eol fuzz: generated .gitattributes files and contents, one
// set per directory, staged by `git add -A` and fingerprinted by Untracked
// (the blob CommitAll would store) in the same repository; every blob id
// must agree. Run once per core.autocrlf value.

var (
	eolAttrPatterns = []string{"*", "*.t", "a*", "sub/*", "*.b", "sub/", "[ab].*", "**/d.t", "\"a.t\""}
	eolAttrValues   = []string{"text", "-text", "!text", "text=auto", "eol=lf", "eol=crlf", "binary", "-crlf", "crlf",
		"crlf=input", "ident", "text eol=crlf", "-text eol=lf", "text=auto eol=crlf", "ident text", "eol=crlf -text", "text=bogus", "eol=bogus"}
	eolPieces = []string{"a", "line", "\r\n", "\n", "\r", "\x00", "$Id$", "$Id: x $", "$Id", "$", "\x1a", "\x01", "\x1b", "é", "\t",
		strings.Repeat("long ", 40), "\r\n\r\n", "\n\r"}
	eolFiles = []string{"a.t", "b.b", "c.x", "sub/d.t", "sub/e.b"}
)

func genAttrs(rng *rand.Rand) string {
	var b strings.Builder
	if rng.IntN(15) == 0 {
		b.WriteString("\ufeff")
	}
	for range rng.IntN(4) {
		line := fmt.Sprintf("%s %s", eolAttrPatterns[rng.IntN(len(eolAttrPatterns))], eolAttrValues[rng.IntN(len(eolAttrValues))])
		switch rng.IntN(20) {
		case 0, 1:
			line += "\r"
		case 2:
			i := rng.IntN(len(line))
			line = line[:i] + "\x00" + line[i:] // a NUL ends the line for git
		case 3:
			line += strings.Repeat(" ", 2030+rng.IntN(40)) // around git's 2048-byte limit
		}
		b.WriteString(line)
		b.WriteString("\n")
	}
	return b.String()
}

func genContent(rng *rand.Rand) string {
	var b strings.Builder
	for range rng.IntN(12) {
		b.WriteString(eolPieces[rng.IntN(len(eolPieces))])
	}
	return b.String()
}

// eolCompare stages files (path → content, .gitattributes included) in a
// fresh repository with the given git config and reports every path whose
// blob differs between Untracked and git add -A.
func eolCompare(t *testing.T, files map[string]string, config ...string) []string {
	home := t.TempDir()
	env := diffEnv(home, nil)
	dir := filepath.Join(t.TempDir(), "repo")
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "core.quotePath=false"}, args...)...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return string(out)
	}
	must(t, os.MkdirAll(dir, 0o755))
	git("init", "-q")
	git("config", "core.safecrlf", "false")
	for i := 0; i+1 < len(config); i += 2 {
		git("config", config[i], config[i+1])
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	r, err := Open(dir, WithGetenv(getenvOf(env)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Untracked()
	if err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	want := map[string]string{}
	for _, rec := range strings.Split(git("ls-files", "-s", "-z"), "\x00") {
		meta, path, ok := strings.Cut(rec, "\t")
		if ok {
			want[path] = strings.Fields(meta)[1]
		}
	}
	var diffs []string
	for path, h := range want {
		if got[path] != h {
			diffs = append(diffs, fmt.Sprintf("%s: debussy %q, git %s", path, got[path], h))
		}
	}
	for path := range got {
		if _, ok := want[path]; !ok {
			diffs = append(diffs, path+": listed by debussy, not staged by git")
		}
	}
	return diffs
}

func TestEOLFuzz(t *testing.T) {
	for _, autocrlf := range []string{"false", "true", "input"} {
		t.Run("autocrlf="+autocrlf, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(*eolFuzzSeed, uint64(len(autocrlf))))
			files := map[string]string{}
			for i := range *eolFuzzSets {
				set := fmt.Sprintf("s%03d/", i)
				if attrs := genAttrs(rng); attrs != "" {
					files[set+".gitattributes"] = attrs
				}
				for _, f := range eolFiles {
					if rng.IntN(4) != 0 {
						files[set+f] = genContent(rng)
					}
				}
			}
			diffs := eolCompare(t, files, "core.autocrlf", autocrlf)
			for i, d := range diffs {
				if i == 20 {
					break
				}
				set, _, _ := strings.Cut(d, "/")
				t.Errorf("%s\n%s/.gitattributes:\n%s", d, set, files[set+"/.gitattributes"])
			}
			if len(diffs) > 0 {
				t.Errorf("%d blobs differ from git add (seed %d)", len(diffs), *eolFuzzSeed)
			}
		})
	}
}

// FuzzEOL is the same comparison for one .gitattributes line and one
// content under each core.autocrlf value; plain `go test` runs the seeds
// only (each starts git), `go test -fuzz FuzzEOL` explores.
func FuzzEOL(f *testing.F) {
	f.Add("* text=auto", "a\r\nb\n", uint8(0))
	f.Add("*.t text eol=crlf", "a\nb\r\n", uint8(1))
	f.Add("* ident", "$Id: x $\r\n", uint8(2))
	f.Add("* -text", "\x00\r\n", uint8(1))
	f.Add("", "lone\rcr\r\n", uint8(1))
	f.Fuzz(func(t *testing.T, attrs, content string, autocrlf uint8) {
		if strings.ContainsAny(attrs, "\n\x00") {
			t.Skip()
		}
		files := map[string]string{".gitattributes": attrs + "\n", "a.t": content, "sub/b.x": content}
		value := []string{"false", "true", "input"}[autocrlf%3]
		if diffs := eolCompare(t, files, "core.autocrlf", value); len(diffs) > 0 {
			t.Errorf("autocrlf=%s, .gitattributes %q, content %q:\n%s", value, attrs, content, strings.Join(diffs, "\n"))
		}
	})
}
