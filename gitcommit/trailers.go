package gitcommit

import (
	"strings"
)

// Trailer is one `Key: value` line of a commit message's trailer block.
type Trailer struct {
	Key, Value string
}

// gitGenerated are the prefixes git itself writes into a trailer block;
// with one of them a block may also hold other lines (see ParseTrailers).
var gitGenerated = []string{"Signed-off-by: ", "(cherry picked from commit "}

// ParseTrailers returns the trailers of a commit message as git reads them
// (`git interpret-trailers --parse`, `%(trailers:only,unfold)`): only the
// last paragraph counts, never the subject; every line of it must be a
// trailer, or at least a quarter of them when git wrote one of them (a
// Signed-off-by); a line starting with a blank continues the one before;
// comment lines are ignored. Keys keep their spelling; compare them with
// strings.EqualFold, as git does.
func ParseTrailers(msg string) []Trailer {
	msg = strings.ReplaceAll(msg, "\r\n", "\n")
	var lines []string
	for _, l := range strings.Split(msg, "\n") {
		if strings.HasPrefix(l, "#") {
			continue
		}
		lines = append(lines, l)
	}
	end := len(lines)
	for end > 0 && strings.TrimSpace(lines[end-1]) == "" {
		end--
	}
	start := end
	for start > 0 && strings.TrimSpace(lines[start-1]) != "" {
		start--
	}
	// The first paragraph is the subject, never trailers.
	if start == 0 {
		return nil
	}
	block := lines[start:end]
	if !isTrailerBlock(block) {
		return nil
	}
	// A line starting with a blank continues the one before, unfolded.
	var out []Trailer
	last := -1 // index in out of the latest line if it was a trailer
	for _, l := range block {
		if l[0] == ' ' || l[0] == '\t' {
			if last >= 0 {
				out[last].Value = strings.TrimSpace(out[last].Value + " " + strings.TrimSpace(l))
			}
			continue
		}
		last = -1
		if k, v, ok := trailerLine(l); ok {
			out = append(out, Trailer{Key: k, Value: v})
			last = len(out) - 1
		}
	}
	return out
}

// isTrailerBlock is git's decision (trailer.c, find_trailer_block_start)
// whether a last paragraph is a trailer block: all its lines are trailers,
// or a quarter of them when one is a line git generates. Blank-led lines
// count with the trailer above them, else as other lines.
func isTrailerBlock(block []string) bool {
	trailers, others, continuations, generated := 0, 0, 0, false
	for i := len(block) - 1; i >= 0; i-- {
		l := block[i]
		isGenerated := false
		for _, p := range gitGenerated {
			if strings.HasPrefix(l, p) {
				isGenerated = true
			}
		}
		_, _, isTrailer := trailerLine(l)
		switch {
		case isGenerated:
			generated = true
			trailers++
			continuations = 0
		case isTrailer:
			trailers++
			continuations = 0
		case l[0] == ' ' || l[0] == '\t':
			continuations++
		default:
			others += 1 + continuations
			continuations = 0
		}
	}
	others += continuations
	return (generated && trailers*3 >= others) || (trailers > 0 && others == 0)
}

// trailerLine splits `Key: value` the way git's find_separator does: a key
// of letters, digits and dashes, optionally followed by blanks, then the
// colon.
func trailerLine(l string) (key, value string, ok bool) {
	i := 0
	for i < len(l) && (l[i] == '-' || isAlnum(l[i])) {
		i++
	}
	if i == 0 {
		return "", "", false
	}
	key = l[:i]
	for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
		i++
	}
	if i >= len(l) || l[i] != ':' {
		return "", "", false
	}
	return key, strings.TrimSpace(l[i+1:]), true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
