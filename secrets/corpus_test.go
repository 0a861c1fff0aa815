package secrets

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/internal/race"
)

// fake makes a random-looking value from charset: real formats, fake
// values, and no literal credential in the source for scanners to flag.
type faker struct{ r *rand.Rand }

const (
	alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	hexLow = "0123456789abcdef"
	b64    = alnum + "+/"
	url64  = alnum + "-_"
)

func (f faker) s(charset string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = charset[f.r.IntN(len(charset))]
	}
	return string(b)
}

// secretCase is text holding secret, which must not survive redaction.
type secretCase struct {
	family, text, secret string
}

func secretCorpus() []secretCase {
	f := faker{rand.New(rand.NewPCG(18, 2026))}
	c := func(family, format, secret string) secretCase {
		return secretCase{family, strings.ReplaceAll(format, "{S}", secret), secret}
	}
	pem := func(kind string) (string, string) {
		body := ""
		for range 6 {
			body += f.s(b64, 64) + "\n"
		}
		return "-----BEGIN " + kind + "-----\n" + body + "-----END " + kind + "-----", body
	}
	rsa, rsaBody := pem("RSA PRIVATE KEY")
	ssh, sshBody := pem("OPENSSH PRIVATE KEY")
	ec, ecBody := pem("EC PRIVATE KEY")
	cut := "-----BEGIN PRIVATE KEY-----\n" + f.s(b64, 64) + "\n" + f.s(b64, 30)
	tailBody := f.s(b64, 64)
	tail := f.s(b64, 40) + "\n" + tailBody + "\n-----END PRIVATE KEY-----"
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ" + f.s(url64, 60) + "." + f.s(url64, 43)
	basic := base64.StdEncoding.EncodeToString([]byte("deploy:" + f.s(alnum, 14)))
	return []secretCase{
		c("aws-access-key-id", "export AWS_ACCESS_KEY_ID={S}", "AKIA"+f.s(upper, 16)),
		c("aws-credentials-file", "[default]\naws_secret_access_key = {S}\nregion = eu-west-1", f.s(b64, 40)),
		c("aws-session-token", "aws_session_token={S}", f.s(b64, 120)),
		c("github-pat", "git clone https://x:{S}@github.com/o/r", "ghp_"+f.s(alnum, 36)),
		c("github-pat-bare", "token is {S}, keep it", "ghp_"+f.s(alnum, 36)),
		c("github-fine-grained", "GH: {S}", "github_pat_"+f.s(alnum, 22)+"_"+f.s(alnum, 59)),
		c("github-oauth", "oauth {S}", "gho_"+f.s(alnum, 36)),
		c("gitlab-pat", "CI uses {S} today", "glpat-"+f.s(alnum, 20)),
		c("slack-bot-token", "slack: {S}", "xoxb-"+f.s("0123456789", 12)+"-"+f.s("0123456789", 13)+"-"+f.s(alnum, 24)),
		c("slack-user-token", "{S}", "xoxp-"+f.s("0123456789", 12)+"-"+f.s("0123456789", 12)+"-"+f.s("0123456789", 13)+"-"+f.s(hexLow, 32)),
		c("slack-webhook", "curl -X POST https://hooks.slack.com/services/{S} -d '{}'", "T"+f.s(upper, 8)+"/B"+f.s(upper, 10)+"/"+f.s(alnum, 24)),
		c("stripe-live", "stripe.api_key = {S}", "sk_live_"+f.s(alnum, 24)),
		c("stripe-restricted", "using {S} for refunds", "rk_live_"+f.s(alnum, 24)),
		c("google-api-key", "maps?key={S}&q=x", "AIza"+f.s(url64, 35)),
		c("google-api-key-bare", "GOOGLE {S}", "AIza"+f.s(url64, 35)),
		c("openai-key", "OPENAI: {S}", "sk-proj-"+f.s(url64, 48)),
		c("anthropic-key", "x-api-key: {S}", "sk-ant-api03-"+f.s(url64, 93)+"-"+f.s(url64, 6)+"AA"),
		c("jwt", "id_token {S}", jwt),
		c("jwt-in-cookie", "Set-Cookie: session={S}; Path=/", jwt),
		c("postgres-url", "DATABASE_URL=postgres://app:{S}@db.internal:5432/app", f.s(alnum, 16)),
		c("postgres-url-prose", "connecting to postgresql://admin:{S}@10.0.0.5/prod", f.s(alnum, 12)),
		c("mysql-url", "mysql://root:{S}@localhost/test", f.s(alnum, 10)),
		c("mongodb-srv", "mongodb+srv://svc:{S}@cluster0.abcd.mongodb.net/", f.s(alnum, 20)),
		c("redis-no-user", "redis://:{S}@cache:6379/0", f.s(alnum, 18)),
		c("amqp-url", "broker amqp://guest:{S}@rabbit/", f.s(alnum, 12)),
		c("authorization-basic", "> Authorization: Basic {S}", basic),
		c("authorization-bearer", `-H "Authorization: Bearer {S}"`, f.s(url64, 40)),
		c("authorization-token", "authorization: token {S}", f.s(hexLow, 40)),
		c("basic-bare", "curl with basic {S} failed", basic),
		c("yaml-password", "db:\n  password: \"{S}\"\n  user: app", "hunter2-"+f.s(alnum, 6)),
		c("yaml-password-bare", "password: {S}", f.s(alnum, 9)),
		c("env-api-key", "API_KEY={S}", f.s(alnum, 32)),
		c("env-secret-key", "DJANGO_SECRET_KEY='{S}'", f.s(alnum+"!@#%^&*", 50)),
		c("json-client-secret", `{"client_id":"abc","client_secret":"{S}"}`, f.s(alnum, 40)),
		c("toml-token", "[auth]\ntoken = \"{S}\"", f.s(alnum, 30)),
		c("python-password", "conn = connect(password='{S}')", "P"+f.s(alnum, 11)),
		c("flag-password", "psql --password {S} -h db", "Pw"+f.s(alnum, 10)),
		c("flag-api-token", "deploy --api-token={S}", f.s(alnum, 24)),
		c("curl-user", "curl -u admin:{S} https://api.example.com", "Pa55"+f.s(alnum, 8)),
		c("curl-user-long", "curl --user deploy:{S} https://x", f.s(alnum, 16)),
		c("pem-rsa", "key:\n"+rsa+"\n", rsaBody),
		c("pem-openssh", ssh, sshBody),
		c("pem-ec", "cat ec.pem\n"+ec, ecBody),
		c("pem-cut-off", "last output:\n"+cut, cut[len("-----BEGIN PRIVATE KEY-----\n"):]),
		c("pem-tail", tail, tailBody),
		c("npm-token", "//registry.npmjs.org/:_authToken={S}", "npm_"+f.s(alnum, 36)),
		c("pypi-token", "TWINE: {S}", "pypi-AgEIcHlwaS5vcmc"+f.s(url64, 60)),
		c("sendgrid", "SENDGRID {S}", "SG."+f.s(url64, 22)+"."+f.s(url64, 43)),
		c("digitalocean", "doctl auth init -t {S}", "dop_v1_"+f.s(hexLow, 64)),
		c("shopify", "shop token {S}", "shpat_"+f.s(hexLow, 32)),
		c("vault-token", "VAULT {S}", "hvs."+f.s(alnum, 90)),
		c("azure-storage", "DefaultEndpointsProtocol=https;AccountName=x;AccountKey={S};EndpointSuffix=core.windows.net", f.s(b64, 86)+"=="),
		c("docker-auth", `{"auths":{"ghcr.io":{"auth":"{S}"}}}`, base64.StdEncoding.EncodeToString([]byte("u:"+f.s(alnum, 20)))),
		c("pgpassword", "PGPASSWORD={S} psql", f.s(alnum, 14)),
		c("passphrase", "passphrase: {S}", f.s(alnum, 16)),
		c("private-key-field", `"private_key": "{S}"`, f.s(b64, 60)),
		// Digits under a PIN's name: the name alone says secret.
		c("pin-field", "PIN: {S}", "4"+f.s("0123456789", 5)),
		c("pin-env", "export SIM_PIN={S}", "7"+f.s("0123456789", 3)),
		c("pin-flag", "card-tool sign --pin {S} doc.pdf", "2"+f.s("0123456789", 5)),
	}
}

