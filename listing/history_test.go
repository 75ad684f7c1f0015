package listing

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"slices"

	"github.com/lakestate/lakestate/table"
)

// history is an in-memory table history: each snapshot's delta entries and
// index manifest, with counters of what a listing read.
type history struct {
	snaps   []histSnap // snaps[i] is snapshot i+1
	indexes map[string][]table.IndexManifestEntry
	expired int64 // snapshots <= expired are gone

	fullWalks, deltaReads, indexReads, snapshotReads int
	walkedSnapshots                                  int // deltas folded by full walks
}

type histSnap struct {
	delta []table.ManifestEntry
	index string
}

func newHistory() *history { return &history{indexes: make(map[string][]table.IndexManifestEntry)} }

func (h *history) latest() int64 { return int64(len(h.snaps)) }

func (h *history) commit(delta []table.ManifestEntry, index string) int64 {
	h.snaps = append(h.snaps, histSnap{delta: delta, index: index})
	return h.latest()
}

func (h *history) get(id int64) (histSnap, error) {
	if id < 1 || id > h.latest() || id <= h.expired {
		return histSnap{}, fmt.Errorf("snapshot %d: %w", id, fs.ErrNotExist)
	}
	return h.snaps[id-1], nil
}

func (h *history) Snapshot(id int64) (*table.Snapshot, error) {
	s, err := h.get(id)
	if err != nil {
		return nil, err
	}
	h.snapshotReads++
	return &table.Snapshot{ID: id, IndexManifest: s.index}, nil
}

// LiveFiles folds every delta from the first snapshot: the cost that grows
// with history.
func (h *history) LiveFiles(id int64) ([]table.ManifestEntry, []table.IndexManifestEntry, error) {
	s, err := h.get(id)
	if err != nil {
		return nil, nil, err
	}
	h.fullWalks++
	live := map[fileKey]table.ManifestEntry{}
	for i := int64(1); i <= id; i++ {
		h.walkedSnapshots++
		for _, e := range h.snaps[i-1].delta {
			if e.Kind == table.FileDelete {
				delete(live, keyOf(e))
			}
		}
		for _, e := range h.snaps[i-1].delta {
			if e.Kind == table.FileAdd {
				live[keyOf(e)] = e
			}
		}
	}
	var out []table.ManifestEntry
	for _, e := range live {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b table.ManifestEntry) int {
		if a.File.FileName != b.File.FileName {
			if a.File.FileName < b.File.FileName {
				return -1
			}
			return 1
		}
		return int(a.File.Level - b.File.Level)
	})
	return out, slices.Clone(h.indexes[s.index]), nil
}

func (h *history) ReadDelta(id int64) ([]table.ManifestEntry, string, error) {
	s, err := h.get(id)
	if err != nil {
		return nil, "", err
	}
	h.deltaReads++
	return s.delta, s.index, nil
}

func (h *history) ReadIndexManifest(name string) ([]table.IndexManifestEntry, error) {
	idx, ok := h.indexes[name]
	if !ok {
		return nil, fmt.Errorf("index manifest %s: %w", name, fs.ErrNotExist)
	}
	h.indexReads++
	return idx, nil
}

func (h *history) BucketPath(partition []byte, bucket int32) (string, error) {
	return fmt.Sprintf("bucket-%d", bucket), nil
}

func entry(kind table.FileKind, bucket, level int32, name string, size int64) table.ManifestEntry {
	return table.ManifestEntry{Kind: kind, Partition: table.EmptyBinaryRow(), Bucket: bucket, TotalBuckets: 2,
		File: table.DataFileMeta{FileName: name, FileSize: size, Level: level}}
}

// randomHistory appends n commits shaped like the engine's: a data commit
// adds a level-0 file; a maintenance commit upgrades it (same name, level 1)
// or rewrites a few live files into a new one, and changes the DV index
// manifest now and then.
func randomHistory(h *history, rng *rand.Rand, n int) {
	live := map[string]table.ManifestEntry{}
	names := func() []string {
		var ns []string
		for n := range live {
			ns = append(ns, n)
		}
		slices.Sort(ns)
		return ns
	}
	file := 0
	index := ""
	for c := 0; c < n; c++ {
		var delta []table.ManifestEntry
		switch {
		case c%2 == 0:
			file++
			e := entry(table.FileAdd, int32(file%2), 0, fmt.Sprintf("data-%04d.parquet", file), int64(100+file))
			live[e.File.FileName] = e
			delta = append(delta, e)
		default:
			upgraded := map[string]bool{}
			for _, name := range names() {
				e := live[name]
				if e.File.Level != 0 {
					continue
				}
				up := e
				up.File.Level = 1
				// Either order: upgrades must fold regardless.
				if rng.IntN(2) == 0 {
					delta = append(delta, up, withKind(e, table.FileDelete))
				} else {
					delta = append(delta, withKind(e, table.FileDelete), up)
				}
				live[name] = up
				upgraded[name] = true
			}
			if ns := names(); len(ns) > 4 && rng.IntN(3) == 0 {
				file++
				bucket := live[ns[0]].Bucket
				var in []table.ManifestEntry
				for _, name := range ns {
					if e := live[name]; e.Bucket == bucket && !upgraded[name] && len(in) < 3 {
						in = append(in, e)
					}
				}
				for _, e := range in {
					delta = append(delta, withKind(e, table.FileDelete))
					delete(live, e.File.FileName)
				}
				out := entry(table.FileAdd, bucket, 2, fmt.Sprintf("data-%04d.parquet", file), 500)
				live[out.File.FileName] = out
				delta = append(delta, out)
			}
			if rng.IntN(2) == 0 {
				index = fmt.Sprintf("index-manifest-%d", c)
				h.indexes[index] = []table.IndexManifestEntry{{
					Kind: table.FileAdd, Partition: table.EmptyBinaryRow(), Bucket: 0,
					IndexType: table.IndexTypeDeletionVectors, FileName: fmt.Sprintf("index-%d", c), FileSize: 10,
				}}
			}
		}
		h.commit(delta, index)
	}
}

func withKind(e table.ManifestEntry, k table.FileKind) table.ManifestEntry {
	e.Kind = k
	return e
}
