package gitcommit

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var (
	includeFuzzSeed   = flag.Uint64("include-fuzz-seed", 19, "seed of TestIncludeIfFuzz")
	includeFuzzRounds = flag.Int("include-fuzz-rounds", 12, "repositories TestIncludeIfFuzz builds (60 conditions each)")
)

// The config-include fuzz: includeIf sections under every condition git
// knows (gitdir:, gitdir/i:, onbranch:, hasconfig:remote.*.url:) plus plain
// include.path, each including a file that sets fuzz.k<N>; which keys git
// sees (`git config --get-regexp`) must be the keys readConfig sees. The
// repository lives at $HOME/Work/proj-x so "~/" and "./" patterns can match.

var (
	gitdirPieces = []string{"~/", "./", "/", "**/", "**", "*", "?", "[a-z]", "[!x]", "Work", "work", "WORK", "proj-x", "proj-*", "Proj-X",
		".git", ".git/", "repo", "/", "x", "\\W"}
	branchPieces = []string{"main", "feat/", "feat/*", "feat/**", "Feat/", "*", "**", "release/1.?", "a", "ma*", "[m]ain", "x/"}
	urlPieces    = []string{"https://github.com/**", "git@github.com:acme/*", "git@github.com:acme/**", "*://host/*", "**", "https://example.com/**",
		"https://Example.com/**", "*", "https://github.com/acme/app.git", "ssh://host/**", "file:///**"}
	fuzzBranches = []string{"main", "feat/x", "Feat/X", "release/1.0", "a", "feat/x/y"}
	fuzzURLs     = []string{"https://github.com/acme/app.git", "git@github.com:acme/app.git", "ssh://host/x", "file:///tmp/x", "https://Example.com/A/b"}
)

func genCondition(rng *rand.Rand) string {
	switch rng.IntN(5) {
	case 0, 1:
		var b strings.Builder
		if rng.IntN(3) == 0 {
			b.WriteString("**/")
		}
		for range 1 + rng.IntN(3) {
			b.WriteString(gitdirPieces[rng.IntN(len(gitdirPieces))])
		}
		kind := "gitdir:"
		if rng.IntN(2) == 0 {
			kind = "gitdir/i:"
		}
		return kind + b.String()
	case 2:
		return "onbranch:" + branchPieces[rng.IntN(len(branchPieces))]
	case 3:
		return "hasconfig:remote.*.url:" + urlPieces[rng.IntN(len(urlPieces))]
	}
	return "" // plain include.path
}

// includeCompare writes conds as includeIf sections of $HOME/.gitconfig
// (cond "" is a plain [include]) for a repository on branch with remotes,
// and returns the keys only one side sees.
func includeCompare(t *testing.T, conds []string, branch string, urls []string) (diffs []string, matched int) {
	home := t.TempDir()
	env := diffEnv(home, nil)
	dir := filepath.Join(home, "Work", "proj-x")
	git := func(ok1 bool, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.Output()
		if err != nil && !(ok1 && cmd.ProcessState.ExitCode() == 1) {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return string(out)
	}
	must(t, os.MkdirAll(dir, 0o755))
	git(false, "init", "-q")
	git(false, "symbolic-ref", "HEAD", "refs/heads/"+branch)
	for i, u := range urls {
		git(false, "config", "--add", fmt.Sprintf("remote.r%d.url", i), u)
	}
	var cfg strings.Builder
	for i, c := range conds {
		if c == "" {
			cfg.WriteString("[include]\n")
		} else {
			fmt.Fprintf(&cfg, "[includeIf %q]\n", c)
		}
		fmt.Fprintf(&cfg, "\tpath = inc/k%d\n", i)
		must(t, os.MkdirAll(filepath.Join(home, "inc"), 0o755))
		must(t, os.WriteFile(filepath.Join(home, "inc", fmt.Sprint("k", i)), []byte(fmt.Sprintf("[fuzz]\n\tk%d = 1\n", i)), 0o644))
	}
	must(t, os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(cfg.String()), 0o644))

	var want []string
	for _, line := range strings.Split(git(true, "config", "--get-regexp", `^fuzz\.`), "\n") {
		if k, _, ok := strings.Cut(line, " "); ok {
			want = append(want, k)
		}
	}
	r, err := Open(dir, WithGetenv(getenvOf(env)))
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.readConfig()
	if err != nil {
		t.Fatalf("readConfig: %v", err)
	}
	var got []string
	for k := range c.values {
		if strings.HasPrefix(k, "fuzz.") {
			got = append(got, k)
		}
	}
	for _, k := range got {
		if !slices.Contains(want, k) {
			diffs = append(diffs, k+" only for debussy")
		}
	}
	for _, k := range want {
		if !slices.Contains(got, k) {
			diffs = append(diffs, k+" only for git")
		}
	}
	return diffs, len(want)
}

func TestIncludeIfFuzz(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(*includeFuzzSeed, 0))
	bad, total, matched := 0, 0, 0
	for round := range *includeFuzzRounds {
		branch := fuzzBranches[rng.IntN(len(fuzzBranches))]
		var urls []string
		for range rng.IntN(3) {
			urls = append(urls, fuzzURLs[rng.IntN(len(fuzzURLs))])
		}
		conds := make([]string, 60)
		for i := range conds {
			conds[i] = genCondition(rng)
		}
		diffs, n := includeCompare(t, conds, branch, urls)
		total, matched = total+len(conds), matched+n
		for _, d := range diffs {
			if bad++; bad <= 20 {
				var k int
				fmt.Sscanf(d, "fuzz.k%d", &k)
				t.Errorf("round %d (branch %s, remotes %v): %s: condition %q", round, branch, urls, d, conds[k])
			}
		}
	}
	t.Logf("%d includes compared, %d followed by git", total, matched)
}

// FuzzIncludeIf is one condition per input: plain `go test` runs the seeds
// (each starts git), `go test -fuzz FuzzIncludeIf` explores.
func FuzzIncludeIf(f *testing.F) {
	f.Add("gitdir:~/Work/", uint8(0), uint8(0))
	f.Add("gitdir/i:**/WORK/**", uint8(1), uint8(1))
	f.Add("gitdir:./Work/proj-*/", uint8(2), uint8(0))
	f.Add("onbranch:feat/", uint8(1), uint8(2))
	f.Add("hasconfig:remote.*.url:git@github.com:acme/*", uint8(0), uint8(1))
	f.Add(`gitdir/i:\W**/**`, uint8(0), uint8(0)) // git does not fold an escaped letter
	f.Add(`gitdir/i:**/\work/**`, uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, cond string, branch, url uint8) {
		if !strings.HasPrefix(cond, "gitdir:") && !strings.HasPrefix(cond, "gitdir/i:") && !strings.HasPrefix(cond, "onbranch:") &&
			!strings.HasPrefix(cond, "hasconfig:remote.*.url:") {
			t.Skip("a condition git does not know: debussy refuses it by design")
		}
		// The section header is written with %q: only \\ and \" mean the
		// same to git.
		if q := strings.NewReplacer(`\\`, "", `\"`, "").Replace(strconv.Quote(cond)); strings.Contains(q, `\`) {
			t.Skip()
		}
		b := fuzzBranches[int(branch)%len(fuzzBranches)]
		urls := []string{fuzzURLs[int(url)%len(fuzzURLs)]}
		if diffs, _ := includeCompare(t, []string{cond}, b, urls); len(diffs) > 0 {
			t.Errorf("condition %q, branch %s, remotes %v: %v", cond, b, urls, diffs)
		}
	})
}
