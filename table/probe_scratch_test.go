package table

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A key page whose integer fields do not pack is cached as a copy of the
// scratch vectors it was decoded into. The scratch comes from a pool shared
// by every file, so it may hold vectors for more key fields than this
// file's (left by a file of a longer key): the copy takes only this file's.
func TestUnpackedKeyPageCopyFromLongerScratch(t *testing.T) {
	s := &Schema{
		Fields:         []Field{{ID: 0, Name: "kg", Type: Int().NotNull()}, {ID: 1, Name: "k", Type: BigInt().NotNull()}, {ID: 2, Name: "v", Type: BigInt()}},
		HighestFieldID: 2, PrimaryKeys: []string{"kg", "k"},
		Options: map[string]string{OptionBucket: "1", OptionDeletionVectors: "true"},
	}
	sch, err := s.ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	const rows = 200
	seqs := make([]int64, rows)
	for i := range rows {
		rb.Field(0).(*array.Int32Builder).Append(int32(i / 100))
		rb.Field(1).(*array.Int64Builder).Append(int64(3*(i%100)) << 33) // too sparse to pack
		rb.Field(2).(*array.Int64Builder).Append(int64(i))
		seqs[i] = int64(i)
	}
	rec := rb.NewRecordBatch()
	rb.Release()
	d, _ := localDataFileWith(t, s, rec, seqs, DataFileOptions{PageRows: 64})
	rec.Release()
	d.keyCache = newKeyPageCache(1 << 20)
	pages := d.keyPages()
	sc := new(probeScratch)
	// left by a file keyed on three fields
	sc.prepare([]DataType{Int().NotNull(), BigInt().NotNull(), BigInt().NotNull()})
	kr := d.newKeyPageReader(pages, nil, true)
	defer kr.close()
	for q, pb := range pages {
		n := int(pb.span.end - pb.span.first)
		var page *keyPage
		func() {
			defer guard(d.path, &err)
			page, err = kr.decodeToCache(q, pb.pinned, n, sc)
		}()
		if err != nil {
			t.Fatalf("page %d: %v", q, err)
		}
		if page.packed != nil || len(page.vecs) != 2-pb.pinned {
			t.Fatalf("page %d: packed %v, %d vectors, want unpacked, %d", q, page.packed != nil, len(page.vecs), 2-pb.pinned)
		}
		types := d.keyTypes[pb.pinned:]
		for r := range n {
			want := AppendKeyDatums(nil, []DataType{Int().NotNull(), BigInt().NotNull()}, []Datum{IntDatum(int64((int(pb.span.first) + r) / 100)), IntDatum(int64(3*((int(pb.span.first)+r)%100)) << 33)})
			if got := page.appendKey(nil, types, r); string(got) != string(want[len(want)-len(got):]) {
				t.Fatalf("page %d row %d: key %x, want %x", q, r, got, want)
			}
		}
	}
}
