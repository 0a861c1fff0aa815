package secrets

// grammarRules read structure: each tokenises one family of grammars
// (label lines, config keywords, markup siblings, JSON paths, tables,
// calls, test output) into a name and the value it stands for, and
// judges both the same way (judge.go).
func grammarRules() []rule {
	return []rule{
		{id: "name-line", scanL: scanNameLines, keywords: append(append([]string{}, configOnlyKeywords...), rootKeywords...), multiline: true},
		{id: "key-call", scanL: scanCalls, keywords: callKeywords, multiline: true},
		{id: "test-operand", scanL: scanAssertions, keywords: assertKeywords, multiline: true},
		{
			// A wallet's extended private key (BIP32: xprv, tprv; SLIP-132:
			// yprv, zprv, Yprv, Zprv, uprv, vprv) in base58.
			id:       "extended-private-key",
			re:       lazyRegexp(`\b[xtyzuvYZUV]prv[1-9A-HJ-NP-Za-km-z]{100,112}\b`),
			keywords: []string{"prv"},
		},
		{
			// A SIM's PUK (eight digits) by its name: PUK: n, PUK2 n, PUK
			// code is n, a PUK column.
			id:       "puk-code",
			re:       lazyRegexp(`(?i)\bPUK2?(?:[ -]?(?:code|kod|código|nummer))?\b[^0-9\n]{0,24}?\b(\d{8})\b`),
			keywords: []string{"puk"},
		},
		{
			// PHP's var_dump and print_r: ["password"]=> string(9) "x",
			// [password] => x.
			id:       "php-dump",
			re:       lazyRegexp(`\[["']?(` + nameRE + `)["']?\][ \t]*=>[ \t]*(?:\r?\n[ \t]*)?(?:string\(\d+\)[ \t]*)?(?:"([^"\n]*)"|'([^'\n]*)'|([^\s"'][^\n]*))`),
			from:     2,
			keywords: []string{"]=>", "] =>"},
			keep:     keepField,
		},
		{
			// An NTP or chrony keys file: id, type, key (HEX: or ASCII:).
			id:       "ntp-key",
			re:       lazyRegexp(`(?im)^[ 	]*\d{1,5}[ 	]+(?:M|MD5|SHA1?|SHA224|SHA256|SHA384|SHA512|RMD160|AES128CMAC|AES256CMAC)[ 	]+(?:HEX:|ASCII:)?([!-~]{8,})[ 	]*$`),
			keywords: []string{"md5", "sha", "cmac", "rmd160", " m "},
		},
	}
}
