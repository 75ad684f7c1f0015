package table

import (
	"bytes"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"
)

// A data file written with a schema's cached layout and pooled scratch
// (after other files and after a write that failed) is byte-for-byte the
// file a first writer writes.
func TestDataFileWriterReuseWritesSameBytes(t *testing.T) {
	for _, codec := range []string{"none", "zstd"} {
		t.Run(codec, func(t *testing.T) {
			s := benchSchema(true)
			small := benchRecord(s, benchRows(sortedBenchKeys(0, 3000, 1), 0))
			defer small.Release()
			other := benchRecord(s, benchRows(sortedBenchKeys(5000, 2500, 3), 1))
			defer other.Release()
			opts := DataFileOptions{Compression: codec, PageRows: 256}
			fio := newMemFS()
			write := func(name string) []byte {
				t.Helper()
				if _, err := WriteDataFile(fio, name, s, small, seqRange(0, 3000), nil, opts); err != nil {
					t.Fatal(err)
				}
				b, err := fio.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			first := write("first")
			if _, err := WriteDataFile(fio, "other", s, other, seqRange(7, 2500), nil, opts); err != nil {
				t.Fatal(err)
			}
			w, err := NewDataFileWriter(fio, "failed", s, opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(other, seqRange(0, 2500), nil); err != nil {
				t.Fatal(err)
			}
			if err := w.Write(small, seqRange(0, 3000), nil); err == nil || !strings.Contains(err.Error(), "not strictly ascending") {
				t.Fatalf("write of keys below the previous batch's: %v", err)
			}
			w.Abort()
			if again := write("again"); !bytes.Equal(again, first) {
				t.Fatalf("second file of the same rows is %d bytes, the first %d", len(again), len(first))
			}
		})
	}
}

// A schema edited in place is laid out anew, not from the cache.
func TestDataFileKitFollowsSchemaEdits(t *testing.T) {
	s := benchSchema(true)
	k1, err := kitFor(s, DataFileOptions{}, pageBufferSize)
	if err != nil {
		t.Fatal(err)
	}
	if k2, _ := kitFor(s, DataFileOptions{}, pageBufferSize); k2 != k1 {
		t.Fatal("the same schema got a new kit")
	}
	s.Fields = append(s.Fields, Field{ID: 5, Name: "extra", Type: Int()})
	s.HighestFieldID = 5
	k3, err := kitFor(s, DataFileOptions{}, pageBufferSize)
	if err != nil {
		t.Fatal(err)
	}
	if k3 == k1 || len(k3.layout.parquet.Columns()) != 2+2+6 {
		t.Fatalf("edited schema: kit reused %v, %d columns", k3 == k1, len(k3.layout.parquet.Columns()))
	}
}

// Values made from leveled templates encode exactly as those made by
// parquet-go's constructors: the same file, for nulls, empty strings,
// bytes and records sliced at an offset.
func TestValueTemplatesWriteSameFile(t *testing.T) {
	if !valueWordsOK {
		t.Skip("templates unused")
	}
	vs := &Schema{
		Fields: []Field{
			{ID: 0, Name: "k", Type: BigInt().NotNull()},
			{ID: 1, Name: "i", Type: Int()},
			{ID: 2, Name: "l", Type: BigInt()},
			{ID: 3, Name: "d", Type: Double()},
			{ID: 4, Name: "s", Type: String()},
			{ID: 5, Name: "b", Type: Bytes()},
		},
		HighestFieldID: 5,
		PrimaryKeys:    []string{"k"},
		Options:        map[string]string{"bucket": "1"},
	}
	sch, err := vs.ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
	defer b.Release()
	for i := range 3000 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%5 == 0 {
			for c := 1; c < 6; c++ {
				b.Field(c).AppendNull()
			}
			continue
		}
		b.Field(1).(*array.Int32Builder).Append(int32(-i))
		b.Field(2).(*array.Int64Builder).Append(int64(i) << 40)
		b.Field(3).(*array.Float64Builder).Append(float64(i) / 7)
		b.Field(4).(*array.StringBuilder).Append(strings.Repeat("s", i%4))
		b.Field(5).(*array.BinaryBuilder).Append(bytes.Repeat([]byte{0, byte(i)}, i%3))
	}
	full := b.NewRecordBatch()
	defer full.Release()
	sliced := full.NewSlice(7, 2990)
	defer sliced.Release()
	state := buildStateRecord(t, stateSchema(), 2500)
	defer state.Release()
	for _, c := range []struct {
		s   *Schema
		rec arrow.Record
	}{{vs, full}, {vs, sliced}, {stateSchema(), state}} {
		write := func(templates bool) []byte {
			t.Helper()
			valueWordsOK = templates
			defer func() { valueWordsOK = true }()
			fio := newMemFS()
			n := int(c.rec.NumRows())
			if _, err := WriteDataFile(fio, "f", c.s, c.rec, seqRange(0, n), nil, DataFileOptions{Compression: "none", PageRows: 300}); err != nil {
				t.Fatal(err)
			}
			data, _ := fio.ReadFile("f")
			return data
		}
		if got, want := write(true), write(false); !bytes.Equal(got, want) {
			t.Fatalf("%d rows: %d bytes from templates, %d from constructors", c.rec.NumRows(), len(got), len(want))
		}
	}
}

// A file written by one Write (small page buffer) has the pages, and the
// bytes, of one written through NewDataFileWriter (a page buffer for wide
// values), also when a page of a column holds far more than the small
// buffer.
func TestOneRecordFileSmallPageBuffer(t *testing.T) {
	s := benchSchema(true)
	rows := benchRows(sortedBenchKeys(0, 5000, 1), 0)
	for i := range rows {
		rows[i].Label = strings.Repeat("w", 200+i%50)
	}
	rec := benchRecord(s, rows)
	defer rec.Release()
	for _, codec := range []string{"none", "zstd"} {
		opts := DataFileOptions{Compression: codec}
		fio := newMemFS()
		one, err := WriteDataFile(fio, "one", s, rec, seqRange(0, 5000), nil, opts)
		if err != nil {
			t.Fatal(err)
		}
		w, err := NewDataFileWriter(fio, "multi", s, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rec, seqRange(0, 5000), nil); err != nil {
			t.Fatal(err)
		}
		multi, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		a, _ := fio.ReadFile("one")
		b, _ := fio.ReadFile("multi")
		if !bytes.Equal(a, b) || one.FileSize != multi.FileSize {
			t.Fatalf("%s: one-record file %d bytes, writer's %d", codec, len(a), len(b))
		}
		f, err := parquet.OpenFile(bytes.NewReader(a), int64(len(a)))
		if err != nil {
			t.Fatal(err)
		}
		for c, idx := range f.OffsetIndexes() {
			if len(idx.PageLocations) != 5 {
				t.Fatalf("%s: column %d has %d pages, want 5 of %d rows", codec, c, len(idx.PageLocations), DefaultPageRows)
			}
		}
	}
}

// A page buffer reads, seeks and writes as one slice would, across chunk
// boundaries, and after it was reset for reuse holds nothing of its past.
func TestPageBufferActsAsOneSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	b := &pageBuffer{pool: &pageBufferPool{}}
	for round := range 3 {
		var want []byte
		at := 0
		for range 200 {
			switch rng.IntN(4) {
			case 0, 1: // write, mostly appending
				p := make([]byte, rng.IntN(pageChunk/2))
				for i := range p {
					p[i] = byte(rng.Uint32())
				}
				if n, err := b.Write(p); n != len(p) || err != nil {
					t.Fatalf("write: %d, %v", n, err)
				}
				if end := at + len(p); end > len(want) {
					want = append(want, make([]byte, end-len(want))...)
				}
				copy(want[at:], p)
				at += len(p)
			case 2: // seek
				to := int64(rng.IntN(len(want) + 10))
				got, err := b.Seek(to, io.SeekStart)
				at = min(int(to), len(want))
				if err != nil || got != int64(at) {
					t.Fatalf("seek %d: %d, %v", to, got, err)
				}
			case 3: // read a little
				p := make([]byte, rng.IntN(pageChunk/4))
				n, _ := b.Read(p)
				if !bytes.Equal(p[:n], want[at:at+n]) {
					t.Fatalf("round %d: read %d bytes at %d differ", round, n, at)
				}
				at += n
			}
		}
		if _, err := b.Seek(0, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if n, err := io.Copy(&out, b); err != nil || n != int64(len(want)) {
			t.Fatalf("round %d: copied %d of %d bytes: %v", round, n, len(want), err)
		}
		if !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("round %d: the buffer's bytes differ", round)
		}
		b.release()
	}
}
