package table

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A state table's key leads with a key group that is the same in every row
// of a subtask's file: page bounds must still come from the next key column.
func TestKeyPagesBoundedPastAConstantFirstKeyColumn(t *testing.T) {
	s := &Schema{
		Fields:         []Field{{ID: 0, Name: "kg", Type: Int().NotNull()}, {ID: 1, Name: "k", Type: BigInt().NotNull()}, {ID: 2, Name: "v", Type: String()}},
		HighestFieldID: 2, PrimaryKeys: []string{"kg", "k"},
		Options: map[string]string{OptionBucket: "1", OptionDeletionVectors: "true"},
	}
	sch, err := s.ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer rb.Release()
	const rows = 10 * DefaultPageRows
	seqs := make([]int64, rows)
	for i := 0; i < rows; i++ {
		rb.Field(0).(*array.Int32Builder).Append(7)
		rb.Field(1).(*array.Int64Builder).Append(int64(2 * i))
		rb.Field(2).(*array.StringBuilder).Append("v")
		seqs[i] = int64(i)
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	d, _ := localDataFile(t, s, rec, seqs)
	types := []DataType{Int().NotNull(), BigInt().NotNull()}
	key := func(k int64) []byte { return AppendKeyDatums(nil, types, []Datum{IntDatum(7), IntDatum(k)}) }
	pages := d.keyPages()
	if len(pages) != 10 {
		t.Fatalf("%d key pages, want 10", len(pages))
	}
	for i, pb := range pages {
		lo, hi := key(int64(2*i*DefaultPageRows)), key(int64(2*((i+1)*DefaultPageRows-1)))
		if string(pb.lo) != string(lo) || string(pb.hi) != string(hi) {
			t.Fatalf("page %d bounds %x..%x, want %x..%x", i, pb.lo, pb.hi, lo, hi)
		}
	}
	// A key in the last page is found without the pages before it.
	m, err := d.lookup([][]byte{key(2 * (rows - 3))}, []int32{0}, nil)
	if err != nil || len(m) != 1 || m[0].pos != rows-3 {
		t.Fatalf("lookup: %+v, %v", m, err)
	}
}
