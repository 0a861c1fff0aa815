package runner

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// LookPath finds the claude binary ("" means "claude" on PATH), so a
// missing one is reported before any work starts.
func LookPath(bin string) (string, error) {
	if bin == "" {
		bin = "claude"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return "", notFound(bin, err)
	}
	if kernelRefuses(path) {
		return "", notProgram(bin, nil)
	}
	return path, nil
}

// kernelRefuses reports whether the kernel would refuse the file at path
// ("exec format error") though its mode says executable: empty, or neither
// a native (ELF) program, a script starting with "#!", nor a format the
// kernel was taught (binfmt_misc). This is checked before a session starts
// rather than left to exec because the sandbox starts claude through
// bubblewrap, whose execvp (glibc's) hands such a file to /bin/sh: a text
// file without its #! line, or garbage, then "crashed (exit code 127)" four
// times instead of being refused (measured: bwrap -- ./garbage, exit 127,
// "not found"). An unreadable file is left for exec to judge.
func kernelRefuses(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 128)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if n == 0 {
		return true // an empty file runs nothing either
	}
	if bytes.HasPrefix(head, []byte("#!")) || bytes.HasPrefix(head, []byte("\x7fELF")) {
		return false
	}
	return !binfmtMisc("/proc/sys/fs/binfmt_misc", path, head)
}

// binfmtMisc reports whether an enabled binfmt_misc entry under dir would
// run the file (by its magic at an offset, under a mask, or its extension),
// as the kernel decides (Documentation/admin-guide/binfmt-misc.rst). When
// binfmt_misc is not mounted, the kernel runs only ELF and #! scripts.
func binfmtMisc(dir, path string, head []byte) bool {
	if st, err := os.ReadFile(filepath.Join(dir, "status")); err != nil || strings.TrimSpace(string(st)) != "enabled" {
		return false
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() == "status" || e.Name() == "register" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		var enabled bool
		var offset int
		var magic, mask []byte
		ext := ""
		for _, line := range strings.Split(string(b), "\n") {
			key, val, _ := strings.Cut(line, " ")
			switch key {
			case "enabled":
				enabled = true
			case "offset":
				offset, _ = strconv.Atoi(val)
			case "magic":
				magic, _ = hex.DecodeString(val)
			case "mask":
				mask, _ = hex.DecodeString(val)
			case "extension":
				ext = val
			}
		}
		switch {
		case !enabled:
		case ext != "":
			if filepath.Ext(path) == ext || filepath.Ext(path) == "."+ext {
				return true
			}
		case len(magic) > 0 && offset+len(magic) <= len(head):
			match := true
			for i, m := range magic {
				c := head[offset+i]
				if i < len(mask) {
					c &= mask[i]
				}
				if c != m {
					match = false
					break
				}
			}
			if match {
				return true
			}
		}
	}
	return false
}

func notProgram(bin string, err error) error {
	const fix = "neither a native program nor a script starting with #!; point --claude-bin / DEBUSSY_CLAUDE_BIN at the claude CLI"
	if err == nil {
		err = syscall.ENOEXEC
	}
	return fmt.Errorf("start claude: %w: %q cannot be run (%s): %w", ErrClaudeNotProgram, bin, fix, err)
}

func notFound(bin string, err error) error {
	return fmt.Errorf("start claude: %w: %q (install Claude Code or point --claude-bin / DEBUSSY_CLAUDE_BIN at it): %w",
		ErrClaudeNotFound, bin, err)
}

func claudeArgs(spec Spec) []string {
	args := []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"}
	if spec.Model != "" {
		args = append(args, "--model", spec.Model)
	}
	switch spec.PermissionMode {
	case "":
	case "bypassPermissions":
		args = append(args, "--dangerously-skip-permissions")
	default:
		args = append(args, "--permission-mode", spec.PermissionMode)
	}
	for _, t := range spec.AllowedTools {
		args = append(args, "--allowedTools", t)
	}
	args = append(args, "--settings", sessionSettings(spec))
	return append(args, spec.ExtraArgs...)
}

// SettingsFlag is how claude names the settings debussy passes with
// --settings when it says they did not all load (settings_not_in_effect).
const SettingsFlag = "--settings"

// sessionSettings is the inline --settings every session gets: Spec's,
// and idleCompaction off. From 2.1.286 claude may compact a long
// conversation while it is idle, just before the prompt cache expires; a
// debussy session is restarted from a checkpoint instead, and a summary
// made behind its back would change the context it judges. An older CLI
// ignores the key (measured on 2.1.112 and 2.1.197).
// Set last: the user's own --settings (in Spec.Settings when the sandbox
// merged them) never turn it back on.
func sessionSettings(spec Spec) string {
	s := maps.Clone(spec.Settings)
	if s == nil {
		s = map[string]any{}
	}
	s["idleCompaction"] = false
	b, err := json.Marshal(s) // keys sorted: the same line every time
	if err != nil {
		panic(fmt.Sprintf("encode settings: %v", err)) // plain values: cannot fail
	}
	return string(b)
}

// childEnv removes CLAUDECODE (its nested-session guard makes claude exit
// when debussy itself runs inside Claude Code), applies SetEnv, puts
// PathPrepend first on PATH and points CLAUDE_ENV_FILE at ShellEnvFile.
func childEnv(spec Spec) []string {
	base := baseEnv(spec)
	env := make([]string, 0, len(base)+len(spec.SetEnv)+1)
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, set := spec.SetEnv[k]; k == "CLAUDECODE" || set {
			continue
		}
		env = append(env, kv)
	}
	keys := make([]string, 0, len(spec.SetEnv))
	for k := range spec.SetEnv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+spec.SetEnv[k])
	}
	if spec.PathPrepend != "" && spec.ShellEnvFile != "" {
		env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, envFileVar+"=") })
		env = append(env, envFileVar+"="+spec.ShellEnvFile) // it sources the user's (shellenv.go)
	}
	if spec.PathPrepend != "" {
		at := -1
		for i, kv := range env {
			if strings.HasPrefix(kv, "PATH=") {
				at = i
			}
		}
		switch {
		case at < 0:
			env = append(env, "PATH="+spec.PathPrepend)
		case env[at] == "PATH=":
			env[at] = "PATH=" + spec.PathPrepend
		default:
			env[at] = "PATH=" + spec.PathPrepend + string(os.PathListSeparator) + env[at][len("PATH="):]
		}
	}
	return env
}

// baseEnv is the environment claude starts from: Spec.Env, else debussy's.
func baseEnv(spec Spec) []string {
	if spec.Env == nil {
		return os.Environ()
	}
	return spec.Env
}

func userMessage(text string) []byte {
	var msg struct {
		Type    string `json:"type"`
		Message struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
	}
	msg.Type = "user"
	msg.Message.Role = "user"
	msg.Message.Content = text
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(msg) // cannot fail for strings; ends with "\n"
	return b.Bytes()
}

func interruptRequest(id string) []byte {
	return fmt.Appendf(nil, `{"type":"control_request","request_id":%q,"request":{"subtype":"interrupt"}}`+"\n", id)
}
