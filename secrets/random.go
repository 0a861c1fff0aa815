package secrets

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// This file judges values by their look: random enough to be a generated
// credential, or one of its look-alikes (a hash, a UUID, a cache key,
// encoded text, a fake).

// fakeRE: values that say they stand in for a secret.
var fakeRE = lazyRegexp(`(?i)\.\.\.|…|\[redacted\]|changeme|placeholder|dummy|(?:^|[_-])(?:your|put|insert|replace)[_-]|[_-]here$`)

// fake reports whether v stands in for a secret: a quarter of it or more
// one character in a row, eight at least (xxxxxxxx, 00000000, ########; a
// base64 blob's AAAAAAAAAA of zero bytes is a small part of it), an
// ellipsis, or a word that says so (your_token_here, changeme).
func fake(v string) bool {
	run := 1
	for i := 1; i < len(v); i++ {
		if v[i] == v[i-1] {
			if run++; run >= 8 && run*4 >= len(v) {
				return true
			}
		} else {
			run = 1
		}
	}
	return fakeRE.MatchString(v)
}

func charClass(c byte) int {
	switch {
	case 'a' <= c && c <= 'z':
		return 1
	case 'A' <= c && c <= 'Z':
		return 2
	case '0' <= c && c <= '9':
		return 3
	}
	return 0
}

// randomish reports whether s (separators aside) looks generated: at least
// min letters and digits, mixed classes that change often (random base62
// changes class at ~60 % of its characters, a CamelCase name at ~15 %), and
// high entropy. Hex digests, UUIDs and the like are judged by lookAlike.
func randomish(s string, min int) bool {
	core := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if charClass(s[i]) != 0 {
			core = append(core, s[i])
		}
	}
	if len(s) < min || len(core)*4 < min*3 || fake(s) {
		return false
	}
	var seen [4]bool
	changes := 0
	for i, c := range core {
		seen[charClass(c)] = true
		if i > 0 && charClass(c) != charClass(core[i-1]) {
			changes++
		}
	}
	classes := 0
	for _, b := range seen[1:] {
		if b {
			classes++
		}
	}
	if classes < 2 || float64(changes) < 0.2*float64(len(core)-1) || wordy(s) {
		return false
	}
	return shannonEntropy(string(core)) >= 3.3
}

// wordy reports whether half of s or more is words: runs of three or more
// letters (a capital may lead) with vowels in them, as in names and code
// (PdfEncryptionKeySize.Key128Bit), rarely in random text.
func wordy(s string) bool {
	inWords, all := 0, 0
	for i := 0; i < len(s); {
		c := charClass(s[i])
		if c == 0 {
			i++
			continue
		}
		j := i + 1
		if c == 2 && j < len(s) && charClass(s[j]) == 1 {
			c = 1 // a capitalized word: Key, Signatures
		}
		for j < len(s) && charClass(s[j]) == c {
			j++
		}
		w := strings.ToLower(s[i:j])
		all += len(w)
		if c == 1 && len(w) >= 3 && wordLike(w) {
			inWords += len(w)
		}
		i = j
	}
	return all > 0 && inWords*5 >= all*3
}

// wordLike: a sixth or more vowels (strict, string), and no four consonants in a row.
func wordLike(w string) bool {
	vowels, run := 0, 0
	for i := 0; i < len(w); i++ {
		if strings.IndexByte("aeiouy", w[i]) >= 0 {
			vowels++
			run = 0
		} else if run++; run >= 4 {
			return false
		}
	}
	return vowels*6 >= len(w) && vowels < len(w)
}

var (
	uuidRE = lazyRegexp(`(?i)^[{(]?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}[})]?$`)
	hexRE  = lazyRegexp(`^(?:[0-9a-f]+|[0-9A-F]+)$`)
	// A digest named by its algorithm (sha256:…, sha512-…, h1:…), or a
	// name with a digest at its end (a cache key: deps-linux-<sha256>).
	digestRE = lazyRegexp(`(?i)^(?:sha1|sha224|sha256|sha384|sha512|md5|h1|blake2b|blake3|xxh64|crc32)[:-]|^[A-Za-z][A-Za-z0-9._:-]*[-_.:/](?:[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{56}|[0-9a-f]{64}|[0-9a-f]{96}|[0-9a-f]{128})$`)
)

