package gitcommit

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Round three (issue 19): config includes under every condition git knows,
// core.excludesFile in its forms, and repository settings that change what
// git add -A stages. The included files set user.name (seen in the commit)
// or core.excludesFile (seen in the tree).

// who is an include file naming the author.
func who(name string) string { return "[user]\n\tname = " + name + "\n" }

// secrets writes files an excludes file is meant to keep out.
func secrets(t *testing.T, h *diffRepo) {
	h.Write(".env", "TOKEN=1\n")
	h.Write("id.pem", "key\n")
	h.Write("ok.txt", "ok\n")
}

const excludesInc = "[core]\n\texcludesFile = ~/secret.ignore\n"

func includeCase(name, gitconfig string, files map[string]string, change func(t *testing.T, h *diffRepo)) diffCase {
	home := map[string]string{".gitconfig": defaultDiffGitconfig + gitconfig, "secret.ignore": ".env\n*.pem\n"}
	for k, v := range files {
		home[k] = v
	}
	if change == nil {
		change = secrets
	}
	return diffCase{name: name, home: home, change: change}
}

// inLinkedWorktree commits c in the linked worktree its change made at <Dir>-wt.
func inLinkedWorktree(c diffCase) diffCase {
	c.workdir = func(h *diffRepo) string { return h.Dir + "-wt" }
	return c
}

// refusedConfigCase appends config to the repository's .git/config (a
// global file would break git init) with files beside it in .git, and
// expects both git and CommitAll to refuse.
func refusedConfigCase(name, config string, files map[string]string, gitRefuses, refused string) diffCase {
	return diffCase{
		name: name,
		change: func(t *testing.T, h *diffRepo) {
			appendFile(t, h.path(".git/config"), config)
			for f, c := range files {
				h.Write(".git/"+f, c)
			}
			h.Write("x", "x")
		},
		gitRefuses: gitRefuses,
		refused:    refused,
	}
}

