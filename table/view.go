package table

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
)

// ViewInput is what a View is planned from: the live data files of one
// snapshot and the deletion vectors of its buckets.
type ViewInput struct {
	FIO    FileIO
	Schema *Schema
	Files  []ManifestEntry // live files (ADD entries)
	// BucketDir is the directory holding a bucket's data files.
	BucketDir func(partition []byte, bucket int32) (string, error)
	// DeletionVectors per bucket: data file name -> deleted row positions.
	DeletionVectors map[BucketKey]map[string]*roaring.Bitmap
	// Reuse, when set, is an earlier view whose opened files this view
	// shares where the paths match.
	Reuse *View
}

// View is a pinned, planned snapshot of a table: its files per bucket and
// level, their key ranges and deletion vectors. Reads on a View never walk
// manifests. Files open on first use and stay open until Close. A View is
// safe for concurrent reads.
type View struct {
	fio        FileIO
	schema     *Schema
	dv         bool
	keyIdx     []int // schema field of each trimmed primary key
	keyTypes   []DataType
	partIdx    []int
	partTypes  []DataType
	bucketIdx  []int
	bucketTyp  []DataType
	numBuckets int
	buckets    map[BucketKey]*viewBucket
	order      []BucketKey // buckets in (partition bytes, bucket) order
	hidden     []*viewFile // level-0 files of a deletion-vector table: held, never read
}

// viewBucket is one LSM tree of the view. runs are the sorted runs a read
// consults: in deletion-vector mode only levels >= 1 (level 0 is invisible
// until compaction), otherwise every level-0 file as its own run, newest
// first, then each level.
type viewBucket struct {
	key       BucketKey
	partition []byte
	runs      []viewRun
}

type viewRun struct {
	level int32
	files []*viewFile // ascending, non-overlapping key ranges (level >= 1)
}

type viewFile struct {
	meta           DataFileMeta
	path           string
	minKey, maxKey []byte // order-preserving encodings
	dv             *roaring.Bitmap
	mayRetract     bool
	open           *sharedFile
}

// sharedFile is a data file opened on first use and shared by the views
// that hold it; the last view to close closes it.
type sharedFile struct {
	once sync.Once
	df   *DataFile
	err  error
	refs atomic.Int32
}

// NewView plans a view.
func NewView(in ViewInput) (*View, error) {
	s := in.Schema
	v := &View{fio: in.FIO, schema: s, dv: s.DeletionVectors(), buckets: map[BucketKey]*viewBucket{}}
	var err error
	if v.numBuckets, err = s.Buckets(); err != nil {
		return nil, err
	}
	if v.keyIdx, v.keyTypes, err = fieldsOf(s, s.TrimmedPrimaryKeys()); err != nil {
		return nil, err
	}
	if len(v.keyIdx) == 0 {
		return nil, fmt.Errorf("schema %d: no trimmed primary key", s.ID)
	}
	if v.partIdx, v.partTypes, err = fieldsOf(s, s.PartitionKeys); err != nil {
		return nil, err
	}
	if v.bucketIdx, v.bucketTyp, err = fieldsOf(s, s.BucketKeys()); err != nil {
		return nil, err
	}
	byBucket := map[BucketKey][]ManifestEntry{}
	for _, e := range in.Files {
		if e.Kind != FileAdd {
			return nil, fmt.Errorf("view: entry for %s is not an ADD", e.File.FileName)
		}
		k := EntryBucket(e)
		byBucket[k] = append(byBucket[k], e)
	}
	reuse := map[string]*sharedFile{}
	if in.Reuse != nil && in.Reuse.schema.ID == s.ID {
		for _, b := range in.Reuse.buckets {
			for _, r := range b.runs {
				for _, f := range r.files {
					reuse[f.path] = f.open
				}
			}
		}
		for _, f := range in.Reuse.hidden {
			reuse[f.path] = f.open
		}
	}
	for k, entries := range byBucket {
		dir, err := in.BucketDir([]byte(k.Partition), k.Bucket)
		if err != nil {
			return nil, err
		}
		b, err := v.planBucket(k, dir, entries, in.DeletionVectors[k], reuse)
		if err != nil {
			return nil, err
		}
		v.buckets[k] = b
		v.order = append(v.order, k)
	}
	slices.SortFunc(v.order, func(a, b BucketKey) int {
		if c := bytes.Compare([]byte(a.Partition), []byte(b.Partition)); c != 0 {
			return c
		}
		return int(a.Bucket) - int(b.Bucket)
	})
	return v, nil
}

