package policy

import "github.com/debussy-dev/debussy/record"

// Fields is what an effect records in events.jsonl and shows in the log
// (record.Fields: readers of the log decode the same type).
type Fields = record.Fields

// ref is v's address, for a Fields value.
func ref[T any](v T) *T { return &v }
