package secrets

import (
	"bufio"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// gitleaksSample is one rule's samples, as scripts/update-gitleaks-samples
// records them from gitleaks' own rule sources: each true positive with
// the secrets gitleaks finds in it, and the false positives.
type gitleaksSample struct {
	Rule   string `json:"rule"`
	Scoped bool   `json:"path_scoped"`
	TPs    []struct {
		Text    string   `json:"text"`
		Path    string   `json:"path"`
		Secrets []string `json:"secrets"`
	} `json:"tps"`
	FPs []struct {
		Text string `json:"text"`
		Path string `json:"path"`
	} `json:"fps"`
}

// gitleaksSkipped: rules whose samples debussy does not hold itself to,
// and why.
var gitleaksSkipped = map[string]string{}

// redactedOnPurpose: gitleaks' false positives for one provider's rule
// that debussy redacts as secrets of another kind, each with the reason.
// A false positive redacted that is not listed here fails the test.
var redactedOnPurpose = []struct{ rule, contains, why string }{
	{"artifactory-api-key", "wrongStart :=", "a long random value in an assignment (the random-token rule), whatever its name"},
	{"artifactory-reference-token", "wrongStart :=", "a long random value in an assignment"},
	{"etsy-access-token", "SetSysctl =", "a long random value in an assignment"},
	{"okta-access-token", "rookTable =", "a long random value in an assignment"},
	{"sumologic-access-token", "sumOfExposures =", "a long random value in an assignment"},
	{"stripe-access-token", "nonMatchingToken :=", "a long random value (task_test_ and 30 random characters) under a token's name"},
	{"settlemint-application-access-token", "nonMatchingToken :=", "a literal assigned to a token's name with Go's := (a hardcoded token, SettleMint's or not)"},
	{"azure-ad-client-secret", "CloudFront-Signature:", "a signed URL's signature grants access, as a SAS sig= does"},
	{"flyio-access-token", "signature\":", "a signature grants access"},
	{"flyio-access-token", "authenticity_token", "a CSRF token is a credential while its session lasts"},
	{"generic-api-key", "csrf-token=", "a CSRF token is a credential while its session lasts"},
	{"mailchimp-api-key", "token: 3012a5754bbd", "a generated value under the name token, Mailchimp's or not"},
	{"generic-api-key", "apiKey:\"6fe4476ee5a1", "32 hex characters under the name apiKey: many API keys are hex"},
	{"generic-api-key", "primaryKey=", "a generated value under primaryKey (an Azure Cosmos DB or Service Bus key's name)"},
	{"generic-api-key", "keyVaultToStoreSecrets:", "a value under a name ending in Secrets"},
	{"sumologic-access-token", "SUMO_ACCESS_KEY: AbCeFG123", "a value under an access key's name"},
	{"telegram-bot-api-token", "telegram_api_token = ", "a value under the name telegram_api_token, a Telegram token or not"},
	{"anthropic-api-key", "sk-ant-", "debussy's sk- rule takes any sk- key of 16 characters or more, a fake-looking body too"},
	{"anthropic-admin-api-key", "sk-ant-", "debussy's sk- rule takes any sk- key of 16 characters or more, a fake-looking body too"},
	{"aws-access-token", "AKIAIOSFODNN7EXAMPLE", "AWS's documentation key: debussy redacts what has a key id's shape"},
	{"generic-api-key", "type=secret,id=jfrog_secret", "debussy runs generic-api-key at each of its keywords, not only at gitleaks' leftmost matches"},
	{"generic-api-key", "chain_Anvil1_Key, chain_Anvil2_Key", "debussy runs generic-api-key at each of its keywords, not only at gitleaks' leftmost matches"},
}

func onPurpose(rule, text string) string {
	for _, o := range redactedOnPurpose {
		if o.rule == rule && strings.Contains(text, o.contains) {
			return o.why
		}
	}
	return ""
}

func loadGitleaksSamples(t *testing.T) []gitleaksSample {
	t.Helper()
	f, err := os.Open("testdata/gitleaks-samples.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []gitleaksSample
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var s gitleaksSample
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("read gitleaks samples: %v", err)
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGitleaksSamples runs every sample gitleaks keeps next to its rules
// (scripts/update-gitleaks-samples extracts them at GitleaksVersion), twice:
//
//   - each rule as debussy compiles it, alone, as gitleaks validates it:
//     it finds every true positive and no false positive (keywords,
//     entropy, groups and allowlists applied as gitleaks applies them);
//   - the whole redactor: every secret gitleaks finds in a true positive
//     is redacted, and a false positive comes out unchanged, unless
//     another of gitleaks' rules takes it for a secret (one rule's false
//     positive is often the next one's shape: "cloudflare_api_key = …"
//     is not a Cloudflare global key but is an API key).
func TestGitleaksSamples(t *testing.T) {
	r, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*rule{}
	for i := range r.rules {
		byID[r.rules[i].id] = &r.rules[i]
	}
	flaggedBy := func(text string) []string {
		var ids []string
		for i := range r.rules {
			ru := &r.rules[i]
			if strings.HasPrefix(ru.id, "gitleaks:") && alone(r, ru, text) {
				ids = append(ids, ru.id)
			}
		}
		return ids
	}
	samples := loadGitleaksSamples(t)
	if len(samples) < 200 {
		t.Fatalf("%d rules' samples, want 200 or more: run scripts/update-gitleaks-samples", len(samples))
	}
	var tps, caught, fps, kept, others, purpose, skipped int
	for _, s := range samples {
		if s.Scoped {
			skipped++
			n := 0
			for _, tp := range s.TPs {
				// Their secrets hold the name (password: …): judge the value.
				value := func(sec string) string {
					if i := strings.LastIndex(sec, ": "); i >= 0 {
						return strings.Trim(strings.TrimSpace(sec[i+2:]), `"'|>`+"\n ")
					}
					return sec
				}
				if got := r.String(tp.Text); got != tp.Text && !slices.ContainsFunc(tp.Secrets, func(sec string) bool { return leakedFrom(tp.Text, got, value(sec)) }) {
					n++
				}
			}
			t.Logf("%s skipped: scoped to file paths, and redaction sees text, not files (see loadGitleaks); its text alone is redacted in %d of %d samples", s.Rule, n, len(s.TPs))
			continue
		}
		if why, ok := gitleaksSkipped[s.Rule]; ok {
			skipped++
			t.Logf("%s skipped: %s", s.Rule, why)
			continue
		}
		ru := byID["gitleaks:"+s.Rule]
		if ru == nil {
			t.Errorf("%s: no such rule in secrets/gitleaks.toml", s.Rule)
			continue
		}
		for _, tp := range s.TPs {
			tps++
			if !alone(r, ru, tp.Text) {
				t.Errorf("%s: rule misses its true positive %q", s.Rule, tp.Text)
			}
			got := r.String(tp.Text)
			ok := got != tp.Text
			for _, sec := range tp.Secrets {
				if leakedFrom(tp.Text, got, sec) {
					ok = false
				}
			}
			if !ok {
				t.Errorf("%s: true positive survives:\n in: %q\nout: %q", s.Rule, tp.Text, got)
				continue
			}
			caught++
		}
		for _, fp := range s.FPs {
			fps++
			if alone(r, ru, fp.Text) {
				t.Errorf("%s: rule flags its false positive %q", s.Rule, fp.Text)
				continue
			}
			got := r.String(fp.Text)
			if got == fp.Text {
				kept++
				continue
			}
			if ids := flaggedBy(fp.Text); len(ids) > 0 {
				others++
				continue
			}
			if why := onPurpose(s.Rule, fp.Text); why != "" {
				purpose++
				continue
			}
			t.Errorf("%s: false positive redacted by %v:\n in: %q\nout: %q", s.Rule, firing(r, fp.Text), fp.Text, got)
		}
	}
	t.Logf("gitleaks %s samples: %d rules (%d skipped); true positives redacted %d/%d (%.1f%%); false positives kept %d/%d, %d more are another gitleaks rule's secret, %d redacted on purpose (listed), %d redacted unlisted",
		GitleaksVersion, len(samples), skipped, caught, tps, 100*float64(caught)/float64(max(1, tps)), kept, fps, others, purpose, fps-kept-others-purpose)
}

// leakedFrom is leaked for a secret in text in: a piece of the secret is
// a leak only if out holds it more often than in does outside the secret
// (a rubygems_ prefix that the name rubygemsToken repeats is not).
func leakedFrom(in, out, secret string) bool {
	rest := strings.ReplaceAll(in, secret, Redacted)
	for _, line := range strings.Split(secret, "\n") {
		for i := 0; i == 0 || i+8 <= len(line); i += 4 {
			piece := line[i:min(len(line), i+8)]
			if piece != "" && strings.Count(out, piece) > strings.Count(rest, piece) {
				return true
			}
		}
	}
	return false
}

// alone reports whether rule ru by itself finds a secret in text, as
// gitleaks runs one rule: only when one of its keywords occurs.
func alone(r *Redactor, ru *rule, text string) bool {
	return ru.hit(asciiLower(text)) && len(r.find(ru, text, 0, nil)) > 0
}

// firing lists the rules that find a secret in text.
func firing(r *Redactor, text string) []string {
	var ids []string
	for i := range r.rules {
		if alone(r, &r.rules[i], text) {
			ids = append(ids, r.rules[i].id)
		}
	}
	return ids
}