// lookAlikes must come out unchanged.
func lookAlikes() []string {
	return []string{
		"commit 3f2a9c1d7e5b40a1b2c3d4e5f60718293a4b5c6d",
		"abc1234 fix the parser",
		"merge of 9fceb02d0ae598e95dc970b74767f19372d61af8 and 7c2f1e0",
		"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"github.com/goccy/go-yaml v1.19.2 h1:2b1Wm2nOa5P5x7Fhn3Ocs6Ha0PGyk9k6yNDE+6lIbVY=",
		"request 123e4567-e89b-12d3-a456-426614174000 failed",
		"payload: aGVsbG8gd29ybGQsIHRoaXMgaXMgbm90IGEgc2VjcmV0",
		"TOKEN_LIMIT=4096",
		"max_tokens: 8192",
		`password: ""`,
		"password: ${DB_PASSWORD}",
		"API_KEY=$API_KEY",
		"token := next()",
		`if key == "x" {`,
		"KEYBOARD=us",
		"sort_key: created_at",
		`"input_tokens": 1234, "cache_read_input_tokens": 51234`,
		"Basic authentication is required",
		"pip install scikit-learn; import sk-learn",
		"postgres://localhost:5432/app",
		"https://example.com:8080/path?q=1",
		"git@github.com:org/repo.git",
		"mail alice@example.com",
		"Authorization: Bearer <token>",
		"password_file: /run/secrets/db",
		"secret_name: prod-db",
		"key_id: 1234",
		"apiKey := os.Getenv(\"API_KEY\")",
		"token = get_token()",
		"api_key = config.api_key",
		`"key": "phase-1"`,
		"tokenizer: bpe",
		"Token usage: 12,345",
		"2026-11-24T03:12:25.123456789Z",
		"released v8.30.1",
		"listening on [fe80::1]:8080",
		"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
		"**Key:** the handoff names the files",
		"key: value",
		"TOKEN=",
		"--token-file ~/.config/tok",
		"secret: none",
		"read /home/user/.ssh/id_ed25519.pub",
		"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl user@host",
		"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
		"the Authorization header is missing",
		"set GITHUB_TOKEN in CI",
		"password: ***",
		"sha512 cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e",
		"docker login --password-stdin -u deploy",
		"author: Jane Doe <jane@example.com>",
		"e2e test passed in 3.2s (ok github.com/debussy-dev/debussy/tests)",
		"Authorization: Basic <base64 of user:pass>",
		"access_token_ttl: 3600",
		`"session": 3, "restarts": 1, "tool": "Bash"`,
		"curl -u $USER:$PASS https://x",
		// pin as a word of a name, with a pin's number or a count: kept.
		"LED_PIN = 13",
		"gpio: {pin: 17, mode: out}",
		"pin_count: 4000",
		"pinned: 20240101",
		"mapping: 123456",
		"spinner_delay: 250000",
	}
}

