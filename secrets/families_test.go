package secrets

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// familyCorpus is two sets of shapes per family of the issue-26 round:
// the shapes the issue names (rendered here with fake values), and
// held-out shapes of the same families that no rule was written from —
// other tools, other vendors, other files — to check that the rules
// generalize rather than list examples.
func familyCorpus() (named, heldOut []secretCase) { return familyCorpusSeed(26) }

func familyCorpusSeed(seed uint64) (named, heldOut []secretCase) {
	f := faker{rand.New(rand.NewPCG(seed, 2026))}
	c := func(family, format, secret string) secretCase {
		return secretCase{family, strings.ReplaceAll(format, "{S}", secret), secret}
	}
	pw := func() string { return f.s(alnum, 6) + "!" + f.s(alnum, 7) }
	tok := func(n int) string { return f.s(alnum, n) }
	pemBody := func() string {
		b := ""
		for range 5 {
			b += f.s(b64, 64) + "\n"
		}
		return b
	}
	telegram := f.s("0123456789", 10) + ":AA" + f.s(url64, 33)
	discord := base64.RawStdEncoding.EncodeToString([]byte("1"+f.s("0123456789", 17))) + "." + f.s(url64, 6) + "." + f.s(url64, 38)
	kube := f.s("abcdefghijklmnopqrstuvwxyz", 1) + f.s("abcdefghijklmnopqrstuvwxyz0123456789", 5) + "." + f.s("abcdefghijklmnopqrstuvwxyz", 1) + f.s("abcdefghijklmnopqrstuvwxyz0123456789", 15)
	dockercfg := base64.StdEncoding.EncodeToString([]byte(`{"auths":{"registry.example.io":{"username":"ci","password":"` + tok(20) + `","auth":"` + tok(28) + `"}}}`))
	b64key := base64.StdEncoding.EncodeToString([]byte("-----BEGIN OPENSSH PRIVATE KEY-----\n" + pemBody() + "-----END OPENSSH PRIVATE KEY-----\n"))
	named = []secretCase{
		c("docker-login-p", "docker login -u ci -p {S} registry.example.io", pw()),
		c("mysql-p-attached", "mysql -h db -u root -p{S} app < dump.sql", pw()),
		c("sshpass", "sshpass -p '{S}' ssh deploy@10.0.0.4", pw()),
		c("redis-cli-a", "redis-cli -h cache -a {S} ping", tok(24)),
		c("keytool-storepass", "keytool -importcert -keystore ks.jks -storepass {S} -file ca.pem", pw()),
		c("openssl-passout", "openssl pkcs12 -export -in c.pem -out c.p12 -passout pass:{S}", pw()),
		c("ldapsearch-w", `ldapsearch -x -D "cn=admin,dc=ex,dc=org" -w {S} -b dc=ex,dc=org`, pw()),
		c("smbclient-U", `smbclient //fs/share -U 'CORP\svc%{S}'`, pw()),
		c("sqlcmd-P", "sqlcmd -S tcp:db,1433 -U sa -P {S} -Q 'select 1'", pw()),
		c("netrc", "machine api.example.com login deploy password {S}", tok(32)),
		c("netrc-lines", "machine git.example.com\n  login ci\n  password {S}\n", tok(32)),
		c("pgpass", "db.internal:5432:app:app_user:{S}", pw()),
		c("oracle-thin", "jdbc:oracle:thin:scott/{S}@db.example.com:1521/ORCL", pw()),
		c("telegram-url", "curl https://api.telegram.org/bot{S}/sendMessage -d chat_id=1", telegram),
		c("dockerconfigjson", "  .dockerconfigjson: {S}", dockercfg),
		c("csv-iam", "User name,Password,Access key ID,Secret access key,Console login link\nci,{S},AKIA"+f.s(upper, 16)+","+tok(40)+",https://x.signin.aws.amazon.com/console", pw()),
		c("authorization-bot", "Authorization: Bot {S}", discord),
		c("authorization-ssws", "Authorization: SSWS {S}", "00"+f.s(url64, 40)),
		c("cookie-sessionid", "Cookie: sessionid={S}; csrftoken="+tok(32), f.s("abcdefghijklmnopqrstuvwxyz0123456789", 32)),
		c("sas-sig", "https://acct.blob.core.windows.net/c/f?sv=2022-11-02&ss=b&srt=o&sp=r&se=2027-01-01&sig={S}", tok(30)+"%2B"+tok(12)+"%3D"),
		c("smtp-pass", "SMTP_PASS={S}", pw()),
		c("pat-suffix", "AZURE_DEVOPS_PAT={S}", f.s("abcdefghijklmnopqrstuvwxyz0123456789", 52)),
		c("ya29", "access token: {S}", "ya29."+f.s(url64, 120)),
		c("doppler-st", "DOPPLER: {S}", "dp.st.prd."+tok(40)),
		c("whsec-prose", "the webhook secret is {S} for now", "whsec_"+tok(32)),
		c("telegram-bare", "bot token {S}", telegram),
		c("discord-bare", "discord {S}", discord),
		c("kubeadm", "kubeadm join 10.0.0.1:6443 --token {S} --discovery-token-ca-cert-hash sha256:"+f.s(hexLow, 64), kube),
		c("ppk", "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: k\nPublic-Lines: 2\n"+f.s(b64, 64)+"\n"+f.s(b64, 20)+"\nPrivate-Lines: 1\n{S}\nPrivate-MAC: "+f.s(hexLow, 64), f.s(b64, 44)),
		c("base64-private-key", "key_b64: {S}", b64key),
		c("pkcs8", "-----BEGIN PRIVATE KEY-----\n{S}-----END PRIVATE KEY-----", pemBody()),
		c("pkcs8-encrypted", "-----BEGIN ENCRYPTED PRIVATE KEY-----\n{S}-----END ENCRYPTED PRIVATE KEY-----", pemBody()),
		c("pgp", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{S}=abcd\n-----END PGP PRIVATE KEY BLOCK-----", pemBody()),
	}
	heldOut = []secretCase{
		// password flags of other tools
		c("podman-login-p", "podman login quay.io -u bot -p {S}", pw()),
		c("mariadb-dump-p", "mariadb-dump -uadmin -p{S} --all-databases", pw()),
		c("mongosh-p", "mongosh 'mongodb://db:27017/admin' -u root -p {S}", pw()),
		c("ipmitool-P", "ipmitool -I lanplus -H 10.1.1.9 -U ADMIN -P {S} chassis status", pw()),
		c("plink-pw", "plink -ssh admin@switch -pw {S} show run", pw()),
		c("jarsigner-keypass", "jarsigner -keystore rel.jks -storepass {S} app.apk release", pw()),
		c("apksigner-ks-pass", "apksigner sign --ks rel.jks --ks-pass pass:{S} app.apk", pw()),
		c("openssl-passin", "openssl rsa -in k.pem -passin pass:{S} -out plain.pem", pw()),
		c("zip-P", "zip -r -P {S} backup.zip data/", pw()),
		c("7z-p", "7z a -p{S} -mhe=on secret.7z docs/", pw()),
		c("htpasswd-b", "htpasswd -b -c /etc/nginx/.htpasswd admin {S}", pw()),
		c("rabbitmqctl", "rabbitmqctl add_user app {S}", pw()),
		c("xfreerdp", "xfreerdp /v:10.0.0.7 /u:Administrator /p:{S} /cert:ignore", pw()),
		c("net-use", `net use Z: \\fs01\share {S} /user:CORP\svc`, pw()),
		c("helm-repo-password", "helm repo add int https://charts.example.io --username ci --password {S}", pw()),
		c("wget-password", "wget --user=ci --password={S} https://files.example.io/a.tgz", pw()),
		c("ssh-keygen-N", "ssh-keygen -t ed25519 -N {S} -f ~/.ssh/deploy", pw()),
		c("securestring", `$pw = ConvertTo-SecureString "{S}" -AsPlainText -Force`, pw()),
		c("echo-stdin", "echo {S} | docker login ghcr.io -u bot --password-stdin", "ghp_"+tok(36)),
		// credential files and connection strings
		c("netrc-default", "default login anonymous password {S}", pw()),
		c("pgpass-star", "*:*:*:replicator:{S}", pw()),
		c("sqlplus", "sqlplus -s system/{S}@//db.example.com:1521/XEPDB1", pw()),
		c("ezconnect", "expdp hr/{S}@orclpdb directory=dp dumpfile=hr.dmp", pw()),
		c("csv-export", "name,url,username,password\ngithub,https://github.com,me,{S}\n", pw()),
		c("csv-tokens", "service,api_token,owner\nbilling,{S},ops\n", tok(40)),
		c("url-path-webhook", "POST https://discord.com/api/webhooks/123456789012345678/{S}", f.s(url64, 68)),
		c("url-query-token", "GET https://api.example.io/v1/export?format=csv&access_token={S}", tok(40)),
		c("url-query-amz", "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Security-Token={S}&X-Amz-Signature="+f.s(hexLow, 64), f.s(b64, 80)),
		c("url-token-user", "git clone https://{S}@git.example.com/org/repo.git", "glpat-"+f.s(url64, 20)),
		c("base64-json-cred", "GOOGLE_CREDENTIALS_B64={S}", base64.StdEncoding.EncodeToString([]byte(`{"type":"service_account","private_key":"-----BEGIN PRIVATE KEY-----\nMIIE`+tok(40)+`\n-----END PRIVATE KEY-----\n","client_email":"x@y.iam.gserviceaccount.com"}`))),
		// headers and cookies
		c("authorization-custom", `-H "Authorization: GenieKey {S}"`, f.s(hexLow, 8)+"-"+f.s(hexLow, 4)+"-"+f.s(hexLow, 4)+"-"+f.s(hexLow, 4)+"-"+f.s(hexLow, 12)),
		c("authorization-hmac", "Authorization: HMAC-SHA256 Credential="+tok(20)+"&Signature={S}", f.s(b64, 43)+"="),
		c("proxy-authorization", "Proxy-Authorization: Negotiate {S}", f.s(b64, 60)),
		c("set-cookie", "Set-Cookie: __Host-session={S}; Path=/; Secure; HttpOnly; SameSite=Lax", f.s(url64, 43)),
		c("curl-cookie", "curl -b 'PHPSESSID={S}' https://shop.example.com/cart", f.s("abcdefghijklmnopqrstuvwxyz0123456789", 26)),
		c("cookie-jwt", `"Cookie": "theme=dark; auth={S}"`, "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI"+tok(30)+"."+f.s(url64, 43)),
		c("header-private-token", "PRIVATE-TOKEN: {S}", tok(20)),
		// names the keyword list lacked
		c("mail-pass", "MAIL_PASS={S}", pw()),
		c("ldap-bind-pw", "LDAP_BIND_PW: {S}", pw()),
		c("camel-pass", "smtpPass: '{S}'", pw()),
		c("gitlab-pat-env", "GITLAB_PAT={S}", tok(26)),
		c("jwt-name", "SERVICE_JWT={S}", tok(48)),
		c("mnemonic", `WALLET_MNEMONIC="{S}"`, "abandon ability able about above absent absorb abstract absurd abuse access accident"),
		c("random-in-assignment", "export BUILDKITE_AGENT_CONFIG={S}", tok(40)),
		c("random-in-flag", "./deploy --signing-material {S} --env prod", tok(44)),
		c("random-in-header", "X-Relay-Credential: {S}", tok(36)),
		// vendor prefixes
		c("google-refresh", "refresh: {S}", "1//0"+f.s(url64, 60)),
		c("google-client-secret", "client secret {S} (web app)", "GOCSPX-"+f.s(url64, 28)),
		c("doppler-ct", "{S}", "dp.ct."+tok(40)),
		c("docker-hub-pat", "token {S}", "dckr_pat_"+f.s(url64, 27)),
		c("tailscale", "TS: {S}", "tskey-auth-"+tok(12)+"-"+tok(30)),
		c("groq", "using {S}", "gsk_"+tok(52)),
		c("replicate", "r8 {S}", "r8_"+tok(37)),
		c("langsmith", "LANGCHAIN {S}", "lsv2_pt_"+f.s(hexLow, 32)+"_"+f.s(hexLow, 10)),
		c("supabase", "supabase {S}", "sbp_"+f.s(hexLow, 40)),
		c("kubeadm-list", "TOKEN                     TTL         EXPIRES\n{S}   23h         2026-11-26T18:40:39Z", kube),
		c("az-login-p", "az login --service-principal -u http://app -p {S} --tenant t", tok(34)),
		c("openssl-k", "openssl enc -aes-256-cbc -salt -in a -out a.enc -k {S}", pw()),
		c("maven-settings", "<server>\n  <id>nexus</id>\n  <username>ci</username>\n  <password>{S}</password>\n</server>", pw()),
		c("php-define", "define('DB_PASSWORD', '{S}');", pw()),
		c("php-array", "'password' => '{S}',", pw()),
		c("vault-table", "Key         Value\n---         -----\npassword    {S}\nusername    app", pw()),
		c("teams-webhook", "https://org.webhook.office.com/webhookb2/"+f.s(hexLow, 8)+"-"+f.s(hexLow, 4)+"-"+f.s(hexLow, 4)+"-"+f.s(hexLow, 4)+"-"+f.s(hexLow, 12)+"/IncomingWebhook/{S}/x", f.s(hexLow, 32)),
		c("mailgun", "MG {S} sending", "key-"+f.s("abcdefghijklmnopqrstuvwxyz0123456789", 32)),
		c("query-private-token", "https://gitlab.example.com/api/v4/projects?private_token={S}&per_page=100", tok(20)),
		c("subscription-key", "Ocp-Apim-Subscription-Key: {S}", f.s(hexLow, 32)),
		c("sudo-S", "echo '{S}' | sudo -S systemctl restart app", pw()),
		c("snmpwalk", "snmpwalk -v3 -l authPriv -u mon -a SHA -A {S} -x AES -X "+pw()+" 10.0.0.1", pw()),
		c("wpa-psk", `network={ ssid="office" psk="{S}" }`, pw()),
		c("docker-creds", "DOCKER_CREDS={S}", "ci:"+pw()),
		c("nuget-key", "dotnet nuget push p.nupkg -k {S} -s https://api.nuget.org/v3/index.json", "oy2"+f.s("abcdefghijklmnopqrstuvwxyz0123456789", 43)),
		c("fcm", "server key {S}", "AAAA"+f.s(url64, 7)+":APA91b"+f.s(url64, 134)),
		c("nuget-config", `<packageSourceCredentials><feed><add key="Username" value="ci" /><add key="ClearTextPassword" value="{S}" /></feed></packageSourceCredentials>`, pw()),
		c("spring-property", `<property name="db.password" value="{S}"/>`, pw()),
		c("k8s-secret-zeros", "data:\n  password: {S}", "AAAAAAAAAAC7"+f.s(b64, 60)+"="),
		c("md-inline-code", "- DB password: `{S}` (from vault)", pw()),
		c("md-bold", "**API token:** {S}", tok(32)),
		c("md-table", "| name | value |\n|---|---|\n| smtp_password | {S} |", pw()),
		// blocks
		c("pem-dsa", "-----BEGIN DSA PRIVATE KEY-----\n{S}-----END DSA PRIVATE KEY-----", pemBody()),
		c("ppk-v2", "PuTTY-User-Key-File-2: ssh-rsa\nEncryption: aes256-cbc\nPublic-Lines: 1\n"+f.s(b64, 40)+"\nPrivate-Lines: 3\n{S}Private-MAC: "+f.s(hexLow, 40), f.s(b64, 64)+"\n"+f.s(b64, 64)+"\n"+f.s(b64, 30)+"\n"),
		c("base64-pgp", "PGP_KEY={S}", base64.StdEncoding.EncodeToString([]byte("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"+pemBody()+"-----END PGP PRIVATE KEY BLOCK-----\n"))),
	}
	return named, heldOut
}

// familyLookAlikes are the look-alikes of the issue-26 round, named and
// held out: hashes, UUIDs, cache keys, digests, names that hold no secret.
func familyLookAlikes() []string {
	return []string{
		// named in the issue
		"key: node-modules-Linux-9f86d081884c7d659a2feaa0c55ad015a3bf4f1b4b0b822cd15d6c15b0f00a08",
		"Idempotency-Key: 5f0c2e4a-8b1d-4c3e-9a7f-1e2d3c4b5a69",
		`"KeyId": "0b7e3f1a-2c4d-4e5f-8a9b-0c1d2e3f4a5b"`,
		"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=[redacted]",
		// held out
		"cache-key: gradle-Linux-2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
		"X-Request-Id: 7d3e1f4a-9b2c-4d5e-8f6a-1b2c3d4e5f6a",
		"ETag: \"33a64df551425fcc55e4d42a148795d9f25f89d4\"",
		"integrity: sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
		"image: ghcr.io/org/app@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"docker pull redis:7.2-alpine && docker run -p 6379:6379 redis",
		"ssh -p 2222 deploy@host",
		"mysql -h db -u root -p app",
		"redis-cli -a $REDIS_PASSWORD ping",
		"openssl pkcs12 -export -passout env:P12_PASS -out c.p12",
		"keytool -list -keystore ks.jks -storepass:file pw.txt",
		"traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"https://docs.example.com/guides/getting-started/AbstractSingletonProxyFactoryBean",
		"machine github.com login me password $GITHUB_TOKEN",
		"Cookie: theme=dark; lang=en-US; tz=Europe/Paris",
		"Authorization: Bearer ${TOKEN}",
		"KUBECONFIG=/home/ci/.kube/config",
		"GOFLAGS=-mod=mod -trimpath",
		"BUILD_ID=20261125.4",
		"grep -r 'password' src/ | wc -l",
		"commitHash: 3f2a9c1d7e5b40a1b2c3d4e5f60718293a4b5c6d",
		"checksum: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b4b0b822cd15d6c15b0f00a08",
		"https://www.youtube.com/watch?v=dQw4w9WgXcQ",
		"user:pass@ is a placeholder in the docs",
		"sha1: da39a3ee5e6b4b0d3255bfef95601890afd80709",
		"X-Amz-Cf-Id: 8Rz0yGhLqJDKdy7mEvL5f8n0n3QPs7xMqkX9Vw2hTbYc1A4uFe6Zgg==",
		"session_id=8f14e45f-ceea-467f-a0e6-8e8c6b0d6f5e",
		"--password-file=/run/secrets/db_password",
		"request_id: 01HF7Y8ZK3Q4W5E6R7T8Y9U0IP",
		"token_type: bearer",
		"go: downloading golang.org/x/crypto v0.31.0",
		"Restored cache with key: npm-cache-Linux-x64-3b5d5c3712955042212316173ccf37be800a2ed1c2fd4c3f7e0b2f6e1b8d9a0c",
		`"sha": "a94a8fe5ccb19ba61c4c0873d391e987982fbbd3"`,
		"passed 12 tests; the password reset flow is covered",
		"ED25519 key fingerprint is SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s.",
		"host key: AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
		"https://auth.example.com/authorize?response_type=code&client_id=web&state=Zk3pQ8vR2mX7nL4wT9yB6cJ1&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
		"secret_arn: arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-AbCdEf",
		"auth_method: oauth",
		`"kid": "2024-11-rsa-signing"`,
		"sort_key: created_at; partition_key: tenant_id",
		"token: ${{ secrets.GITHUB_TOKEN }}",
		"GPG key ID: 3AA5C34371567BD2",
		"Content-MD5: 1B2M2Y8AsgTpgAmY7PhCfg==",
		// code the agent reads: aligned struct fields, field accesses, calls
		"Tokens   int64",
		`PermissionBypass      = "bypassPermissions"`,
		"return plans.Options{Root: ws.Root, StrictGates: ws.Config.StrictGates}",
		"r, n := utf8.DecodeRuneInString(path)",
		`key, flag = "tokens", "--budget-tokens"`,
		`"context-max-tokens":  &cfg.ContextMaxTokens,`,
	}
}

// TestFamilies: every named and held-out shape is caught, and every
// look-alike kept; the log reports recall and precision per set.
func TestFamilies(t *testing.T) {
	r := Default()
	named, heldOut := familyCorpus()
	caughtAll := 0
	for _, set := range []struct {
		name  string
		cases []secretCase
	}{{"named", named}, {"held-out", heldOut}} {
		caught := 0
		for _, c := range set.cases {
			got := r.String(c.text)
			if leaked(got, c.secret) {
				t.Errorf("%s %s: secret survives:\n in: %q\nout: %q", set.name, c.family, c.text, got)
				continue
			}
			caught++
		}
		caughtAll += caught
		t.Logf("%s families: recall %.1f%% (%d/%d)", set.name, 100*float64(caught)/float64(len(set.cases)), caught, len(set.cases))
	}
	redacted := 0
	looks := familyLookAlikes()
	for _, s := range looks {
		if got := r.String(s); got != s {
			redacted++
			t.Errorf("look-alike redacted by %v:\n in: %q\nout: %q", firing(r, s), s, got)
		}
	}
	t.Logf("family look-alikes: %d/%d redacted; precision %.1f%% (%d shapes caught, %d look-alikes redacted)",
		redacted, len(looks), 100*float64(caughtAll)/float64(max(1, caughtAll+redacted)), caughtAll, redacted)
}

// TestFamiliesEverywhere: each family shape goes wherever debussy writes
// it — a JSON event's string, a checkpoint's fenced handoff, debussy
// logs' indented lines written one by one, a report's field.
func TestFamiliesEverywhere(t *testing.T) {
	named, heldOut := familyCorpus()
	all := append(append(named, heldOut...), secretCorpus()...)
	places := map[string]func(string) string{
		"events.jsonl": func(s string) string {
			doc, _ := json.Marshal(map[string]any{"event": "gate", "output": s})
			var back map[string]string
			_ = json.Unmarshal(Default().JSON(doc), &back)
			return back["output"]
		},
		"checkpoint.md": func(s string) string { return Default().String("## Handoff\n\n```\n" + s + "\n```\n") },
		"debussy logs": func(s string) string {
			var out bytes.Buffer
			b := NewBlockWriter(&out)
			for _, l := range strings.Split(s, "\n") {
				b.Write([]byte("  " + l + "\n"))
			}
			_ = b.Flush()
			_ = b.Close()
			return out.String()
		},
		"report": func(s string) string {
			v := &struct{ Output []string }{[]string{s}}
			Default().Value(v)
			return v.Output[0]
		},
	}
	for place, redact := range places {
		caught := 0
		for _, c := range all {
			if got := redact(c.text); leaked(got, c.secret) {
				t.Errorf("%s: %s survives:\n in: %q\nout: %q", place, c.family, c.text, got)
				continue
			}
			caught++
		}
		t.Logf("%s: recall %.1f%% (%d/%d)", place, 100*float64(caught)/float64(len(all)), caught, len(all))
	}
}

// TestFamiliesValues renders the family corpus with 40 other sets of fake
// values: a rule that holds for one random value by luck fails here.
func TestFamiliesValues(t *testing.T) {
	r := Default()
	missed := map[string]int{}
	total, caught := 0, 0
	for seed := uint64(100); seed < 140; seed++ {
		named, heldOut := familyCorpusSeed(seed)
		for _, c := range append(named, heldOut...) {
			total++
			if leaked(r.String(c.text), c.secret) {
				missed[c.family]++
				continue
			}
			caught++
		}
	}
	for fam, n := range missed {
		t.Errorf("%s: leaked with %d of 40 value sets", fam, n)
	}
	t.Logf("family corpus over 40 value sets: recall %.2f%% (%d/%d)", 100*float64(caught)/float64(total), caught, total)
}
