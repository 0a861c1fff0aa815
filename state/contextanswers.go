package state

import (
	"path/filepath"
	"time"

	"github.com/debussy-dev/debussy/event"
)

// ContextAnswerMaxAge bounds how long the CLI's answer about its context
// window is reused across runs: the server can change a model's window or
// compaction point without a CLI release.
const ContextAnswerMaxAge = 24 * time.Hour

// ContextAnswer is the CLI's get_context_usage answer for one configured
// model, kept across runs so a session pays nothing for asking after the
// first run. The runner still asks again when a session's init names
// another CLI version or model than Known's.
type ContextAnswer struct {
	SpecModel string             `json:"spec_model"` // the model debussy asked for ("" for claude's default)
	Known     event.KnownContext `json:"known"`
	At        time.Time          `json:"at"` // when the CLI answered
}

type contextAnswers struct {
	Answers []ContextAnswer `json:"answers"`
}

func (s *Store) contextAnswersPath() string { return filepath.Join(s.Dir, "context-answers.json") }

// ContextAnswers returns the answers younger than ContextAnswerMaxAge at
// now; none when the file is missing or unreadable (asking again costs a
// fraction of a second).
func (s *Store) ContextAnswers(now time.Time) []ContextAnswer {
	f, err := readSignalFile[contextAnswers](s.contextAnswersPath(), "context answers")
	if err != nil || f == nil {
		return nil
	}
	var out []ContextAnswer
	for _, a := range f.Answers {
		if age := now.Sub(a.At); age >= 0 && age < ContextAnswerMaxAge && a.Known.Usage.OK() {
			out = append(out, a)
		}
	}
	return out
}

// SaveContextAnswers replaces the kept answers (atomically, 0600).
func (s *Store) SaveContextAnswers(answers []ContextAnswer) error {
	return writeJSONAtomic(s.contextAnswersPath(), contextAnswers{Answers: answers})
}