func TestCorpus(t *testing.T) {
	r, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	secrets, looks := secretCorpus(), lookAlikes()
	if len(secrets) < 40 || len(looks) < 40 {
		t.Fatalf("corpus too small: %d secrets, %d look-alikes", len(secrets), len(looks))
	}
	caught, falsePos := 0, 0
	for _, c := range secrets {
		got := r.String(c.text)
		if leaked(got, c.secret) {
			t.Errorf("%s: secret survives:\n in: %q\nout: %q", c.family, c.text, got)
			continue
		}
		caught++
	}
	for _, s := range looks {
		if got := r.String(s); got != s {
			falsePos++
			t.Errorf("look-alike redacted by %v:\n in: %q\nout: %q", firing(r, s), s, got)
		}
	}
	recall := float64(caught) / float64(len(secrets))
	precision := 1.0
	if caught+falsePos > 0 {
		precision = float64(caught) / float64(caught+falsePos)
	}
	t.Logf("corpus: %d secret shapes, %d look-alikes; recall %.1f%% (%d/%d), precision %.1f%% (%d look-alikes redacted)",
		len(secrets), len(looks), 100*recall, caught, len(secrets), 100*precision, falsePos)
}

// leaked reports whether any 8-byte piece of secret is left in out (a
// secret cut in half is still a leak).
func leaked(out, secret string) bool {
	for _, line := range strings.Split(secret, "\n") {
		if len(line) <= 8 {
			if line != "" && strings.Contains(out, line) {
				return true
			}
			continue
		}
		for i := 0; i+8 <= len(line); i += 4 {
			if strings.Contains(out, line[i:i+8]) {
				return true
			}
		}
	}
	return false
}

// largeCorpus is the corpus bigInput sprinkles: a private key block cut
// short is redacted to the end of the text, by design; in a large input it
// would take the rest with it.
func largeCorpus() []secretCase {
	return slices.DeleteFunc(secretCorpus(), func(c secretCase) bool { return c.family == "pem-cut-off" })
}

