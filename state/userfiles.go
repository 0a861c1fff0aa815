package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// userFilesPath is .debussy/runs/<run>/user-files.json: the untracked files
// a run found at its start, which are the user's, not the agent's.
func (s *Store) userFilesPath(runID string) string {
	return filepath.Join(s.RunDir(runID), "user-files.json")
}

// SaveUserFiles records the untracked paths a run found at its start with
// a fingerprint of their content, so that a later run taking over after a
// crash commits the agent's leftovers without the user's files.
func (s *Store) SaveUserFiles(runID string, files map[string]string) error {
	if files == nil {
		files = map[string]string{}
	}
	if err := writeJSONAtomic(s.userFilesPath(runID), files); err != nil {
		return fmt.Errorf("save user files of run %s: %w", runID, err)
	}
	return nil
}

// LoadUserFiles reads what SaveUserFiles recorded; ok is false when the run
// recorded nothing (it was refused before starting, or predates the record).
func (s *Store) LoadUserFiles(runID string) (files map[string]string, ok bool, err error) {
	data, err := os.ReadFile(s.userFilesPath(runID))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read user files of run %s: %w", runID, err)
	}
	if err := json.Unmarshal(data, &files); err != nil {
		return nil, false, fmt.Errorf("read user files %s: %w", s.userFilesPath(runID), err)
	}
	return files, true, nil
}
