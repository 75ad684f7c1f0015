package listing

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/lakestate/lakestate/table"
)

// Source is what a listing reads from its table. *table.Table provides it
// through [TableSource].
type Source interface {
	// Snapshot reads one snapshot document.
	Snapshot(id int64) (*table.Snapshot, error)
	// LiveFiles walks a snapshot's whole manifest chain: its live data
	// entries and the entries of its index manifest.
	LiveFiles(id int64) ([]table.ManifestEntry, []table.IndexManifestEntry, error)
	// ReadDelta reads only the delta manifests of one snapshot, and names
	// its index manifest.
	ReadDelta(id int64) ([]table.ManifestEntry, string, error)
	// ReadIndexManifest reads one index manifest.
	ReadIndexManifest(name string) ([]table.IndexManifestEntry, error)
	// BucketPath is the table-relative directory of a bucket's data files.
	BucketPath(partition []byte, bucket int32) (string, error)
}

// readPlan is the I/O one listing needs, decided from the set alone.
type readPlan struct {
	target int64
	// seed: walk the full chain of target. Otherwise read the deltas of
	// (from, target] and the index manifest if its name is not indexName.
	seed      bool
	from      int64
	indexName string
}

// planRead decides how to bring set to target.
func planRead(set *LiveSet, target int64) (readPlan, error) {
	if !set.Seeded() {
		return readPlan{target: target, seed: true}, nil
	}
	if target < set.Snapshot() {
		return readPlan{}, fmt.Errorf("listing: snapshot %d requested, the set is already at %d", target, set.Snapshot())
	}
	return readPlan{target: target, from: set.Snapshot(), indexName: set.IndexManifest()}, nil
}

// readResult is what a plan read: either a full listing or the deltas.
type readResult struct {
	plan      readPlan
	seeded    bool // a full walk, because the plan asked or a delta was gone
	live      []table.ManifestEntry
	deltas    [][]table.ManifestEntry // deltas[i] is snapshot from+1+i
	indexName string
	index     []table.IndexManifestEntry
	indexRead bool
	err       error
}

// read performs a plan. A delta whose snapshot has already expired is no
// longer readable; the listing then falls back to one full walk.
func read(src Source, p readPlan) readResult {
	if !p.seed {
		r := readDeltas(src, p)
		if !errors.Is(r.err, fs.ErrNotExist) {
			return r
		}
	}
	return readFull(src, p)
}

func readDeltas(src Source, p readPlan) readResult {
	r := readResult{plan: p, indexName: p.indexName}
	for id := p.from + 1; id <= p.target; id++ {
		entries, indexName, err := src.ReadDelta(id)
		if err != nil {
			r.err = fmt.Errorf("listing: delta of snapshot %d: %w", id, err)
			return r
		}
		r.deltas = append(r.deltas, entries)
		r.indexName = indexName
	}
	if r.indexName != p.indexName {
		r.indexRead = true
		if r.indexName != "" {
			idx, err := src.ReadIndexManifest(r.indexName)
			if err != nil {
				r.err = fmt.Errorf("listing: index manifest %s of snapshot %d: %w", r.indexName, p.target, err)
				return r
			}
			r.index = idx
		}
	}
	return r
}

func readFull(src Source, p readPlan) readResult {
	r := readResult{plan: p, seeded: true, indexRead: true}
	snap, err := src.Snapshot(p.target)
	if err != nil {
		r.err = fmt.Errorf("listing: snapshot %d: %w", p.target, err)
		return r
	}
	live, index, err := src.LiveFiles(p.target)
	if err != nil {
		r.err = fmt.Errorf("listing: live files of snapshot %d: %w", p.target, err)
		return r
	}
	r.live, r.indexName, r.index = live, snap.IndexManifest, index
	return r
}

// apply folds a read into set. On error the set is left unseeded, so the
// next listing starts over with a full walk instead of building on a set
// that may have diverged.
func apply(set *LiveSet, r readResult) (LiveFiles, error) {
	if r.err != nil {
		return LiveFiles{}, r.err
	}
	if err := applyRead(set, r); err != nil {
		*set = *NewLiveSet(set.bucketPath)
		return LiveFiles{}, err
	}
	return set.Files(), nil
}

func applyRead(set *LiveSet, r readResult) error {
	if r.seeded {
		return set.Seed(r.plan.target, r.live, r.indexName, r.index)
	}
	if set.Snapshot() != r.plan.from {
		return fmt.Errorf("listing: read from snapshot %d, the set is at %d", r.plan.from, set.Snapshot())
	}
	for i, d := range r.deltas {
		if err := set.Fold(r.plan.from+1+int64(i), d); err != nil {
			return err
		}
	}
	if r.indexRead {
		set.SetIndex(r.indexName, r.index)
	}
	return nil
}
