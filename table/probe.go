package table

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// probeHit is a probe key's newest live row: its index in the probe batch,
// the file and the row position.
type probeHit struct {
	id  int32
	f   *viewFile
	pos int64
	seq int64
}

// Probe returns the newest live full row of every probe key present, in probe
// order. keys holds the trimmed primary-key columns, and the partition
// columns of a partitioned table, found by name; its rows should be sorted by
// key (they are sorted per bucket if not).
func (v *View) Probe(keys arrow.Record) (arrow.Record, error) {
	rec, _, err := v.ProbeIndexed(keys)
	return rec, err
}

// ProbeIndexed is Probe that also returns, for each result row, the index of
// its probe key in keys (ascending).
func (v *View) ProbeIndexed(keys arrow.Record) (arrow.Record, []int32, error) {
	groups, err := v.routeKeys(keys)
	if err != nil {
		return nil, nil, err
	}
	var hits []probeHit
	for _, g := range groups {
		if v.dv {
			hits, err = v.probeStandalone(g, hits)
		} else {
			hits, err = v.probeMerged(g, hits)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	return v.assembleHits(hits, keys)
}

// probeGroup is the part of a probe batch that falls in one bucket.
type probeGroup struct {
	b    *viewBucket
	keys [][]byte // encoded, ascending
	ids  []int32
}

// routeKeys encodes the probe keys and splits them by bucket.
func (v *View) routeKeys(keys arrow.Record) ([]probeGroup, error) {
	col := func(name string) (arrow.Array, error) {
		idx := keys.Schema().FieldIndices(name)
		if len(idx) == 0 {
			return nil, fmt.Errorf("probe: key record lacks column %q", name)
		}
		return keys.Column(idx[0]), nil
	}
	keyCols := make([]arrow.Array, len(v.keyIdx))
	for k, fi := range v.keyIdx {
		c, err := col(v.schema.Fields[fi].Name)
		if err != nil {
			return nil, err
		}
		if err := checkArrowColumn(v.schema.Fields[fi], c.DataType()); err != nil {
			return nil, fmt.Errorf("probe: %w", err)
		}
		keyCols[k] = c
	}
	var kb KeyBatch
	if err := kb.EncodeArrow(keyCols, v.keyTypes); err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	n := kb.Len()
	if len(v.partIdx) == 0 && v.numBuckets == 1 {
		b := v.buckets[BucketKey{Partition: string(EmptyBinaryRow()), Bucket: 0}]
		if b == nil {
			return nil, nil
		}
		g := probeGroup{b: b, keys: make([][]byte, n), ids: make([]int32, n)}
		for i := range n {
			g.keys[i], g.ids[i] = kb.Key(i), int32(i)
		}
		return []probeGroup{sortGroup(g)}, nil
	}
	partCols := make([]arrow.Array, len(v.partIdx))
	for k, fi := range v.partIdx {
		c, err := col(v.schema.Fields[fi].Name)
		if err != nil {
			return nil, err
		}
		partCols[k] = c
	}
	bucketCols := make([]arrow.Array, len(v.bucketIdx))
	for k, fi := range v.bucketIdx {
		c, err := col(v.schema.Fields[fi].Name)
		if err != nil {
			return nil, err
		}
		bucketCols[k] = c
	}
	pw, bw := NewBinaryRowWriter(len(partCols)), NewBinaryRowWriter(len(bucketCols))
	byBucket := map[BucketKey]*probeGroup{}
	var order []BucketKey
	for i := range n {
		pw.Reset()
		for k, c := range partCols {
			d, err := DatumOf(c, i, v.partTypes[k])
			if err != nil {
				return nil, fmt.Errorf("probe: %w", err)
			}
			pw.Set(k, v.partTypes[k], d)
		}
		bw.Reset()
		for k, c := range bucketCols {
			d, err := DatumOf(c, i, v.bucketTyp[k])
			if err != nil {
				return nil, fmt.Errorf("probe: %w", err)
			}
			bw.Set(k, v.bucketTyp[k], d)
		}
		bk := BucketKey{Partition: string(pw.Bytes()), Bucket: int32(BucketOf(HashBinaryRow(bw.RowBytes()), v.numBuckets))}
		g := byBucket[bk]
		if g == nil {
			b := v.buckets[bk]
			if b == nil {
				continue
			}
			g = &probeGroup{b: b}
			byBucket[bk] = g
			order = append(order, bk)
		}
		g.keys = append(g.keys, kb.Key(i))
		g.ids = append(g.ids, int32(i))
	}
	out := make([]probeGroup, len(order))
	for i, bk := range order {
		out[i] = sortGroup(*byBucket[bk])
	}
	return out, nil
}

// sortGroup orders a group's keys ascending (a no-op for sorted input) and
// drops repeated keys.
func sortGroup(g probeGroup) probeGroup {
	sorted := true
	for i := 1; i < len(g.keys); i++ {
		if bytes.Compare(g.keys[i-1], g.keys[i]) >= 0 {
			sorted = false
			break
		}
	}
	if sorted {
		return g
	}
	perm := make([]int, len(g.keys))
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(a, b int) int { return bytes.Compare(g.keys[a], g.keys[b]) })
	out := probeGroup{b: g.b}
	for _, p := range perm {
		if n := len(out.keys); n > 0 && bytes.Equal(out.keys[n-1], g.keys[p]) {
			continue
		}
		out.keys = append(out.keys, g.keys[p])
		out.ids = append(out.ids, g.ids[p])
	}
	return out
}

// probeStandalone looks keys up level by level in a deletion-vector bucket,
// where every level >= 1 is standalone-correct: the first live row found is
// the answer.
func (v *View) probeStandalone(g probeGroup, hits []probeHit) ([]probeHit, error) {
	keys, ids := g.keys, g.ids
	var matches []probeMatch
	for _, run := range g.b.runs {
		if len(keys) == 0 {
			break
		}
		var restKeys [][]byte
		var restIDs []int32
		for lo := 0; lo < len(keys); {
			f := run.fileFor(keys[lo])
			if f == nil {
				restKeys, restIDs = append(restKeys, keys[lo]), append(restIDs, ids[lo])
				lo++
				continue
			}
			hi := lo + 1
			for hi < len(keys) && bytes.Compare(keys[hi], f.maxKey) <= 0 {
				hi++
			}
			df, err := v.open(f)
			if err != nil {
				return hits, err
			}
			matches, err = df.lookup(keys[lo:hi], ids[lo:hi], matches[:0])
			if err != nil {
				return hits, err
			}
			live := matches[:0]
			for _, m := range matches {
				if f.dv == nil || !f.dv.Contains(uint32(m.pos)) {
					live = append(live, m)
				}
			}
			kinds, err := v.kindsAt(f, df, live)
			if err != nil {
				return hits, err
			}
			// keys without a live row here stay pending for the next level
			li := 0
			for j := lo; j < hi; j++ {
				if li < len(live) && live[li].key == ids[j] {
					if kinds == nil || !kinds[li].IsRetract() {
						hits = append(hits, probeHit{id: ids[j], f: f, pos: live[li].pos})
					}
					li++
					continue
				}
				restKeys, restIDs = append(restKeys, keys[j]), append(restIDs, ids[j])
			}
			lo = hi
		}
		keys, ids = restKeys, restIDs
	}
	return hits, nil
}

// kindsAt reads the value kinds of matched rows of a file that may hold
// retractions; nil when it holds none.
func (v *View) kindsAt(f *viewFile, df *DataFile, ms []probeMatch) ([]ValueKind, error) {
	if !f.mayRetract || len(ms) == 0 {
		return nil, nil
	}
	kv := newColVec(TinyInt().NotNull())
	if err := df.readRows(df.kindCol, matchPositions(ms), kv); err != nil {
		return nil, err
	}
	out := make([]ValueKind, kv.n)
	for i := range out {
		out[i] = ValueKind(int8(kv.fixed[i]))
	}
	return out, nil
}

func matchPositions(ms []probeMatch) []int64 {
	pos := make([]int64, len(ms))
	for i, m := range ms {
		pos[i] = m.pos
	}
	return pos
}

// probeMerged looks keys up in every run of a bucket without deletion
// vectors and keeps, per key, the row with the highest sequence number; a
// key whose newest row is a retraction is absent.
func (v *View) probeMerged(g probeGroup, hits []probeHit) ([]probeHit, error) {
	best := map[int32]probeHit{}
	var matches []probeMatch
	for _, run := range g.b.runs {
		for _, f := range run.files {
			lo, _ := slices.BinarySearchFunc(g.keys, f.minKey, bytes.Compare)
			hi, found := slices.BinarySearchFunc(g.keys, f.maxKey, bytes.Compare)
			if found {
				hi++
			}
			if lo >= hi {
				continue
			}
			df, err := v.open(f)
			if err != nil {
				return hits, err
			}
			matches, err = df.lookup(g.keys[lo:hi], g.ids[lo:hi], matches[:0])
			if err != nil {
				return hits, err
			}
			if len(matches) == 0 {
				continue
			}
			sv := newColVec(BigInt().NotNull())
			if err := df.readRows(df.seqCol, matchPositions(matches), sv); err != nil {
				return hits, err
			}
			seqs := int64s(sv)
			for i, m := range matches {
				if cur, ok := best[m.key]; !ok || seqs[i] > cur.seq {
					best[m.key] = probeHit{id: m.key, f: f, pos: m.pos, seq: seqs[i]}
				}
			}
		}
	}
	byFile := map[*viewFile][]probeMatch{}
	for _, h := range best {
		byFile[h.f] = append(byFile[h.f], probeMatch{key: h.id, pos: h.pos})
	}
	for f, ms := range byFile {
		slices.SortFunc(ms, func(a, b probeMatch) int { return cmpInt64(a.pos, b.pos) })
		df, err := v.open(f)
		if err != nil {
			return hits, err
		}
		kinds, err := v.kindsAt(f, df, ms)
		if err != nil {
			return hits, err
		}
		for i, m := range ms {
			if kinds == nil || !kinds[i].IsRetract() {
				hits = append(hits, probeHit{id: m.key, f: f, pos: m.pos})
			}
		}
	}
	return hits, nil
}

// assembleHits reads the full rows of the hits, file by file and page by
// page, and returns them ordered by probe index. Fields the probe record
// carries (the key, the partition) are copied from it rather than decoded.
func (v *View) assembleHits(hits []probeHit, keys arrow.Record) (arrow.Record, []int32, error) {
	fromProbe := make([]*colVec, len(v.schema.Fields))
	for i, f := range v.schema.Fields {
		if idx := keys.Schema().FieldIndices(f.Name); len(idx) > 0 {
			fromProbe[i], _ = vecOfArrow(keys.Column(idx[0]), f.Type)
		}
	}
	return v.assembleRows(hits, fromProbe)
}

// assembleRows is assembleHits with the fields known in advance given as
// fromProbe (per schema field, row i for probe index i; nil: read it).
func (v *View) assembleRows(hits []probeHit, fromProbe []*colVec) (arrow.Record, []int32, error) {
	slices.SortFunc(hits, func(a, b probeHit) int {
		if a.f != b.f {
			return strings.Compare(a.f.path, b.f.path)
		}
		return cmpInt64(a.pos, b.pos)
	})
	fields := v.schema.Fields
	type fileRows struct {
		vecs []*colVec
	}
	var parts []fileRows
	where := make([][2]int32, len(hits)) // (part, row in part)
	for lo := 0; lo < len(hits); {
		hi := lo
		for hi < len(hits) && hits[hi].f == hits[lo].f {
			hi++
		}
		f := hits[lo].f
		df, err := v.open(f)
		if err != nil {
			return nil, nil, err
		}
		pos := make([]int64, hi-lo)
		for i := lo; i < hi; i++ {
			pos[i-lo] = hits[i].pos
			where[i] = [2]int32{int32(len(parts)), int32(i - lo)}
		}
		cols := make([]int, 0, len(fields))
		for i := range fields {
			if c := df.fieldCols[i]; c >= 0 && fromProbe[i] == nil {
				cols = append(cols, c)
			}
		}
		df.prefetchRows(cols, pos)
		vecs := make([]*colVec, len(fields))
		for i, fd := range fields {
			if fromProbe[i] != nil {
				continue
			}
			vecs[i] = newColVec(fd.Type)
			if c := df.fieldCols[i]; c >= 0 {
				if err := df.readRows(c, pos, vecs[i]); err != nil {
					return nil, nil, err
				}
			} else {
				for range pos {
					vecs[i].appendNull()
				}
			}
		}
		parts = append(parts, fileRows{vecs: vecs})
		lo = hi
	}
	order := make([]int, len(hits))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return int(hits[a].id) - int(hits[b].id) })
	ids := make([]int32, len(hits))
	for i, o := range order {
		ids[i] = hits[o].id
	}
	outs := make([]*colVec, len(fields))
	for i, fd := range fields {
		outs[i] = newColVec(fd.Type)
		if src := fromProbe[i]; src != nil {
			outs[i].gather(src, ids)
			continue
		}
		for _, o := range order {
			w := where[o]
			outs[i].appendRow(parts[w[0]].vecs[i], int(w[1]))
		}
	}
	rec, err := vecsRecord(v.schema, outs)
	return rec, ids, err
}
