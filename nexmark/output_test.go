package nexmark

import (
	"strconv"
	"testing"
)

// appendString writes every string exactly as strconv.AppendQuote does,
// whether it takes the plain-ASCII path or not.
func TestAppendStringQuotesAsStrconv(t *testing.T) {
	for _, s := range []string{
		"", "a", "Google", "https://www.nexmark.com/a_b/c/item.htm?query=1&channel_id=5",
		" ", "~", "\x7f", "\x1f", `"`, `\`, "a\"b", "tab\there", "é", "\xff", "\u2028", "日本",
	} {
		want := strconv.AppendQuote([]byte("x "), s)
		if got := appendString([]byte("x"), s); string(got) != string(want) {
			t.Errorf("appendString(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendStringQuotesAsStrconv(f *testing.F) {
	f.Add("abc")
	f.Add("a\"\\\x00é")
	f.Fuzz(func(t *testing.T, s string) {
		want := strconv.AppendQuote([]byte("x "), s)
		if got := appendString([]byte("x"), s); string(got) != string(want) {
			t.Fatalf("appendString(%q) = %s, want %s", s, got, want)
		}
	})
}