// bigInput is n bytes of ordinary tool output (code, logs, hashes, JSON)
// with the corpus's secrets sprinkled through it, one every 997 lines, and
// the secrets it holds (all of them from about 3 MB).
func bigInput(n int) (string, []secretCase) {
	filler := []string{
		"ok  \tgithub.com/debussy-dev/debussy/checkpoint\t0.412s",
		"commit 3f2a9c1d7e5b40a1b2c3d4e5f60718293a4b5c6d",
		`{"type":"assistant","message":{"usage":{"input_tokens":1234,"output_tokens":56}}}`,
		"func (r *Redactor) String(s string) string { return s }",
		"TOKEN_LIMIT=4096 max_tokens: 8192 key: value",
		"request 123e4567-e89b-12d3-a456-426614174000 served in 12ms",
		"Authorization header missing; see https://example.com/docs",
	}
	secrets := largeCorpus()
	var b strings.Builder
	placed := 0
	for i := 0; b.Len() < n; i++ {
		if i%997 == 0 {
			b.WriteString(secrets[(i/997)%len(secrets)].text)
			placed++
		} else {
			b.WriteString(filler[i%len(filler)])
		}
		b.WriteByte('\n')
	}
	return b.String(), secrets[:min(placed, len(secrets))]
}

// TestLarge redacts 4 MB (1 MB under -race), about a thousand of the 4 KB
// chunks a rule looks at: every sprinkled secret goes, and the rest of
// the text is kept. Its speed is BenchmarkRedact's to report.
func TestLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("4 MB input")
	}
	// The size is for its many chunks, not its speed (BenchmarkRedact's,
	// up to 16 MB): at 16 MB it took 16 s of CPU in CI.
	size := 4 << 20
	if race.Enabled {
		size = 1 << 20
	}
	in, secrets := bigInput(size)
	if all := len(largeCorpus()); !race.Enabled && len(secrets) < all {
		t.Fatalf("the input holds %d of the corpus's %d secrets: make it larger", len(secrets), all)
	}
	out := Default().String(in)
	for _, c := range secrets {
		if leaked(out, c.secret) {
			t.Errorf("%s: secret survives in the large input", c.family)
		}
	}
	if n := strings.Count(out, "commit 3f2a9c1d7e5b40a1b2c3d4e5f60718293a4b5c6d\n"); n != strings.Count(in, "commit 3f2a9c1d7e5b40a1b2c3d4e5f60718293a4b5c6d\n") {
		t.Errorf("look-alike lines lost: %d left", n)
	}
}

func BenchmarkRedact(b *testing.B) {
	for _, size := range []int{4 << 10, 1 << 20, 16 << 20} {
		in, _ := bigInput(size)
		r := Default()
		b.Run(byteSize(size), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				r.String(in)
			}
		})
	}
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return strconv.Itoa(n>>20) + "MB"
	default:
		return strconv.Itoa(n>>10) + "KB"
	}
}

// The embedded rules file is gitleaks' own, unedited: a change goes through
// scripts/update-gitleaks-rules, which updates the checksum too.
func TestGitleaksRulesPinned(t *testing.T) {
	sum := sha256.Sum256(gitleaksTOML)
	if got := hex.EncodeToString(sum[:]); got != gitleaksSHA256 {
		t.Fatalf("secrets/gitleaks.toml has sha256 %s, want %s (gitleaks %s): run scripts/update-gitleaks-rules", got, gitleaksSHA256, GitleaksVersion)
	}
	rules, _, err := loadGitleaks()
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) < 200 {
		t.Errorf("%d gitleaks rules loaded, want 200 or more", len(rules))
	}
}

// Regexps compile on first use (lazyRE): one that cannot compile fails
// here, not in a run. compiled() makes the rules' regexps; the package's
// own exist from init.
func TestRegexpsCompile(t *testing.T) {
	if _, err := compiled(); err != nil {
		t.Fatal(err)
	}
	allLazy.Lock()
	res := slices.Clone(allLazy.res)
	allLazy.Unlock()
	if len(res) < 300 {
		t.Fatalf("%d regexps made, want the package's and every rule's (300 or more)", len(res))
	}
	for _, re := range res {
		if _, err := regexp.Compile(re.src); err != nil {
			t.Errorf("%q: %v", re.src, err)
		}
	}
}