func fieldsOf(s *Schema, names []string) ([]int, []DataType, error) {
	idx := make([]int, len(names))
	types := make([]DataType, len(names))
	for i, n := range names {
		idx[i] = s.FieldIndex(n)
		if idx[i] < 0 {
			return nil, nil, fmt.Errorf("schema %d: no field %q", s.ID, n)
		}
		types[i] = s.Fields[idx[i]].Type
	}
	return idx, types, nil
}

func (v *View) planBucket(k BucketKey, dir string, entries []ManifestEntry, dvs map[string]*roaring.Bitmap, reuse map[string]*sharedFile) (*viewBucket, error) {
	b := &viewBucket{key: k, partition: []byte(k.Partition)}
	levels := map[int32][]*viewFile{}
	for _, e := range entries {
		m := e.File
		f := &viewFile{meta: m, path: path.Join(dir, m.FileName), dv: dvs[m.FileName]}
		if f.open = reuse[f.path]; f.open == nil {
			f.open = &sharedFile{}
		}
		f.open.refs.Add(1)
		f.mayRetract = m.DeleteRowCount == nil || *m.DeleteRowCount > 0
		for _, kb := range []struct {
			row []byte
			dst *[]byte
		}{{m.MinKey, &f.minKey}, {m.MaxKey, &f.maxKey}} {
			ds, err := DecodeBinaryRow(kb.row, v.keyTypes)
			if err != nil {
				return nil, fmt.Errorf("view: file %s: key bounds: %w", m.FileName, err)
			}
			*kb.dst = AppendKeyDatums(nil, v.keyTypes, ds)
		}
		levels[m.Level] = append(levels[m.Level], f)
	}
	lvls := make([]int32, 0, len(levels))
	for l := range levels {
		lvls = append(lvls, l)
	}
	slices.Sort(lvls)
	for _, l := range lvls {
		files := levels[l]
		if l == 0 {
			if v.dv {
				v.hidden = append(v.hidden, files...)
				continue
			}
			// newest first, as Paimon orders level 0
			slices.SortFunc(files, func(a, b *viewFile) int {
				if a.meta.MaxSequenceNumber != b.meta.MaxSequenceNumber {
					return cmpInt64(b.meta.MaxSequenceNumber, a.meta.MaxSequenceNumber)
				}
				return cmpInt64(a.meta.MinSequenceNumber, b.meta.MinSequenceNumber)
			})
			for _, f := range files {
				b.runs = append(b.runs, viewRun{level: 0, files: []*viewFile{f}})
			}
			continue
		}
		slices.SortFunc(files, func(a, b *viewFile) int { return bytes.Compare(a.minKey, b.minKey) })
		for i := 1; i < len(files); i++ {
			if bytes.Compare(files[i-1].maxKey, files[i].minKey) >= 0 {
				return nil, fmt.Errorf("view: level %d of bucket %d: files %s and %s overlap", l, k.Bucket, files[i-1].meta.FileName, files[i].meta.FileName)
			}
		}
		b.runs = append(b.runs, viewRun{level: l, files: files})
	}
	return b, nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// open returns the file's reader, opening it on first use.
func (v *View) open(f *viewFile) (*DataFile, error) {
	s := f.open
	s.once.Do(func() { s.df, s.err = OpenDataFile(v.fio, f.path, v.schema) })
	return s.df, s.err
}

// Schema is the schema the view reads as.
func (v *View) Schema() *Schema { return v.schema }

// Close releases the view's files; a file closes when no view holds it.
func (v *View) Close() error {
	var first error
	release := func(f *viewFile) {
		s := f.open
		if s.refs.Add(-1) != 0 {
			return
		}
		s.once.Do(func() { s.err = fmt.Errorf("data file %s: view closed", f.path) })
		if s.df != nil {
			if err := s.df.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	for _, b := range v.buckets {
		for _, r := range b.runs {
			for _, f := range r.files {
				release(f)
			}
		}
	}
	for _, f := range v.hidden {
		release(f)
	}
	return first
}

// fileFor returns the file of a level >= 1 run whose key range holds key.
func (r *viewRun) fileFor(key []byte) *viewFile {
	i, _ := slices.BinarySearchFunc(r.files, key, func(f *viewFile, k []byte) int {
		if bytes.Compare(f.maxKey, k) < 0 {
			return -1
		}
		return 1
	})
	if i < len(r.files) && bytes.Compare(r.files[i].minKey, key) <= 0 {
		return r.files[i]
	}
	return nil
}
