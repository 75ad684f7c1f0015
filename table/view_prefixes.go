package table

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ScanPrefixes returns the live rows whose trimmed primary key starts with
// one of prefixes, in key order, and for each row the index of its prefix.
// Every prefix holds the same number of leading key fields (at most all of
// them), and prefixes are sorted ascending and distinct. It is one sorted
// pass per file: the key pages are decoded once for all prefixes, and value
// columns are decoded only from the pages that hold matched rows.
func (v *View) ScanPrefixes(prefixes [][]Datum) (arrow.Record, []int32, error) {
	enc, err := v.encodePrefixes(prefixes)
	if err != nil {
		return nil, nil, err
	}
	if !v.dv {
		return v.scanPrefixesMerged(enc)
	}
	var hits []probeHit
	var of []int32 // prefix of each hit
	var ranges [][2]int64
	var matches []probeMatch
	for _, bk := range v.order {
		for _, run := range v.buckets[bk].runs {
			for _, f := range run.files {
				lo, _ := slices.BinarySearchFunc(enc, f.minKey, comparePrefix)
				hi, found := slices.BinarySearchFunc(enc, f.maxKey, comparePrefix)
				if found {
					hi++
				}
				if lo >= hi {
					continue
				}
				df, err := v.open(f)
				if err != nil {
					return nil, nil, err
				}
				if ranges, err = df.prefixRanges(enc[lo:hi], ranges[:0]); err != nil {
					return nil, nil, err
				}
				matches = matches[:0]
				for i, r := range ranges {
					for pos := r[0]; pos < r[1]; pos++ {
						if f.dv == nil || !f.dv.Contains(uint32(pos)) {
							matches = append(matches, probeMatch{key: int32(lo + i), pos: pos})
						}
					}
				}
				kinds, err := v.kindsAt(f, df, matches)
				if err != nil {
					return nil, nil, err
				}
				for i, m := range matches {
					if kinds == nil || !kinds[i].IsRetract() {
						hits = append(hits, probeHit{id: int32(len(hits)), f: f, pos: m.pos})
						of = append(of, m.key)
					}
				}
			}
		}
	}
	noProbe := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 0)
	rec, _, err := v.assembleHits(hits, noProbe)
	if err != nil {
		return nil, nil, err
	}
	return v.keyOrder(rec, of)
}

// comparePrefix compares an encoded key prefix with the same-length start
// of an encoded key.
func comparePrefix(prefix, key []byte) int {
	return bytes.Compare(prefix, key[:min(len(prefix), len(key))])
}

// encodePrefixes encodes prefixes and checks their shape and order.
func (v *View) encodePrefixes(prefixes [][]Datum) ([][]byte, error) {
	enc := make([][]byte, len(prefixes))
	for i, p := range prefixes {
		if len(p) == 0 || len(p) > len(v.keyTypes) || len(p) != len(prefixes[0]) {
			return nil, fmt.Errorf("scan prefixes: prefix %d has %d fields; all need the same number, 1 to %d", i, len(p), len(v.keyTypes))
		}
		for k, d := range p {
			if d.Null && !v.keyTypes[k].Nullable {
				return nil, fmt.Errorf("scan prefixes: prefix %d: key field %d is null", i, k)
			}
		}
		enc[i] = AppendKeyDatums(nil, v.keyTypes[:len(p)], p)
		if i > 0 && bytes.Compare(enc[i-1], enc[i]) >= 0 {
			return nil, fmt.Errorf("scan prefixes: prefix %d is not above prefix %d", i, i-1)
		}
	}
	return enc, nil
}

// keyOrder sorts rows of rec (whose prefix indexes are of) by key: rows of
// one prefix may come from several levels.
func (v *View) keyOrder(rec arrow.Record, of []int32) (arrow.Record, []int32, error) {
	keyCols := make([]arrow.Array, len(v.keyIdx))
	for k, fi := range v.keyIdx {
		keyCols[k] = rec.Column(fi)
	}
	var kb KeyBatch
	if err := kb.EncodeArrow(keyCols, v.keyTypes); err != nil {
		rec.Release()
		return nil, nil, fmt.Errorf("scan prefixes: %w", err)
	}
	perm := make([]int, rec.NumRows())
	for i := range perm {
		perm[i] = i
	}
	if slices.IsSortedFunc(perm, kb.Compare) {
		return rec, of, nil
	}
	slices.SortFunc(perm, kb.Compare)
	sorted, err := takeRows(rec, perm)
	rec.Release()
	if err != nil {
		return nil, nil, fmt.Errorf("scan prefixes: %w", err)
	}
	ofSorted := make([]int32, len(perm))
	for i, p := range perm {
		ofSorted[i] = of[p]
	}
	return sorted, ofSorted, nil
}

// scanPrefixesMerged reads each prefix's rows of a table without deletion
// vectors through the merging reader, bucket by bucket.
func (v *View) scanPrefixesMerged(enc [][]byte) (arrow.Record, []int32, error) {
	var recs []arrow.Record
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	var of []int32
	for i, p := range enc {
		r := keyRange{lo: p, hi: p, hiIncl: true}
		for _, bk := range v.order {
			rec, err := v.readMerged(v.buckets[bk], r)
			if err != nil {
				return nil, nil, err
			}
			for range rec.NumRows() {
				of = append(of, int32(i))
			}
			recs = append(recs, rec)
		}
	}
	cols := make([]arrow.Array, len(v.schema.Fields))
	for c := range cols {
		parts := make([]arrow.Array, len(recs))
		for i, r := range recs {
			parts[i] = r.Column(c)
		}
		if len(parts) == 0 {
			at, err := ArrowType(v.schema.Fields[c].Type)
			if err != nil {
				return nil, nil, err
			}
			cols[c] = array.MakeArrayOfNull(memory.DefaultAllocator, at, 0)
			continue
		}
		a, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			return nil, nil, fmt.Errorf("scan prefixes: %w", err)
		}
		cols[c] = a
	}
	sch, err := v.schema.ArrowSchema()
	if err != nil {
		return nil, nil, err
	}
	rec := array.NewRecordBatch(sch, cols, int64(len(of)))
	for _, c := range cols {
		c.Release()
	}
	if len(v.order) > 1 {
		return v.keyOrder(rec, of)
	}
	return rec, of, nil
}