// lookAlike reports whether v is something generated that is not a
// secret: a UUID, a hex digest or commit id, a digest with its algorithm,
// a cache key ending in one, base64 of plain text.
func lookAlike(v string) bool {
	v = strings.Trim(v, `"'`)
	return uuidRE.MatchString(v) || publicID.MatchString(v) || hexRE.MatchString(v) || digestRE.MatchString(v) || fileName.MatchString(v) || sshPublic.MatchString(v) ||
		strings.Count(v, "%")*3 >= len(v)-2 || encodedText(v) || decodedPublic(v)
}

// publicID: public generated ids: EVM addresses and hashes (0x…), IPFS
// content ids (Qm…, bafy…), Stripe object ids (ch_, cus_, pi_ — not
// sk_/rk_, which are keys), bech32 addresses and public keys (age1…,
// npub1…, bc1…), ULIDs.
var publicID = lazyRegexp(`^0x[0-9a-fA-F]{8,}$|^Qm[1-9A-HJ-NP-Za-km-z]{44}$|^b[a-z2-7]{58,}$|` +
	`^(?:ch|cus|pi|pm|sub|in|txn|py|re|src|card|ba|evt|prod|price|seti|si|ii|acct|cs|po|tr|ic|il|dp|du|fee|plan|txi|cbtxn|iv|or|pr|qt|cn|req|msg|msgbatch|toolu|srvtoolu)_[0-9A-Za-z]{8,}$|` +
	`^(?:age|npub|bc|tb|ltc|cosmos|osmo|addr|stake)1[02-9ac-hj-np-z]{38,}$|^[0-9A-HJKMNP-TV-Z]{26}$|` +
	`^[xtyzuvYZUV]pub[1-9A-HJ-NP-Za-km-z]{100,112}$`)

// sshPublic: an SSH public key's base64 (ssh-rsa, ssh-ed25519, ecdsa-…).
var sshPublic = lazyRegexp(`^AAAA(?:B3NzaC1|C3NzaC1|E2VjZHNh|B3NzaC5|Gc2stc)`)

// fileName: a path or file name with a known extension (an asset named by
// its hash: logo-3f2a9c….png).
var fileName = lazyRegexp(`(?i)\.(?:png|jpe?g|gif|svg|webp|ico|css|js|mjs|map|html?|json|ya?ml|toml|txt|md|go|py|rb|rs|java|kt|tar|gz|tgz|zip|whl|jar|so|dll|exe|pdf|image|woff2?|ttf|lock|log)$`)

// hexKey: hex of an API key's length (32, 48), not a digest's.
var hexKey = lazyRegexp(`^(?:[0-9a-f]{32}|[0-9A-F]{32}|[0-9a-f]{48}|[0-9A-F]{48})$`)

// idLike is lookAlike for a value under a bare "key" (Ocp-Apim-
// Subscription-Key, cache key): 32 hex characters there are an API key
// more often than an MD5.
func idLike(v string) bool {
	return lookAlike(v) && !hexKey.MatchString(strings.Trim(v, `"'`))
}

// encodedText reports whether v is base64 of readable text ("aGVsbG8…"):
// an encoded message, not a key (a key decodes to bytes, not words).
func encodedText(v string) bool {
	d, ok := decode64(v)
	if !ok || len(d) < 12 {
		return false
	}
	printable := 0
	for _, c := range d {
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' {
			printable++
		}
	}
	return printable == len(d) && utf8.Valid(d) && strings.ContainsAny(string(d), " \n")
}

func decode64(v string) ([]byte, bool) {
	v = strings.TrimRight(v, "=")
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		if d, err := enc.DecodeString(v); err == nil {
			return d, true
		}
	}
	return nil, false
}

// encodedSecretRE: what a decoded blob holds when it is a credential.
var encodedSecretRE = lazyRegexp(`(?i)PRIVATE KEY|"auths?"\s*:|"password"\s*:|"(?:access_|refresh_|id_)?token"\s*:|"(?:client_)?secret"\s*:|"private_key"|aws_secret_access_key|_authToken|PuTTY-User-Key-File`)

// encodedSecret reports whether v is base64 of a credential: a PEM block,
// a docker config, a JSON credential file.
func encodedSecret(v string) bool {
	d, ok := decode64(v)
	if !ok {
		// A blob cut mid-quantum: decode what is whole.
		d, ok = decode64(v[:len(strings.TrimRight(v, "="))/4*4])
	}
	return ok && encodedSecretRE.Match(d)
}

