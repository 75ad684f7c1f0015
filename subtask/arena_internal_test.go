package subtask

import (
	"bytes"
	"fmt"
	"testing"
)

// Strings a slab handed out keep their bytes while it hands out more from
// the same scratch bytes, across chunks, long ones included.
func TestStrSlabStringsStay(t *testing.T) {
	var s strSlab
	var scratch []byte
	var got, want []string
	for i := range 5000 {
		scratch = fmt.Appendf(scratch[:0], "key-%d-", i)
		scratch = append(scratch, bytes.Repeat([]byte{byte('a' + i%26)}, i%300)...)
		got = append(got, s.str(scratch))
		want = append(want, string(scratch))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("string %d is %q, want %q", i, got[i], want[i])
		}
	}
	if s.str(nil) != "" {
		t.Fatal("empty bytes gave a non-empty string")
	}
}
