package table

import "bytes"

// A trimmed primary key field is written twice, as its _KEY_ column and as
// the field's own column: both required, of one type and encoding, holding
// the same values, so a page of one is the same bytes as the page of the
// other at the same rows, and so is its compression. The codec of the
// _KEY_ column keeps its last page and what it compressed it to; the codec
// of the field's column, which the writer flushes after it at the same rows
// (DataFileWriter.flushPage and parquet-go's Close flush columns in order),
// takes those bytes when its page equals the kept one instead of
// compressing it again. The comparison, not the order, makes this sound: a
// page that differs is compressed as any other. BenchmarkCommit100K: the
// key fields' value columns were about a sixth of the compression CPU of a
// commit.

// twinPage is the last page of a _KEY_ column and its compressed bytes.
type twinPage struct {
	src, out []byte
	ok       bool
}

// set keeps a page and its compressed bytes; a nil twinPage keeps nothing.
func (t *twinPage) set(src, out []byte) {
	if t == nil {
		return
	}
	t.src = append(t.src[:0], src...)
	t.out = append(t.out[:0], out...)
	t.ok = true
}

// reuse appends to dst[:0] the compressed bytes of the kept page when src
// is that page.
func (t *twinPage) reuse(dst, src []byte) ([]byte, bool) {
	if t == nil || !t.ok || !bytes.Equal(t.src, src) {
		return dst, false
	}
	return append(dst[:0], t.out...), true
}