// discordToken reports whether v is id.timestamp.hmac with the id in
// base64 decoding to digits (a Discord bot token).
func discordToken(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) != 3 || len(parts[0]) < 23 || len(parts[0]) > 28 || len(parts[1]) < 6 || len(parts[1]) > 7 || len(parts[2]) < 27 {
		return false
	}
	d, ok := decode64(parts[0])
	if !ok || len(d) < 17 {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	return randomish(parts[2], 20)
}

// decodedPublic reports whether v is base64 of what is not a secret, once
// decoded: binary data a format marks as its own (PNG, JPEG, GIF, gzip,
// zip, PDF, a protobuf's tag), DER that is a certificate, a public key or
// a signature (not a private key, whose first element is its version),
// JSON that names no credential, or text.
func decodedPublic(v string) bool {
	if len(v) < 16 {
		return false
	}
	d, ok := decode64(v)
	if !ok {
		d, ok = decode64(v[:len(strings.TrimRight(v, "="))/4*4])
	}
	if !ok || len(d) < 8 {
		return false
	}
	for _, magic := range []string{"\x89PNG", "\xff\xd8\xff", "GIF8", "\x1f\x8b", "PK\x03\x04", "%PDF", "RIFF", "\x00\x00\x00"} {
		if strings.HasPrefix(string(d), magic) {
			return true
		}
	}
	if d[0] == 0x30 && len(d) > 6 {
		// DER: SEQUENCE, its length, then the first element.
		i := 2
		if d[1]&0x80 != 0 {
			i += int(d[1] & 0x7f)
		}
		if i+2 < len(d) {
			switch first, flen := d[i], d[i+1]; {
			case first == 0x02 && flen == 1 && i+2 < len(d) && d[i+2] <= 1:
				return false // INTEGER 0 or 1: a private key's version
			case first == 0x30, first == 0x02 && flen >= 0x1f:
				return true // a certificate, a public key; a signature's r
			}
		}
	}
	if t := strings.TrimSpace(string(d)); (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && utf8.ValidString(t) {
		return !encodedSecretRE.MatchString(t)
	}
	printable, run, words := 0, 0, false
	for _, c := range d {
		if c >= 0x20 && c < 0x7f {
			printable++
		}
		// A field of structured data (a protobuf's string, a name in a
		// binary header): five letters or digits in a row, rare in the
		// random bytes of a key.
		if charClass(c) != 0 || c == '-' || c == '_' || c == '.' {
			if run++; run >= 6 {
				words = true
			}
		} else {
			run = 0
		}
	}
	if protobufLike(d) {
		return true
	}
	if printable == len(d) {
		// Text: words (a signature's label), never a user:password pair
		// or NAME=value.
		return wordy(string(d)) && !strings.ContainsAny(string(d), ":@=")
	}
	return words && printable*2 >= len(d)
}

// protobufLike reports whether d parses whole as protocol buffers' wire
// format with three fields or more, one of them text: a message, not a
// key's random bytes (which rarely parse so).
func protobufLike(d []byte) bool {
	varint := func(i int) (uint64, int, bool) {
		var v uint64
		for shift := 0; i < len(d) && shift < 64; shift += 7 {
			b := d[i]
			i++
			v |= uint64(b&0x7f) << shift
			if b < 0x80 {
				return v, i, true
			}
		}
		return 0, i, false
	}
	fields, text := 0, false
	for i := 0; i < len(d); {
		key, n, ok := varint(i)
		if !ok || key>>3 == 0 || key>>3 > 1<<12 {
			return false
		}
		i = n
		switch key & 7 {
		case 0:
			if _, i, ok = varint(i); !ok {
				return false
			}
		case 1:
			i += 8
		case 5:
			i += 4
		case 2:
			l, n, ok := varint(i)
			if !ok || n+int(l) > len(d) {
				return false
			}
			if l >= 3 && utf8.Valid(d[n:n+int(l)]) && wordy(string(d[n:n+int(l)])) {
				text = true
			}
			i = n + int(l)
		default:
			return false
		}
		if i > len(d) {
			return false
		}
		fields++
	}
	return fields >= 3 && text
}
