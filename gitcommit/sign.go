package gitcommit

import (
	"strings"
)

// signFormat returns gpg.format, lower-cased; "" is openpgp.
func signFormat(cfg gitConfig) string {
	f := strings.ToLower(strings.TrimSpace(cfg.get("gpg.format")))
	if f == "" {
		return "openpgp"
	}
	return f
}

// signFormatSupported refuses, before any work, a signing setup git would
// fail on at the first commit: a gpg.format git does not know, ssh
// signing without a key.
func signFormatSupported(cfg gitConfig) error {
	switch f := signFormat(cfg); f {
	case "openpgp", "x509":
		return nil
	case "ssh":
		cmd, _ := cfg.getSub("gpg", "ssh", "defaultKeyCommand")
		if cfg.get("user.signingKey") == "" && cmd == "" {
			return &UnsupportedError{
				Feature: "ssh commit signing without a key",
				Detail:  "commit.gpgSign is set with gpg.format=ssh",
				WayOut:  "set user.signingKey (git fails the same way without it)",
			}
		}
		return nil
	default:
		return &UnsupportedError{
			Feature: "commit signing with gpg.format=" + f,
			Detail:  "commit.gpgSign is set",
			WayOut:  "use gpg.format openpgp, x509 or ssh, or unset commit.gpgSign",
		}
	}
}