var configCases = []diffCase{
	includeCase("include.path relative to the including file, chained", "[include]\n\tpath = inc/a.inc\n",
		map[string]string{"inc/a.inc": "[include]\n\tpath = b.inc\n", "inc/b.inc": who("Chained") + excludesInc}, nil),
	includeCase("include.path with ~/ and a missing file", "[include]\n\tpath = ~/nope.inc\n\tpath = ~/x.inc\n",
		map[string]string{"x.inc": who("Tilde")}, nil),
	includeCase("include.path absolute", "", nil, func(t *testing.T, h *diffRepo) {
		// The absolute path is only known once HOME exists: write it here.
		if h.Side == "debussy" { // HOME is shared: write once
			appendFile(t, filepath.Join(h.Home, ".gitconfig"), "[include]\n\tpath = "+filepath.Join(h.Home, "abs.inc")+"\n")
			must(t, os.WriteFile(filepath.Join(h.Home, "abs.inc"), []byte(who("Absolute")+excludesInc), 0o644))
		}
		secrets(t, h)
	}),
	includeCase("an include later in the file is overridden by what follows it", "[include]\n\tpath = x.inc\n[user]\n\tname = After\n",
		map[string]string{"x.inc": who("Included")}, nil),
	includeCase("includeIf gitdir: without a trailing slash matches only the git dir itself", "[includeIf \"gitdir:**/debussy\"]\n\tpath = x.inc\n[includeIf \"gitdir:**/git\"]\n\tpath = x.inc\n",
		map[string]string{"x.inc": who("NoSlash")}, nil),
	includeCase("includeIf gitdir: with **/ and a trailing slash", "[includeIf \"gitdir:**/*/\"]\n\tpath = x.inc\n",
		map[string]string{"x.inc": who("Star") + excludesInc}, nil),
	includeCase("includeIf gitdir: case-sensitive, gitdir/i: folds", "[includeIf \"gitdir:**/DEBUSSY/\"]\n\tpath = no.inc\n[includeIf \"gitdir:**/GIT/\"]\n\tpath = no.inc\n"+
		"[includeIf \"gitdir/i:**/DEBUSSY/\"]\n\tpath = yes.inc\n[includeIf \"gitdir/i:**/GIT/\"]\n\tpath = yes.inc\n",
		map[string]string{"no.inc": who("Wrong"), "yes.inc": "[user]\n\temail = folded@example.com\n" + excludesInc}, nil),
	includeCase("includeIf gitdir: relative to the config file with ./", "[includeIf \"gitdir:./\"]\n\tpath = x.inc\n",
		map[string]string{"x.inc": who("Never")}, nil),
	includeCase("includeIf gitdir: ~/ (HOME is not the repository's parent)", "[includeIf \"gitdir:~/\"]\n\tpath = x.inc\n",
		map[string]string{"x.inc": who("Home")}, nil),
	includeCase("includeIf gitdir: with a character class and ?", "[includeIf \"gitdir:**/[dg]?[bt]*/.git\"]\n\tpath = x.inc\n",
		map[string]string{"x.inc": who("Class") + excludesInc}, nil),
	includeCase("includeIf onbranch: exact, glob and trailing slash", "[includeIf \"onbranch:main\"]\n\tpath = a.inc\n[includeIf \"onbranch:feat/\"]\n\tpath = b.inc\n",
		map[string]string{"a.inc": who("OnMain"), "b.inc": who("OnFeat") + excludesInc}, func(t *testing.T, h *diffRepo) {
			h.Git("checkout", "-q", "-b", "feat/x")
			secrets(t, h)
		}),
	includeCase("includeIf onbranch: on an unborn branch", "[includeIf \"onbranch:fresh\"]\n\tpath = x.inc\n",
		map[string]string{"x.inc": who("Unborn") + excludesInc}, func(t *testing.T, h *diffRepo) {
			h.Git("symbolic-ref", "HEAD", "refs/heads/fresh")
			secrets(t, h)
		}),
	includeCase("includeIf onbranch: through a chain of symbolic refs", "[includeIf \"onbranch:main\"]\n\tpath = main.inc\n[includeIf \"onbranch:alias\"]\n\tpath = alias.inc\n",
		map[string]string{"main.inc": who("Resolved"), "alias.inc": "[user]\n\temail = alias@example.com\n"}, func(t *testing.T, h *diffRepo) {
			h.Git("symbolic-ref", "refs/heads/alias", "refs/heads/main")
			h.Git("symbolic-ref", "HEAD", "refs/heads/alias")
			secrets(t, h)
		}),
	includeCase("includeIf hasconfig:remote.*.url: with the URL in an included file", "[include]\n\tpath = remote.inc\n"+
		"[includeIf \"hasconfig:remote.*.url:git@github.com:acme/**\"]\n\tpath = x.inc\n",
		map[string]string{"remote.inc": "[remote \"up\"]\n\turl = git@github.com:acme/app.git\n", "x.inc": who("Acme") + excludesInc}, nil),
	includeCase("includeIf hasconfig:remote.*.url: with the second of two URLs", "[includeIf \"hasconfig:remote.*.url:https://*.example.com/**\"]\n\tpath = x.inc\n",
		map[string]string{"x.inc": who("Second") + excludesInc}, func(t *testing.T, h *diffRepo) {
			h.Git("remote", "add", "a", "https://other.org/x.git")
			h.Git("config", "--add", "remote.a.url", "https://git.example.com/y.git")
			secrets(t, h)
		}),
	includeCase("includeIf in the repository config", "", nil, func(t *testing.T, h *diffRepo) {
		appendFile(t, h.path(".git/config"), "[includeIf \"gitdir:"+h.path(".git")+"\"]\n\tpath = ../../repo.inc\n")
		h.Write("../repo.inc", who("RepoLocal"))
		secrets(t, h)
	}),
	includeCase("includeIf in the XDG config", "", map[string]string{
		".config/git/config": "[includeIf \"onbranch:main\"]\n\tpath = xdg.inc\n", ".config/git/xdg.inc": who("Xdg") + excludesInc,
	}, nil),
	includeCase("an include condition that is false hides its settings", "[includeIf \"gitdir:/nowhere/\"]\n\tpath = x.inc\n[includeIf \"onbranch:nope\"]\n\tpath = x.inc\n",
		map[string]string{"x.inc": who("Hidden") + excludesInc}, nil),
	includeCase("an included file with a BOM, CRLF lines and a legacy section", "[include]\n\tpath = x.inc\n",
		map[string]string{"x.inc": "\ufeff[user]\r\n\tname = Crlf\r\n[core.x]\r\n\ty = 1\r\n" + excludesInc}, nil),
	inLinkedWorktree(includeCase("includeIf gitdir: and onbranch: in a linked worktree", "[includeIf \"gitdir:**/.git/worktrees/**\"]\n\tpath = wt.inc\n"+
		"[includeIf \"onbranch:wt-*\"]\n\tpath = br.inc\n",
		map[string]string{"wt.inc": who("Linked"), "br.inc": "[user]\n\temail = wt@example.com\n" + excludesInc}, func(t *testing.T, h *diffRepo) {
			h.Write("base.txt", "b\n")
			h.Git("add", "base.txt")
			h.Git("commit", "-q", "-m", "base")
			h.Git("worktree", "add", "-q", "-b", "wt-x", h.Dir+"-wt")
			secrets(t, &diffRepo{Dir: h.Dir + "-wt", t: t})
		})),
	refusedConfigCase("an include cycle is refused as git refuses it", "[include]\n\tpath = a.inc\n",
		map[string]string{"a.inc": "[include]\n\tpath = config\n"}, "exceeded maximum include depth", "exceeded maximum include depth"),
	refusedConfigCase("a remote URL set inside a hasconfig include is refused as git refuses it",
		"[includeIf \"hasconfig:remote.*.url:https://a/**\"]\n\tpath = x.inc\n",
		map[string]string{"x.inc": "[remote \"b\"]\n\turl = https://b/x\n"}, "remote URLs cannot be configured", "remote URLs cannot be configured"),
	refusedConfigCase("include.path without a value is refused as git refuses it", "[include]\n\tpath\n", nil,
		"missing value for 'include.path'", "include.path"),

	// core.excludesFile.
	{
		name: "core.excludesFile relative to the worktree root, committing from a subdirectory",
		change: func(t *testing.T, h *diffRepo) {
			h.Git("config", "core.excludesFile", "rules.ignore")
			h.Write("rules.ignore", "*.secret\n")
			h.Write("sub/a.secret", "s")
			h.Write("sub/b.txt", "b")
		},
		workdir: func(h *diffRepo) string { return h.path("sub") },
	},
	{
		name: "core.excludesFile in the repository overrides the global one",
		home: map[string]string{".gitconfig": defaultDiffGitconfig + "[core]\n\texcludesFile = ~/g.ignore\n", "g.ignore": "*.txt\n"},
		change: func(t *testing.T, h *diffRepo) {
			h.Git("config", "core.excludesFile", "~/r.ignore")
			must(t, os.WriteFile(filepath.Join(h.Home, "r.ignore"), []byte("*.log\n"), 0o644))
			h.Write("a.txt", "a")
			h.Write("a.log", "l")
		},
	},
	{
		name: "core.excludesFile naming a missing file",
		home: map[string]string{".gitconfig": defaultDiffGitconfig + "[core]\n\texcludesFile = ~/nope\n", ".config/git/ignore": "*.log\n"},
		change: func(t *testing.T, h *diffRepo) {
			h.Write("a.log", "l")
			h.Write("b.txt", "b")
		},
	},
	{
		name: "core.excludesFile naming a directory is refused as git refuses it",
		home: map[string]string{".gitconfig": defaultDiffGitconfig + "[core]\n\texcludesFile = ~/\n"},
		change: func(t *testing.T, h *diffRepo) {
			h.Write("b.txt", "b")
		},
		gitRefuses: "as an exclude file",
		refused:    "as an exclude file",
	},
	{
		name:   "the default excludes file without XDG_CONFIG_HOME is ~/.config/git/ignore",
		home:   map[string]string{".config/git/ignore": "*.log\n"},
		env:    map[string]string{"XDG_CONFIG_HOME": ""},
		change: func(t *testing.T, h *diffRepo) { h.Write("a.log", "l"); h.Write("b.txt", "b") },
	},
	{
		name:   "XDG_CONFIG_HOME elsewhere holds the excludes file and the config",
		home:   map[string]string{"xdg/git/ignore": "*.log\n", "xdg/git/config": who("XdgUser"), ".config/git/ignore": "*.txt\n"},
		change: func(t *testing.T, h *diffRepo) { h.Write("a.log", "l"); h.Write("b.txt", "b") },
		commitEnv: func(h *diffRepo) map[string]string {
			return map[string]string{"XDG_CONFIG_HOME": filepath.Join(h.Home, "xdg")}
		},
	},
	{
		name:   "GIT_CONFIG_GLOBAL replaces ~/.gitconfig and the XDG config",
		home:   map[string]string{"other.config": who("Other") + "[user]\n\temail = o@example.com\n" + excludesInc, "secret.ignore": ".env\n"},
		change: secrets,
		commitEnv: func(h *diffRepo) map[string]string {
			return map[string]string{"GIT_CONFIG_GLOBAL": filepath.Join(h.Home, "other.config")}
		},
	},
	{
		name:   "core.excludesFile from GIT_CONFIG_COUNT",
		home:   map[string]string{"secret.ignore": ".env\n*.pem\n"},
		env:    map[string]string{"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.excludesFile", "GIT_CONFIG_VALUE_0": "~/secret.ignore"},
		change: secrets,
	},
	{
		name:   "core.excludesFile from GIT_CONFIG_PARAMETERS (git -c)",
		home:   map[string]string{"secret.ignore": ".env\n*.pem\n"},
		env:    map[string]string{"GIT_CONFIG_PARAMETERS": "'core.excludesfile'='~/secret.ignore' 'user.name'='Param Eter'"},
		change: secrets,
	},
	{
		name: "core.ignoreCase=true: patterns fold case, a case-only rename keeps the entry",
		setup: func(t *testing.T, h *diffRepo) {
			h.Write("Readme.md", "r\n")
		},
		change: func(t *testing.T, h *diffRepo) {
			h.Git("config", "core.ignoreCase", "true")
			h.Write(".gitignore", "*.LOG\n")
			h.Write("a.log", "l")
			h.Rename("Readme.md", "README.md")
		},
	},
	{
		name: "core.precomposeUnicode=true changes nothing on Linux",
		change: func(t *testing.T, h *diffRepo) {
			h.Git("config", "core.precomposeUnicode", "true")
			h.Write("cafe\u0301.txt", "nfd")
		},
	},
	{
		name: "core.untrackedCache and feature.manyFiles (index v4 with an untracked cache)",
		setup: func(t *testing.T, h *diffRepo) {
			h.Git("config", "feature.manyFiles", "true")
			h.Git("config", "core.untrackedCache", "true")
			h.Write("a/x", "x")
		},
		change: func(t *testing.T, h *diffRepo) {
			h.Git("status", "--porcelain") // fills the untracked cache
			h.Write("a/y", "y")
			h.Write("b/z", "z")
		},
	},
	{
		name: "unmerged entries without MERGE_HEAD are resolved to the worktree file",
		setup: func(t *testing.T, h *diffRepo) {
			conflictSetup(t, h)
		},
		change: func(t *testing.T, h *diffRepo) {
			h.GitErr("merge", "other")
			h.Remove(".git/MERGE_HEAD")
			h.Remove(".git/MERGE_MSG")
			h.Remove(".git/MERGE_MODE")
			h.Write("f.txt", "resolved\n")
		},
	},
	{
		name: "submodule.<name>.ignore=all in .gitmodules",
		setup: func(t *testing.T, h *diffRepo) {
			commitNested(h, "mod", map[string]string{"m": "m\n"})
			h.Write(".gitmodules", "[submodule \"mod\"]\n\tpath = mod\n\turl = ./mod\n\tignore = all\n")
		},
		change: func(t *testing.T, h *diffRepo) {
			h.Write("mod/m", "v2\n")
			h.GitIn("mod", "commit", "-q", "-am", "v2")
			h.Write("top", "t\n")
		},
	},
	{
		name: "diff.ignoreSubmodules=all: a moved gitlink alone is nothing to commit, though staged",
		setup: func(t *testing.T, h *diffRepo) {
			commitNested(h, "mod", map[string]string{"m": "m\n"})
		},
		change: func(t *testing.T, h *diffRepo) {
			h.Git("config", "diff.ignoreSubmodules", "all")
			h.Write("mod/m", "v2\n")
			h.GitIn("mod", "commit", "-q", "-am", "v2")
		},
	},
	{
		name: "diff.ignoreSubmodules=all: the moved gitlink is committed with other changes",
		setup: func(t *testing.T, h *diffRepo) {
			commitNested(h, "mod", map[string]string{"m": "m\n"})
		},
		change: func(t *testing.T, h *diffRepo) {
			h.Git("config", "diff.ignoreSubmodules", "all")
			h.Write("mod/m", "v2\n")
			h.GitIn("mod", "commit", "-q", "-am", "v2")
			h.Write("top", "t\n")
		},
	},
	{
		name:  "a tracked file replaced by a FIFO is refused as git add -A refuses it",
		setup: func(t *testing.T, h *diffRepo) { h.Write("p", "was a file\n"); h.Write("q", "q\n") },
		change: func(t *testing.T, h *diffRepo) {
			h.Remove("p")
			must(t, syscall.Mkfifo(h.path("p"), 0o644))
		},
		gitRefuses: "can only add regular files",
		refused:    "can only add regular files",
	},
	{
		name: "core.safecrlf=true with autocrlf=input refuses CRLF as git does",
		change: func(t *testing.T, h *diffRepo) {
			h.Git("config", "core.autocrlf", "input")
			h.Git("config", "core.safecrlf", "true")
			h.Write("a.txt", "a\r\n")
		},
		gitRefuses: "CRLF would be replaced by LF",
		refused:    "CRLF would be replaced by LF",
	},
	{
		name: "core.safecrlf=true with eol=crlf on an LF file refuses as git does",
		change: func(t *testing.T, h *diffRepo) {
			h.Git("config", "core.safecrlf", "true")
			h.Write(".gitattributes", "*.txt eol=crlf\n")
			h.Write("a.txt", "a\n")
		},
		gitRefuses: "LF would be replaced by CRLF",
		refused:    "LF would be replaced by CRLF",
	},
	{
		name: "core.safecrlf=true with text=auto on mixed line endings refuses as git does",
		change: func(t *testing.T, h *diffRepo) {
			h.Git("config", "core.safecrlf", "true")
			h.Write(".gitattributes", "* text=auto\n")
			h.Write("a.txt", "a\r\nb\n")
		},
		gitRefuses: "CRLF would be replaced by LF",
		refused:    "CRLF would be replaced by LF",
	},
}

func TestDifferentialConfig(t *testing.T) {
	runDiffCases(t, configCases)
}
