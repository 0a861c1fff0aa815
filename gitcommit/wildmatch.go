package gitcommit

// A port of git's wildmatch.c, the matcher behind .gitignore patterns and
// includeIf conditions. go-git's gitignore package has its own matcher,
// which disagrees with git on allowlists ("*", "!*/", "!*.go" commits every
// file below the root), "/**", "src/**/", "foo/**/", "ab[!c]" and
// "foo//bar"; porting git's algorithm line by line is smaller than patching
// those cases one by one, and the fuzz in ignore_fuzz_test.go holds it to
// `git check-ignore`.

const (
	wmCaseFold = 1 << iota
	wmPathname
)

const (
	wmMatch = iota
	wmNoMatch
	wmAbortAll
	wmAbortToStarStar
)

// wildmatch reports whether text matches pattern; pathname is git's
// WM_PATHNAME ("*" and "?" do not match "/").
func wildmatch(pattern, text string, pathname bool) bool {
	flags := 0
	if pathname {
		flags = wmPathname
	}
	return dowild(pattern, 0, text, 0, flags) == wmMatch
}

// wildmatchFlags is wildmatch with git's flag bits (wmPathname, wmCaseFold).
func wildmatchFlags(pattern, text string, flags int) bool {
	return dowild(pattern, 0, text, 0, flags) == wmMatch
}

