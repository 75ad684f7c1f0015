package table

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// framedCodecs returns the codecs of a framed schema's leaf columns.
func framedCodecs(t *testing.T, s *parquet.Schema) []*framedZstdCodec {
	t.Helper()
	var out []*framedZstdCodec
	for _, f := range s.Fields() {
		c, ok := f.Compression().(*framedZstdCodec)
		if !ok {
			t.Fatalf("column %s: codec %T", f.Name(), f.Compression())
		}
		out = append(out, c)
	}
	return out
}

// The column of a key field takes the compressed bytes of its _KEY_
// column's page when its page is the same bytes, and compresses any other
// page itself.
func TestKeyFieldPageTakesKeyColumnFrames(t *testing.T) {
	s := benchSchema(true)
	l, err := newDataFileLayout(s)
	if err != nil {
		t.Fatal(err)
	}
	codecs := framedCodecs(t, framedZstdSchema(l, DefaultZstdFrameBytes, DefaultZstdFrameRows))
	fresh := framedCodecs(t, framedZstdSchema(l, DefaultZstdFrameBytes, DefaultZstdFrameRows))
	page := make([]byte, 8*1024)
	for i := range 1024 {
		copy(page[8*i:], fmt.Appendf(nil, "%08d", i*7))
	}
	for k, fi := range l.keyIdx {
		key, field := codecs[k], codecs[l.fieldCol(fi)]
		kept, err := key.Encode(nil, page)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := fresh[l.fieldCol(fi)].Encode(nil, page)
		if !bytes.Equal(kept, want) {
			t.Fatalf("key %d: the _KEY_ column and the field compress a page differently", k)
		}
		// Mark the kept bytes: the field's page must come from them.
		key.keep.out = append(key.keep.out[:0], "kept"...)
		if got, _ := field.Encode(nil, page); string(got) != "kept" {
			t.Fatalf("key %d: the field's page was compressed again", k)
		}
		other := bytes.Clone(page)
		other[100] ^= 1
		got, _ := field.Encode(nil, other)
		want, _ = fresh[l.fieldCol(fi)].Encode(nil, other)
		if !bytes.Equal(got, want) {
			t.Fatalf("key %d: a page unlike the kept one was not compressed on its own", k)
		}
	}
	for i, c := range codecs {
		if c.twin != nil && c.keep != nil {
			t.Fatalf("column %d both keeps and takes pages", i)
		}
	}
}

// Writers of one schema at the same time each compress with codecs of
// their own (under -race, a shared twinPage is a data race), and write
// what they write alone.
func TestConcurrentWritersOfOneSchema(t *testing.T) {
	s := benchSchema(true)
	const n = 5000
	recs := [2]struct {
		keys []int64
	}{{sortedBenchKeys(0, n, 1)}, {sortedBenchKeys(1, n, 2)}}
	fio := newMemFS()
	write := func(name string, i int) error {
		rec := benchRecord(s, benchRows(recs[i].keys, i))
		defer rec.Release()
		w, err := NewDataFileWriter(fio, name, s, DataFileOptions{PageRows: 256})
		if err != nil {
			return err
		}
		for lo := 0; lo < n; lo += 700 {
			sub := rec.NewSlice(int64(lo), int64(min(n, lo+700)))
			err := w.Write(sub, seqRange(int64(lo), int(sub.NumRows())), nil)
			sub.Release()
			if err != nil {
				return err
			}
		}
		_, err = w.Close()
		return err
	}
	for i := range 2 {
		if err := write(fmt.Sprintf("alone-%d", i), i); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range 4 {
				if errs[i] = write(fmt.Sprintf("together-%d-%d", i, r), i); errs[i] != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		alone, _ := fio.ReadFile(fmt.Sprintf("alone-%d", i))
		for r := range 4 {
			if got, _ := fio.ReadFile(fmt.Sprintf("together-%d-%d", i, r)); !bytes.Equal(got, alone) {
				t.Fatalf("writer %d, file %d: %d bytes unlike the %d written alone", i, r, len(got), len(alone))
			}
		}
	}
}
