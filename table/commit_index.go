package table

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
)

// writeDVFiles writes one deletion-vector index file per bucket whose new
// set is not empty. The entries come back in the order of dvs, skipping
// emptied buckets.
func (t *Table) writeDVFiles(dvs []BucketDV) ([]IndexManifestEntry, error) {
	var out []IndexManifestEntry
	for _, d := range dvs {
		if dvSetEmpty(d) {
			continue
		}
		e, err := t.meta.writeDVFile(d.Partition, d.Bucket, d.Vectors)
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
	return out, nil
}

func dvSetEmpty(d BucketDV) bool {
	for _, bm := range d.Vectors {
		if bm != nil && !bm.IsEmpty() {
			return false
		}
	}
	return true
}

// combineIndex applies a commit's deletion-vector changes to the previous
// index manifest: there is one deletion-vector file per (partition, bucket),
// so each bucket in dvs loses its old entry and gets its new one, if any
// (Paimon's bucketed combiner). Other index types pass through. The result
// is in (partition, bucket, type) order and never nil.
func combineIndex(prev []IndexManifestEntry, dvs []BucketDV, written []IndexManifestEntry) []IndexManifestEntry {
	replaced := map[bucketOf]bool{}
	for _, d := range dvs {
		replaced[bucketOf{string(d.Partition), d.Bucket}] = true
	}
	out := make([]IndexManifestEntry, 0, len(prev)+len(written))
	for _, e := range prev {
		if e.IndexType == IndexTypeDeletionVectors && replaced[bucketOf{string(e.Partition), e.Bucket}] {
			continue
		}
		out = append(out, e)
	}
	out = append(out, written...)
	slices.SortFunc(out, func(a, b IndexManifestEntry) int {
		if c := bytes.Compare(a.Partition, b.Partition); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Bucket, b.Bucket); c != 0 {
			return c
		}
		return strings.Compare(a.IndexType, b.IndexType)
	})
	return out
}
