package gitcommit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// signFormat returns gpg.format, lower-cased; "" is openpgp.
func signFormat(cfg gitConfig) string {
	f := strings.ToLower(strings.TrimSpace(cfg.get("gpg.format")))
	if f == "" {
		return "openpgp"
	}
	return f
}

// signFormatSupported refuses a gpg.format git itself does not know.
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

// signProgram is gpg.<format>.program, with gpg.program as openpgp's
// older name, else git's default.
func signProgram(cfg gitConfig, format string) string {
	if p, ok := cfg.getSub("gpg", format, "program"); ok && p != "" {
		return p
	}
	switch format {
	case "x509":
		return "gpgsm"
	case "ssh":
		return "ssh-keygen"
	}
	if p := cfg.get("gpg.program"); p != "" {
		return p
	}
	return "gpg"
}

// signCommit sets c's signature as `git commit -S` does: the commit without
// it is the payload; the result becomes the gpgsig header.
func (r *Repo) signCommit(ctx context.Context, cfg gitConfig, c *object.Commit) error {
	obj := r.store.NewEncodedObject()
	if err := c.EncodeWithoutSignature(obj); err != nil {
		return fmt.Errorf("sign commit: encode: %w", err)
	}
	rd, err := obj.Reader()
	if err != nil {
		return fmt.Errorf("sign commit: %w", err)
	}
	var payload bytes.Buffer
	_, err = payload.ReadFrom(rd)
	rd.Close()
	if err != nil {
		return fmt.Errorf("sign commit: %w", err)
	}
	format := signFormat(cfg)
	var sig []byte
	switch format {
	case "openpgp", "x509":
		key := cfg.get("user.signingKey")
		if key == "" {
			key = c.Committer.Name + " <" + c.Committer.Email + ">"
		}
		sig, err = signGPG(ctx, signProgram(cfg, format), key, payload.Bytes())
	case "ssh":
		sig, err = r.signSSH(ctx, cfg, payload.Bytes())
	default:
		err = signFormatSupported(cfg)
	}
	if err != nil {
		return fmt.Errorf("sign commit (commit.gpgSign is set): %w", err)
	}
	// git strips CRs a Windows signer may add.
	c.PGPSignature = string(bytes.ReplaceAll(sig, []byte("\r\n"), []byte("\n")))
	return nil
}

func signGPG(ctx context.Context, program, key string, payload []byte) ([]byte, error) {
	cmd := command(ctx, program, "--status-fd=2", "-bsau", key)
	var stdout, stderr bytes.Buffer
	cmd.Stdin = bytes.NewReader(payload)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil && !strings.Contains(stderr.String(), "\n[GNUPG:] SIG_CREATED ") {
		err = errors.New("no SIG_CREATED status")
	}
	if err != nil {
		return nil, fmt.Errorf("%s failed to sign the data with key %q: %w: %s", program, key, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// signSSH runs `ssh-keygen -Y sign -n git -f <key> <payload file>` and reads
// <payload file>.sig; a literal key ("ssh-…", "key::…") is written to a
// temporary file and signed through the agent (-U), as git does.
func (r *Repo) signSSH(ctx context.Context, cfg gitConfig, payload []byte) ([]byte, error) {
	program := signProgram(cfg, "ssh")
	key := cfg.get("user.signingKey")
	if key == "" {
		var err error
		if key, err = defaultSSHKey(ctx, cfg); err != nil {
			return nil, err
		}
	}
	if key == "" {
		return nil, errors.New("user.signingKey needs to be set for ssh signing")
	}
	args := []string{"-Y", "sign", "-n", "git", "-f"}
	literal, isLiteral := strings.CutPrefix(key, "key::")
	if !isLiteral && strings.HasPrefix(key, "ssh-") {
		literal, isLiteral = key, true
	}
	if isLiteral {
		kf, err := writeTemp(".git_signing_key_tmp", []byte(literal))
		if err != nil {
			return nil, err
		}
		defer os.Remove(kf)
		args = append(args, kf, "-U")
	} else {
		args = append(args, r.expandPath(key, ""))
	}
	bf, err := writeTemp(".git_signing_buffer_tmp", payload)
	if err != nil {
		return nil, err
	}
	defer os.Remove(bf)
	defer os.Remove(bf + ".sig")
	cmd := command(ctx, program, append(args, bf)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if strings.Contains(stderr.String(), "usage:") {
			return nil, errors.New("ssh-keygen -Y sign is needed for ssh signing (available in openssh version 8.2p1+)")
		}
		return nil, fmt.Errorf("%s -Y sign: %w: %s", program, err, strings.TrimSpace(stderr.String()))
	}
	sig, err := os.ReadFile(bf + ".sig")
	if err != nil {
		return nil, fmt.Errorf("read ssh signature: %w", err)
	}
	return sig, nil
}

// defaultSSHKey runs gpg.ssh.defaultKeyCommand (split on spaces, no shell,
// as git does) and takes its first line if it is a literal key.
func defaultSSHKey(ctx context.Context, cfg gitConfig) (string, error) {
	keyCmd, _ := cfg.getSub("gpg", "ssh", "defaultKeyCommand")
	fields := strings.Fields(keyCmd)
	if len(fields) == 0 {
		return "", nil
	}
	out, err := command(ctx, fields[0], fields[1:]...).Output()
	if err != nil {
		return "", fmt.Errorf("gpg.ssh.defaultKeyCommand %q: %w", keyCmd, err)
	}
	first, _, _ := strings.Cut(string(out), "\n")
	first = strings.TrimSpace(first)
	if strings.HasPrefix(first, "key::") || strings.HasPrefix(first, "ssh-") {
		return first, nil
	}
	return "", fmt.Errorf("gpg.ssh.defaultKeyCommand %q gave no key", keyCmd)
}

func writeTemp(prefix string, content []byte) (string, error) {
	f, err := os.CreateTemp("", prefix+"*")
	if err != nil {
		return "", fmt.Errorf("create temporary file: %w", err)
	}
	_, err = f.Write(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("write temporary file: %w", err)
	}
	return f.Name(), nil
}
