package table

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BenchmarkWriteEventFile encodes (no I/O) a 100K-row file of the shape of
// an event table's state: a BIGINT key, a TIMESTAMP(3) event time and a
// nullable BIGINT value.
func BenchmarkWriteEventFile(b *testing.B) {
	s := &Schema{
		Fields: []Field{
			{ID: 0, Name: "k", Type: BigInt().NotNull()},
			{ID: 1, Name: "ts", Type: Timestamp(3).NotNull()},
			{ID: 2, Name: "v", Type: BigInt()},
		},
		HighestFieldID: 2,
		PrimaryKeys:    []string{"k"},
		Options:        map[string]string{"bucket": "1"},
	}
	sch, err := s.ArrowSchema()
	if err != nil {
		b.Fatal(err)
	}
	rb := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
	defer rb.Release()
	const n = 100_000
	for i := range n {
		rb.Field(0).(*array.Int64Builder).Append(int64(i))
		rb.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000 + int64(i*37%9973)))
		rb.Field(2).(*array.Int64Builder).Append(int64(i * 3))
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	fio := &sinkFS{memFS: newMemFS()}
	seqs := seqRange(0, n)
	for b.Loop() {
		if _, err := WriteDataFile(fio, "f", s, rec, seqs, nil, DataFileOptions{Compression: "none"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteStringKeyFile encodes (no I/O) a 100K-row file keyed by a
// 24-byte string, with a string and a BIGINT value: the key's bytes are
// written twice, as _KEY_ column and as the key field's column.
func BenchmarkWriteStringKeyFile(b *testing.B) {
	s := &Schema{
		Fields: []Field{
			{ID: 0, Name: "k", Type: String().NotNull()},
			{ID: 1, Name: "s", Type: String()},
			{ID: 2, Name: "v", Type: BigInt()},
		},
		HighestFieldID: 2,
		PrimaryKeys:    []string{"k"},
		Options:        map[string]string{"bucket": "1"},
	}
	sch, err := s.ArrowSchema()
	if err != nil {
		b.Fatal(err)
	}
	rb := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
	defer rb.Release()
	const n = 100_000
	for i := range n {
		rb.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("user-%019d", i*7919))
		rb.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("%x/item", i*2654435761%1000003))
		rb.Field(2).(*array.Int64Builder).Append(int64(i * 3))
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	fio := &sinkFS{memFS: newMemFS()}
	seqs := seqRange(0, n)
	for b.Loop() {
		if _, err := WriteDataFile(fio, "f", s, rec, seqs, nil, DataFileOptions{Compression: "none"}); err != nil {
			b.Fatal(err)
		}
	}
}
