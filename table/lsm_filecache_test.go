package table

import (
	"path"
	"sync/atomic"
	"testing"
)

// closeCounting counts the data files opened and closed through it.
type closeCounting struct {
	FileIO
	opened, closed atomic.Int64
}

func (c *closeCounting) Open(p string) (ReadableFile, error) {
	f, err := c.FileIO.Open(p)
	if err != nil {
		return nil, err
	}
	c.opened.Add(1)
	return &closeCounted{ReadableFile: f, c: c}, nil
}

type closeCounted struct {
	ReadableFile
	c *closeCounting
}

func (f *closeCounted) Close() error {
	f.c.closed.Add(1)
	return f.ReadableFile.Close()
}

func TestDataFileCacheKeepsLookupFilesOpen(t *testing.T) {
	plain := newKVBucket(t, 1<<20)
	f := writeKV(t, plain, "data-a.parquet", 1, []kvRow{{k: 1, v: "a", seq: 1}, {k: 5, v: "b", seq: 2}})
	fio := &closeCounting{FileIO: plain.fio}
	cache := NewDataFileCache(fio, plain.schema)
	b, err := NewDataBucketFiles(fio, plain.dir, plain.schema, BucketFilesOptions{
		TargetFileSize: 1 << 20, NewFileName: func() string { return "unused" }, LookupCache: cache,
	})
	if err != nil {
		t.Fatal(err)
	}
	keys := [][]byte{plain.mustKey(t, 1), plain.mustKey(t, 3), plain.mustKey(t, 5)}
	for i := 0; i < 3; i++ {
		pos, err := b.FindKeys(f, keys)
		if err != nil {
			t.Fatal(err)
		}
		if pos[0] != 0 || pos[1] != -1 || pos[2] != 1 {
			t.Fatalf("positions %v", pos)
		}
	}
	if fio.opened.Load() != 1 || fio.closed.Load() != 0 || cache.Len() != 1 {
		t.Fatalf("3 lookups opened %d files and closed %d; cache holds %d", fio.opened.Load(), fio.closed.Load(), cache.Len())
	}
	// A file in use when evicted closes on its release, not before.
	d, release, err := cache.acquire(path.Join(plain.dir, f.FileName))
	if err != nil {
		t.Fatal(err)
	}
	cache.Retain(func(string) bool { return false })
	if fio.closed.Load() != 0 || cache.Len() != 0 {
		t.Fatalf("evicted file in use: closed %d, cache holds %d", fio.closed.Load(), cache.Len())
	}
	if d.NumRows() != 2 {
		t.Fatalf("file in use reads %d rows", d.NumRows())
	}
	release()
	if fio.closed.Load() != 1 {
		t.Fatalf("released evicted file: closed %d times, want 1", fio.closed.Load())
	}
	if _, err := b.FindKeys(f, keys); err != nil || fio.opened.Load() != 2 {
		t.Fatalf("lookup after eviction: %v, %d opens", err, fio.opened.Load())
	}
	cache.Close()
	if fio.closed.Load() != 2 {
		t.Fatalf("Close left files open: %d of 2 closed", fio.closed.Load())
	}
}

func (b *DataBucketFiles) mustKey(t *testing.T, k int32) []byte {
	t.Helper()
	key, err := b.EncodeKey(EncodeBinaryRow([]DataType{Int().NotNull()}, []Datum{IntDatum(int64(k))}))
	if err != nil {
		t.Fatal(err)
	}
	return key
}
