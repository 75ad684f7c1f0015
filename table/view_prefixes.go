package table

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
)

// ScanPrefixes returns the live rows whose trimmed primary key starts with
// one of prefixes, in key order, and for each row the index of its prefix.
// Every prefix holds the same number of leading key fields (at most all of
// them), and prefixes are sorted ascending and distinct. It is one sorted
// pass per file: the key pages are decoded once for all prefixes, and the
// other columns only from the pages that hold matched rows. Without deletion
// vectors the newest version of each key wins and a retraction drops it.
func (v *View) ScanPrefixes(prefixes [][]Datum) (arrow.Record, []int32, error) {
	enc, err := v.encodePrefixes(prefixes)
	if err != nil {
		return nil, nil, err
	}
	cands := prefixScratch.Get().(*prefixRows)
	defer cands.release()
	for _, bk := range v.order {
		for _, run := range v.buckets[bk].runs {
			for _, f := range run.files {
				if err := v.prefixRowsOf(f, enc, cands); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	if !cands.sorted() {
		sort.Stable(cands)
	}
	hits := slices.Grow(cands.hits[:0], len(cands.rows))
	of := make([]int32, 0, len(cands.rows))
	asRead := len(cands.keyCols) == 1 // the kept rows are the rows read, in order
	for i, r := range cands.rows {
		if !cands.live(i, v.dv) {
			asRead = false
			continue
		}
		asRead = asRead && int(r.keyRow) == i
		hits = append(hits, probeHit{id: int32(len(hits)), f: r.f, pos: r.pos})
		of = append(of, r.prefix)
	}
	// The key fields come from the key columns read for the candidates.
	known := make([]*colVec, len(v.schema.Fields))
	for k, fi := range v.keyIdx {
		if asRead {
			known[fi] = cands.keyCols[0][k]
			continue
		}
		known[fi] = newColVec(v.schema.Fields[fi].Type)
		for i, r := range cands.rows {
			if cands.live(i, v.dv) {
				known[fi].appendRow(cands.keyCols[r.keyCols][k], int(r.keyRow))
			}
		}
	}
	cands.hits = hits
	rec, _, err := v.assembleRows(hits, known)
	if err != nil {
		return nil, nil, err
	}
	return rec, of, nil
}

// prefixRow is a row of a file under one of the prefixes of a scan.
type prefixRow struct {
	prefix     int32
	f          *viewFile
	pos        int64
	seq        int64
	kind       ValueKind
	keyAt, end int32 // the row's encoded key in prefixRows.keys
	keyCols    int32 // the row's key fields are row keyRow of prefixRows.keyCols[keyCols]
	keyRow     int32
}

// prefixRows are candidate rows with their encoded keys, ordered by key and
// then newest first. A scan takes one from prefixScratch and returns it, so
// its buffers serve the next scan of any view (views serve concurrent reads,
// so the scratch cannot live on the View).
type prefixRows struct {
	rows    []prefixRow
	keys    []byte
	keyCols [][]*colVec // per file, the key fields of its candidate rows
	matches []probeMatch
	hits    []probeHit
	// per file, the positions of its matches and their sequence numbers
	positions []int64
	seqs      *colVec
}

var prefixScratch = sync.Pool{New: func() any { return new(prefixRows) }}

// maxScratchRows bounds the candidates whose buffers go back to
// prefixScratch, so one wide scan does not pin its memory.
const maxScratchRows = 1 << 14

// release empties p and returns it to prefixScratch. The key columns are
// dropped, not reused: the record of a scan may have been built from them.
func (p *prefixRows) release() {
	if cap(p.rows) > maxScratchRows || cap(p.hits) > maxScratchRows {
		return
	}
	clear(p.rows)
	clear(p.keyCols)
	clear(p.hits)
	p.rows, p.keys, p.keyCols, p.matches, p.hits, p.positions = p.rows[:0], p.keys[:0], p.keyCols[:0], p.matches[:0], p.hits[:0], p.positions[:0]
	prefixScratch.Put(p)
}

// live reports whether candidate i is a row the scan returns: the newest
// version of its key (tables without deletion vectors) and not a retraction.
func (p *prefixRows) live(i int, dv bool) bool {
	if !dv && i > 0 && bytes.Equal(p.key(i-1), p.key(i)) {
		return false // an older version of the key
	}
	return !p.rows[i].kind.IsRetract()
}

// sorted reports whether the candidates are already in scan order, as they
// are when they come from one file or from files in key order.
func (p *prefixRows) sorted() bool {
	for i := 1; i < len(p.rows); i++ {
		if p.Less(i, i-1) {
			return false
		}
	}
	return true
}

func (p *prefixRows) key(i int) []byte { return p.keys[p.rows[i].keyAt:p.rows[i].end] }
func (p *prefixRows) Len() int         { return len(p.rows) }
func (p *prefixRows) Less(i, j int) bool {
	if c := bytes.Compare(p.key(i), p.key(j)); c != 0 {
		return c < 0
	}
	return p.rows[i].seq > p.rows[j].seq
}

func (p *prefixRows) Swap(i, j int) { p.rows[i], p.rows[j] = p.rows[j], p.rows[i] }

// prefixRowsOf adds the rows of f under the prefixes, minus those its
// deletion vector masks, with their keys, sequence numbers (tables without
// deletion vectors) and kinds.
func (v *View) prefixRowsOf(f *viewFile, enc [][]byte, out *prefixRows) error {
	lo, _ := slices.BinarySearchFunc(enc, f.minKey, comparePrefix)
	hi, found := slices.BinarySearchFunc(enc, f.maxKey, comparePrefix)
	if found {
		hi++
	}
	if lo >= hi {
		return nil
	}
	df, err := v.open(f)
	if err != nil {
		return err
	}
	ranges, err := df.prefixRanges(enc[lo:hi], nil)
	if err != nil {
		return err
	}
	n := 0
	for _, r := range ranges {
		n += int(r[1] - r[0])
	}
	ms := slices.Grow(out.matches[:0], n)
	for i, r := range ranges {
		for pos := r[0]; pos < r[1]; pos++ {
			if f.dv == nil || !f.dv.Contains(uint32(pos)) {
				ms = append(ms, probeMatch{key: int32(lo + i), pos: pos})
			}
		}
	}
	out.matches = ms
	if len(ms) == 0 {
		return nil
	}
	pos := out.positions[:0]
	for _, m := range ms {
		pos = append(pos, m.pos)
	}
	out.positions = pos
	kinds, err := v.kindsAt(f, df, ms)
	if err != nil {
		return err
	}
	var seqs []int64
	if !v.dv {
		if out.seqs == nil {
			out.seqs = newColVec(BigInt().NotNull())
		}
		out.seqs.reset()
		if err := df.readRows(df.seqCol, pos, out.seqs); err != nil {
			return err
		}
		seqs = int64s(out.seqs)
	}
	keyVecs := make([]*colVec, len(df.keyCols))
	for k, c := range df.keyCols {
		keyVecs[k] = newColVec(df.keyTypes[k])
		if err := df.readRows(c, pos, keyVecs[k]); err != nil {
			return err
		}
	}
	out.keyCols = append(out.keyCols, keyVecs)
	out.rows = slices.Grow(out.rows, len(ms))
	for i, m := range ms {
		r := prefixRow{prefix: m.key, f: f, pos: m.pos, keyAt: int32(len(out.keys)), keyCols: int32(len(out.keyCols) - 1), keyRow: int32(i)}
		if kinds != nil {
			r.kind = kinds[i]
		}
		if seqs != nil {
			r.seq = seqs[i]
		}
		for k, t := range df.keyTypes {
			out.keys = keyVecs[k].appendKey(out.keys, t, i)
		}
		r.end = int32(len(out.keys))
		out.rows = append(out.rows, r)
	}
	return nil
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
