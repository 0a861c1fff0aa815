package text

import "testing"

func TestFold(t *testing.T) {
	tests := []struct{ name, got, want string }{
		{"folds", OneLine(" a\n\tb  c ", 0), "a b c"},
		{"cuts", OneLine("abcdef", 4), "abc…"},
		{"fits", OneLine("abcd", 4), "abcd"},
		{"last lines", LastLines("a\nb\nc\n\n", 2), "b\nc"},
		{"last line", LastLine("a\nb\n \n"), "b"},
		{"tail", Tail("abcdef", 3), "…def"},
		{"short tail", Tail("ab", 3), "ab"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}
