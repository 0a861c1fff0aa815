package state

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/debussy-dev/debussy/secrets"
)

// LedgerFile writes state.json as Save does, byte for byte, but encodes
// and redacts only the runs that changed since its last write: a run in
// progress rewrites its own record, not every earlier run's. It is one
// writer's (the recorder's); the runs it keeps are read, never changed.
type LedgerFile struct {
	store *Store
	// encoded are the runs' indented, redacted JSON as the last write
	// had them.
	encoded map[*Run][]byte
}

// NewLedgerFile is the writer of s's ledger.
func (s *Store) NewLedgerFile() *LedgerFile {
	return &LedgerFile{store: s, encoded: map[*Run][]byte{}}
}

// Write saves l atomically; changed are the runs to encode again (a run
// not written before is encoded whatever changed says).
func (w *LedgerFile) Write(l *Ledger, changed ...*Run) error {
	if l.Version == 0 {
		l.Version = LedgerVersion
	}
	for _, r := range changed {
		delete(w.encoded, r)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\n  \"version\": %d,\n  \"runs\": ", l.Version)
	if l.Runs == nil {
		b.WriteString("null")
	} else if len(l.Runs) == 0 {
		b.WriteString("[]")
	} else {
		b.WriteString("[\n    ")
		keep := make(map[*Run][]byte, len(l.Runs))
		for i, r := range l.Runs {
			enc, ok := w.encoded[r]
			if !ok {
				js, err := json.MarshalIndent(r, "    ", "  ")
				if err != nil {
					return fmt.Errorf("save ledger %s: encode run %s: %w", w.store.ledgerPath(), r.ID, err)
				}
				// Every state file passes the redactor (writeJSONAtomic).
				enc = secrets.Default().JSON(js)
			}
			keep[r] = enc
			if i > 0 {
				b.WriteString(",\n    ")
			}
			b.Write(enc)
		}
		w.encoded = keep
		b.WriteString("\n  ]")
	}
	b.WriteString("\n}\n")
	if err := writeFileAtomic(w.store.ledgerPath(), b.Bytes()); err != nil {
		return fmt.Errorf("save ledger %s: %w", w.store.ledgerPath(), err)
	}
	return nil
}