func byteAt(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func isGlobSpecial(c byte) bool { return c == '*' || c == '?' || c == '[' || c == '\\' }

func wmUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func wmLower(c byte) bool { return c >= 'a' && c <= 'z' }
func wmDigit(c byte) bool { return c >= '0' && c <= '9' }
func wmAlpha(c byte) bool { return wmUpper(c) || wmLower(c) }
func wmToLower(c byte) byte {
	if wmUpper(c) {
		return c + 'a' - 'A'
	}
	return c
}

// wmSpace is git's isspace: space, \t, \n and \r only.
func wmSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func wmClass(class string, t byte, flags int) (matched, ok bool) {
	switch class {
	case "alnum":
		return wmAlpha(t) || wmDigit(t), true
	case "alpha":
		return wmAlpha(t), true
	case "blank":
		return t == ' ' || t == '\t', true
	case "cntrl":
		return t < 0x20 || t == 0x7f, true
	case "digit":
		return wmDigit(t), true
	case "graph":
		return t > 0x20 && t < 0x7f, true
	case "lower":
		return wmLower(t), true
	case "print":
		return t >= 0x20 && t < 0x7f, true
	case "punct":
		return t > 0x20 && t < 0x7f && !wmAlpha(t) && !wmDigit(t), true
	case "space":
		return wmSpace(t), true
	case "upper":
		return wmUpper(t) || (flags&wmCaseFold != 0 && wmLower(t)), true
	case "xdigit":
		return wmDigit(t) || (t >= 'a' && t <= 'f') || (t >= 'A' && t <= 'F'), true
	}
	return false, false
}

// dowild matches pat[p:] against text[ti:]; the start of pat is the start
// of the pattern for the "**" boundary test, as in C.
func dowild(pat string, p int, text string, ti int, flags int) int {
	start := p
	for ; byteAt(pat, p) != 0; ti, p = ti+1, p+1 {
		pCh := pat[p]
		tCh := byteAt(text, ti)
		if tCh == 0 && pCh != '*' {
			return wmAbortAll
		}
		if flags&wmCaseFold != 0 {
			tCh, pCh = wmToLower(tCh), wmToLower(pCh)
		}
		switch pCh {
		case '\\':
			// Literal match with the next character; a trailing
			// backslash compares with NUL and fails. Under wmCaseFold the
			// escaped character is not folded, as in git: "\W" never
			// matches, since the text is lower-cased.
			p++
			pCh = byteAt(pat, p)
			if tCh != pCh {
				return wmNoMatch
			}
		default:
			if tCh != pCh {
				return wmNoMatch
			}
		case '?':
			if flags&wmPathname != 0 && tCh == '/' {
				return wmNoMatch
			}
		case '*':
			var matchSlash bool
			p++
			if byteAt(pat, p) == '*' {
				prevP := p - 2
				for p++; byteAt(pat, p) == '*'; p++ {
				}
				if (prevP < start || pat[prevP] == '/') &&
					(byteAt(pat, p) == 0 || pat[p] == '/' || (pat[p] == '\\' && byteAt(pat, p+1) == '/')) {
					if byteAt(pat, p) == '/' && dowild(pat, p+1, text, ti, flags) == wmMatch {
						return wmMatch
					}
					matchSlash = true
				} else {
					matchSlash = false
				}
			} else {
				// Without WM_PATHNAME, '*' == '**'.
				matchSlash = flags&wmPathname == 0
			}
			if byteAt(pat, p) == 0 {
				// A trailing "**" matches everything, a trailing "*" only
				// if no slash follows.
				if !matchSlash {
					for i := ti; i < len(text); i++ {
						if text[i] == '/' {
							return wmNoMatch
						}
					}
				}
				return wmMatch
			} else if !matchSlash && pat[p] == '/' {
				// One asterisk followed by a slash matches up to the next
				// slash, which the loop then consumes.
				slash := -1
				for i := ti; i < len(text); i++ {
					if text[i] == '/' {
						slash = i
						break
					}
				}
				if slash < 0 {
					return wmNoMatch
				}
				ti = slash
				continue
			}
			for {
				if tCh == 0 {
					break
				}
				// Skip ahead to the literal that follows the asterisk;
				// without matchSlash, never past a slash.
				if c := byteAt(pat, p); !isGlobSpecial(c) {
					pc := c
					if flags&wmCaseFold != 0 {
						pc = wmToLower(pc)
					}
					for {
						tCh = byteAt(text, ti)
						if tCh == 0 || (!matchSlash && tCh == '/') {
							break
						}
						if flags&wmCaseFold != 0 {
							tCh = wmToLower(tCh)
						}
						if tCh == pc {
							break
						}
						ti++
					}
					if tCh != pc {
						return wmNoMatch
					}
				}
				if m := dowild(pat, p, text, ti, flags); m != wmNoMatch {
					if !matchSlash || m != wmAbortToStarStar {
						return m
					}
				} else if !matchSlash && tCh == '/' {
					return wmAbortToStarStar
				}
				ti++
				tCh = byteAt(text, ti)
			}
			return wmAbortAll
		case '[':
			p++
			pCh = byteAt(pat, p)
			if pCh == '^' {
				pCh = '!'
			}
			negated := pCh == '!'
			if negated {
				p++
				pCh = byteAt(pat, p)
			}
			var prevCh byte
			matched := false
			// C's do { ... } while (prev_ch = p_ch, (p_ch = *++p) != ']');
			// "continue" inside the body goes to that condition.
			for first := true; ; first = false {
				if !first {
					prevCh = pCh
					p++
					pCh = byteAt(pat, p)
					if pCh == ']' {
						break
					}
				}
				if pCh == 0 {
					return wmAbortAll
				}
				switch {
				case pCh == '\\':
					p++
					pCh = byteAt(pat, p)
					if pCh == 0 {
						return wmAbortAll
					}
					if tCh == pCh {
						matched = true
					}
				case pCh == '-' && prevCh != 0 && byteAt(pat, p+1) != 0 && pat[p+1] != ']':
					p++
					pCh = pat[p]
					if pCh == '\\' {
						p++
						pCh = byteAt(pat, p)
						if pCh == 0 {
							return wmAbortAll
						}
					}
					if tCh <= pCh && tCh >= prevCh {
						matched = true
					} else if flags&wmCaseFold != 0 && wmLower(tCh) {
						up := tCh - 'a' + 'A'
						if up <= pCh && up >= prevCh {
							matched = true
						}
					}
					pCh = 0 // so prevCh becomes 0
				case pCh == '[' && byteAt(pat, p+1) == ':':
					p += 2
					s := p
					for pCh = byteAt(pat, p); pCh != 0 && pCh != ']'; pCh = byteAt(pat, p) {
						p++
					}
					if pCh == 0 {
						return wmAbortAll
					}
					i := p - s - 1
					if i < 0 || pat[p-1] != ':' {
						// No ":]": a plain '[' in the set.
						p = s - 2
						pCh = '['
						if tCh == pCh {
							matched = true
						}
						continue
					}
					m, ok := wmClass(pat[s:s+i], tCh, flags)
					if !ok {
						return wmAbortAll
					}
					if m {
						matched = true
					}
					pCh = 0
				default:
					if tCh == pCh {
						matched = true
					}
				}
			}
			if matched == negated || (flags&wmPathname != 0 && tCh == '/') {
				return wmNoMatch
			}
		}
	}
	if ti < len(text) {
		return wmNoMatch
	}
	return wmMatch
}
