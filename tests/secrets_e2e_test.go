package tests

import (
	"encoding/base64"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// secretShapes are the credential shapes issue 18 measured leaking, with
// fake random values: the lines a tool prints, and the values that must
// not survive anywhere debussy writes.
func secretShapes() (lines, values []string) {
	r := rand.New(rand.NewPCG(18, 1))
	s := func(charset string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = charset[r.IntN(len(charset))]
		}
		return string(b)
	}
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	const upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	add := func(format, value string) {
		lines = append(lines, strings.ReplaceAll(format, "{S}", value))
		values = append(values, value)
	}
	add("OPENAI_API_KEY={S}", "sk-proj-"+s(alnum, 40))
	add("jwt: {S}", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ"+s(alnum, 40)+"."+s(alnum, 43))
	add("DATABASE_URL=postgres://app:{S}@db.internal:5432/app", s(alnum, 18))
	add("Authorization: Basic {S}", base64.StdEncoding.EncodeToString([]byte("deploy:"+s(alnum, 16))))
	add("maps key {S}", "AIza"+s(alnum, 35))
	add("stripe {S}", "sk_live_"+s(alnum, 24))
	add("slack {S}", "xoxb-"+s("0123456789", 12)+"-"+s("0123456789", 13)+"-"+s(alnum, 24))
	add("webhook https://hooks.slack.com/services/{S}", "T"+s(upper, 8)+"/B"+s(upper, 10)+"/"+s(alnum, 24))
	add(`password: "{S}"`, "Pw-"+s(alnum, 12))
	add("aws_secret_access_key = {S}", s(alnum, 40))
	add("mysql --password {S} app", "My"+s(alnum, 12))
	add("curl -u admin:{S} https://api.example.com", "Cu"+s(alnum, 12))
	add("aws_access_key_id = {S}", "AKIA"+s(upper, 16))
	add("github {S}", "ghp_"+s(alnum, 36))
	pem := s(alnum, 64)
	add("-----BEGIN RSA PRIVATE KEY-----\n{S}\n-----END RSA PRIVATE KEY-----", pem)
	// Issue 26's families, beyond the shapes their rules were written from.
	const lowdig = "abcdefghijklmnopqrstuvwxyz0123456789"
	add("podman login quay.io -u bot -p {S}", "Pd"+s(alnum, 14))
	add("mariadb-dump -uadmin -p{S} --all-databases", "Mx"+s(alnum, 12))
	add("redis-cli -h cache -a {S} info", s(alnum, 24))
	add("openssl rsa -in k.pem -passin pass:{S} -out plain.pem", "Os"+s(alnum, 12))
	add("machine registry.example.com login ci password {S}", s(alnum, 30))
	add("replica.internal:6432:*:replicator:{S}", "Pg"+s(alnum, 14))
	add("Set-Cookie: __Host-sid={S}; Path=/; Secure; HttpOnly", s(alnum, 40))
	add("Authorization: GenieKey {S}", s(lowdig, 32))
	add("MAIL_PASS={S}", "Ml"+s(alnum, 12))
	add("GET https://api.telegram.org/bot{S}/getMe", s("0123456789", 10)+":AA"+s(alnum, 33))
	add("kubeadm join 10.0.0.1:6443 --token {S} --discovery-token-ca-cert-hash sha256:"+s("0123456789abcdef", 64), "k"+s(lowdig, 5)+".q"+s(lowdig, 15))
	add("-----BEGIN ENCRYPTED PRIVATE KEY-----\n{S}\n-----END ENCRYPTED PRIVATE KEY-----", s(alnum, 64))
	return lines, values
}

// A tool prints every shape, the agent copies them into its handoff, and a
// failing gate prints them again: no trace anywhere under .debussy/ but the
// raw session streams (0600), none in the next sessions' API requests, none
// in debussy's output.
func TestSecretsLeaveNoTrace(t *testing.T) {
	claudetest.OncePerSuite(t, "redaction of what debussy writes")
	lines, values := secretShapes()
	dir := t.TempDir()
	shapes := filepath.Join(dir, "shapes.txt")
	if err := os.WriteFile(shapes, []byte("SHAPES-BEGIN\n"+strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "s1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash("cat "+shapes)),
			turn(170000, fakeapi.Text("Noted the credentials.")),
			turn(171000, fakeapi.Bash("cp "+shapes+` "$DEBUSSY_STATE_DIR/runs/$DEBUSSY_RUN_ID/phase-$DEBUSSY_PHASE_ID/handoff-1.md"`)),
		}},
		{Name: "s2", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, done("1")), turn(21000, fakeapi.Text("ok")),
		}},
		{Name: "s3", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash("touch ok.txt")), turn(21000, done("1")), turn(22000, fakeapi.Text("ok")),
		}},
	}}
	gate := "shapes: `test -f ok.txt || { cat " + shapes + "; exit 1; }`"
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Shapes", Gates: []string{gate}}}, "model: claude-sonnet-4-5\n")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	sessions := h.requestsOf(phaseMatch("1"))
	if len(sessions) != 3 {
		t.Fatalf("want 3 sessions (handoff restart, remediation), got %d", len(sessions))
	}
	if !strings.Contains(sessions[1][0].FirstUser, "SHAPES-BEGIN") {
		t.Errorf("the handoff is not in the restart prompt:\n%s", sessions[1][0].FirstUser)
	}
	if !strings.Contains(sessions[2][0].FirstUser, "SHAPES-BEGIN") {
		t.Errorf("the gate's output is not in the remediation prompt:\n%s", sessions[2][0].FirstUser)
	}
	leaks := func(where, text string) {
		for i, v := range values {
			if strings.Contains(text, v) {
				t.Errorf("%s carries shape %d: %q", where, i, lines[i])
			}
		}
	}
	for _, s := range sessions[1:] {
		for _, req := range s {
			leaks("an API request of a later session", string(req.Body))
		}
	}
	leaks("debussy's stdout", r.Stdout)
	leaks("debussy's stderr", r.Stderr)
	// The shapes did flow: the raw transcript, kept as the CLI wrote it,
	// holds them.
	if raw := h.runFiles("phase-1/session-1.jsonl"); !strings.Contains(raw, values[0]) {
		t.Error("the raw session stream lacks the shapes: the tool never printed them")
	}
	// debussy logs and the report leave debussy too: each judged whole.
	for _, args := range [][]string{{"logs", "--phase", "1", "--session", "1"}, {"logs", "--phase", "1", "--session", "3"}, {"report", "--md"}} {
		out := h.run(args...)
		if out.Code != 0 {
			t.Fatalf("debussy %s: %s", strings.Join(args, " "), out)
		}
		leaks("debussy "+strings.Join(args, " "), out.Stdout)
	}
	if out := h.run("report"); out.Code != 0 {
		t.Fatalf("debussy report: %s", out)
	}
	files := 0
	err := filepath.WalkDir(filepath.Join(h.Repo, ".debussy"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(h.Repo, path)
		// Everything under .debussy/ is its owner's only.
		info, _ := d.Info()
		if want := fs.FileMode(0o600); d.IsDir() && info.Mode().Perm() != 0o700 || !d.IsDir() && info.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want 0700 for a directory, 0600 for a file", rel, info.Mode().Perm())
		}
		if d.IsDir() {
			return nil
		}
		if strings.HasPrefix(d.Name(), "session-") && strings.HasSuffix(d.Name(), ".jsonl") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		leaks(rel, string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 4 {
		t.Errorf("only %d files under .debussy/ checked", files)
	}
}

// What leaves the machine — every commit message and trailer (pushed) and
// GitHub's step summary — carries no free text from tool I/O: values of
// shapes no rule knows, under neutral names, printed by a tool, said by
// the agent and printed by a failing gate, reach none of them. The phase's
// end says which gate failed and how, in structured words.
func TestNothingFreeLeavesTheMachine(t *testing.T) {
	claudetest.OncePerSuite(t, "what leaves the machine")
	s := noShape(34, 4)
	tool, said, gated := []string{s(14), s(22)}, []string{s(12), s(18)}, []string{s(16), s(26)}
	out, gateOut := freeTextFiles(t, tool, gated)
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "s1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash("cat "+out)),
			turn(21000, fakeapi.Bash("debussy done --phase 1")),
			turn(22000, fakeapi.Text("Done; the ticket was "+said[0]+" and the reference "+said[1]+".")),
		}},
		{Name: "s2", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash("debussy done --phase 1")), turn(21000, fakeapi.Text("Tried again with "+said[0]+".")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Leaky", Gates: []string{"ok: `true`", "check: `cat " + gateOut + "; exit 1`"}}},
		"model: claude-sonnet-4-5\nmax_retries: 1\n")
	summary := filepath.Join(t.TempDir(), "summary.md")
	h.Env = append(h.Env, "GITHUB_STEP_SUMMARY="+summary)
	res := h.run("run", "plan/MASTER_PLAN.md")
	if res.Code != 1 {
		t.Fatalf("want exit 1 (the gate fails): %s", res)
	}
	// They did flow: the raw stream has the tool's, the agent was told the gate's.
	if raw := h.runFiles("phase-1/session-1.jsonl"); !strings.Contains(raw, tool[0]) {
		t.Error("the raw session stream lacks the tool's output: nothing was planted")
	}
	if sessions := h.requestsOf(phaseMatch("1")); len(sessions) != 2 || !strings.Contains(sessions[1][0].FirstUser, "mismatch near") {
		t.Errorf("want the gate's output in the remediation prompt (%d sessions)", len(sessions))
	}
	messages := h.git("log", "--all", "--format=%B%x00")
	md, err := os.ReadFile(summary)
	if err != nil {
		t.Fatalf("no step summary: %v", err)
	}
	for where, text := range map[string]string{"a commit message": messages, "the step summary": string(md)} {
		for _, v := range append(append(append([]string{}, tool...), said...), gated...) {
			if strings.Contains(text, v) {
				t.Errorf("%s carries %q:\n%s", where, v, text)
			}
		}
		for _, v := range []string{gateOut, "mismatch near", "cat "} {
			if strings.Contains(text, v) {
				t.Errorf("%s carries the gate's command or output (%q):\n%s", where, v, text)
			}
		}
	}
	if want := `Debussy-Reason: phase 1 failed on attempt 2: gate 2 "check" failed (exit 1)`; !strings.Contains(messages, want) {
		t.Errorf("commit messages lack %q:\n%s", want, messages)
	}
	if want := `gate 2 "check" failed (exit 1)`; !strings.Contains(string(md), want) {
		t.Errorf("step summary lacks %q:\n%s", want, md)
	}
}

// noShape returns a source of strings of no known shape (seeded random
// alphanumerics), for the tests that free text never leaves the machine.
func noShape(seed1, seed2 uint64) func(n int) string {
	r := rand.New(rand.NewPCG(seed1, seed2))
	return func(n int) string {
		const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
		b := make([]byte, n)
		for i := range b {
			b[i] = alnum[r.IntN(len(alnum))]
		}
		return string(b)
	}
}

// freeTextFiles writes what a tool prints (holding tool's two values) and
// what a failing gate prints (gated's), and returns their paths.
func freeTextFiles(t *testing.T, tool, gated []string) (out, gateOut string) {
	t.Helper()
	dir := t.TempDir()
	out = filepath.Join(dir, "out.txt")
	if err := os.WriteFile(out, []byte("ticket "+tool[0]+"\nbuild_ref="+tool[1]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gateOut = filepath.Join(dir, "gate.txt")
	if err := os.WriteFile(gateOut, []byte("FAIL: mismatch near "+gated[0]+"\nlast value: "+gated[1]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return out, gateOut
}
