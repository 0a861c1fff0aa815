package secrets

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// A secret's name in the languages people write configs, labels and
// messages in: the roots of "password", "key", "token", "secret" and
// "credentials", as stems so that inflected forms match (пароля, паролем;
// hasła; salasanasi; anahtarı), matched in text folded with Unicode case
// (ПАРОЛЬ, ŞİFRE, CONTRASEÑA) at a word's start — or inside a word for
// the languages that compound (Zugangsschlüssel, Datenbankpasswort).

// rootKind is what a root names.
type rootKind uint8

const (
	rootPassword rootKind = iota + 1 // a password: any value under it
	rootSecret                       // a secret, a token, a credential
	rootKey                          // a key: a secret key, or a key of something else
)

type nameRoot struct {
	stem   string // folded (foldLower)
	inWord bool   // may close a compound word
	kind   rootKind
}

// foreignStems are the roots of other languages than English.
var foreignStems = []nameRoot{
	// German, Dutch, Scandinavian, Finnish, Hungarian compound.
	{"passwort", true, rootPassword}, {"kennwort", true, rootPassword}, {"schlüssel", true, rootKey}, {"schluessel", true, rootKey},
	{"zugangsdaten", true, rootSecret}, {"geheimnis", false, rootSecret},
	{"wachtwoord", true, rootPassword}, {"sleutel", true, rootKey},
	{"lösenord", true, rootPassword}, {"losenord", true, rootPassword}, {"nyckel", true, rootKey}, {"passord", true, rootPassword},
	{"adgangskode", true, rootPassword}, {"nøgle", true, rootKey}, {"nøkkel", true, rootKey},
	{"salasan", true, rootPassword}, {"avain", true, rootKey}, {"avaim", true, rootKey},
	{"jelsz", true, rootPassword}, {"kulcs", true, rootKey},
	// Romance languages.
	{"mot de passe", false, rootPassword}, {"mot-de-passe", false, rootPassword}, {"clé", false, rootKey}, {"clef", false, rootKey}, {"jeton", false, rootSecret},
	{"contraseñ", false, rootPassword}, {"contrasen", false, rootPassword}, {"clave", false, rootKey}, {"llave", false, rootKey}, {"secreto", false, rootSecret},
	{"senha", false, rootPassword}, {"chave", false, rootKey}, {"segredo", false, rootSecret},
	{"parola d'ordine", false, rootPassword}, {"chiave", false, rootKey}, {"segreto", false, rootSecret},
	{"parolă", false, rootPassword}, {"cheie", false, rootKey},
	// Slavic languages.
	{"hasł", false, rootPassword}, {"hasl", false, rootPassword}, {"klucz", false, rootKey},
	{"hesl", false, rootPassword}, {"klíč", false, rootKey}, {"kľúč", false, rootKey},
	{"парол", false, rootPassword}, {"ключ", false, rootKey}, {"токен", false, rootSecret}, {"секрет", false, rootSecret},
	// Greek, Turkish, and others in Latin script.
	{"κωδικ", false, rootPassword}, {"κλειδ", false, rootKey}, {"συνθηματικ", false, rootPassword},
	{"şifre", false, rootPassword}, {"sifre", false, rootPassword}, {"şıfre", false, rootPassword}, {"parola", false, rootPassword},
	{"anahtar", false, rootKey},
	{"mật khẩu", false, rootPassword}, {"mat khau", false, rootPassword}, {"khóa", false, rootKey}, {"khoá", false, rootKey},
	{"kata sandi", false, rootPassword}, {"sandi", false, rootPassword}, {"kunci", false, rootKey},
	// Scripts without case or word spaces: anywhere.
	{"密码", true, rootPassword}, {"密碼", true, rootPassword}, {"口令", true, rootPassword}, {"密钥", true, rootKey}, {"密鑰", true, rootKey},
	{"秘钥", true, rootKey}, {"令牌", true, rootSecret}, {"私钥", true, rootKey}, {"私鑰", true, rootKey}, {"凭证", true, rootSecret}, {"憑證", true, rootSecret},
	{"パスワード", true, rootPassword}, {"暗証番号", true, rootPassword}, {"トークン", true, rootSecret}, {"秘密鍵", true, rootKey},
	{"キー", true, rootKey}, {"鍵", true, rootKey},
	{"비밀번호", true, rootPassword}, {"암호", true, rootPassword}, {"토큰", true, rootSecret}, {"키", true, rootKey},
	{"كلمة المرور", true, rootPassword}, {"كلمة السر", true, rootPassword}, {"مفتاح", true, rootKey}, {"رمز", true, rootSecret},
	{"סיסמ", true, rootPassword}, {"מפתח", true, rootKey}, {"אסימון", true, rootSecret},
	{"पासवर्ड", true, rootPassword}, {"कुंजी", true, rootKey}, {"टोकन", true, rootSecret},
	{"รหัสผ่าน", true, rootPassword}, {"رمز عبور", true, rootPassword}, {"کلید", true, rootKey},
}

// englishStems are English's roots, whole words or segments of a name.
var englishStems = []nameRoot{
	{"password", true, rootPassword}, {"passwd", true, rootPassword}, {"passphrase", true, rootPassword}, {"passcode", true, rootPassword},
	{"pwd", true, rootPassword}, {"secret", true, rootSecret}, {"token", true, rootSecret}, {"credential", true, rootSecret},
	{"creds", true, rootSecret}, {"apikey", true, rootKey}, {"key", true, rootKey},
}

// foldLower lower-cases s with Unicode's case mapping wherever the lower
// case takes as many bytes (Cyrillic, Greek, Latin with diacritics), so
// offsets in the result are offsets in s; İ becomes ı (both two bytes).
func foldLower(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return asciiLower(s)
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		l := unicode.ToLower(r)
		switch {
		case r == 'İ':
			b = append(b, "ı"...)
		case l != r && utf8.RuneLen(l) == n:
			b = utf8.AppendRune(b, l)
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(b)
}

// letterBefore reports whether a letter ends s.
func letterBefore(s string) bool {
	if s == "" {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(s)
	return unicode.IsLetter(r)
}

// rootHit is a root found in folded text.
type rootHit struct {
	start, end int
	kind       rootKind
	english    bool
}

// foreignRoot finds the first root of another language in folded text at
// or after from.
func foreignRoot(folded string, from int) (rootHit, bool) {
	best := rootHit{start: -1}
	for _, r := range foreignStems {
		for at := from; at < len(folded); {
			i := strings.Index(folded[at:], r.stem)
			if i < 0 {
				break
			}
			p := at + i
			if (r.inWord || !letterBefore(folded[:p])) && (best.start < 0 || p < best.start) {
				best = rootHit{p, p + len(r.stem), r.kind, false}
				break
			}
			at = p + len(r.stem)
		}
	}
	return best, best.start >= 0
}

// hasForeignRoot is a cheap look for a non-English root's bytes.
func hasForeignRoot(folded string) bool {
	_, ok := foreignRoot(folded, 0)
	return ok
}
