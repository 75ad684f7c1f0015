package table

import "github.com/parquet-go/parquet-go/format"

// The values of a probe's hits lie at random places of files much larger
// than the CPU caches: each row read misses the cache, and often the TLB,
// and a read waits for its miss before the next one starts. Of a mapped
// file, the rows' values are first touched all at once, with independent
// loads whose misses overlap; the reads that follow find them in cache.

// memoryFile is a ReadableFile whose bytes are in memory (mappedFile).
type memoryFile interface {
	// touch loads a byte at each offset; offsets outside the file, or in
	// pages it lost, are skipped.
	touch(offs []int64) byte
}

// touchSpacing is the distance between the bytes touched of a run of
// byte-array values: a few lines apart, so the hardware prefetcher brings
// in the lines between them.
const touchSpacing = 256

// prefetchRows touches the values of the ascending file rows in leaf
// columns cols, where page layouts place them (uncompressed pages with few
// of the rows; pages with more are read whole, in a stream).
func (d *DataFile) prefetchRows(cols []int, rows []int64) {
	mf, ok := d.f.(memoryFile)
	if !ok || len(rows) == 0 {
		return
	}
	sc := pageScratchPool.Get().(*pageScratch)
	sc.win = sc.win[:0]
	defer pageScratchPool.Put(sc)
	var offs []int64
	for _, c := range cols {
		offs = d.appendValueOffsets(offs, c, rows, sc)
	}
	mf.touch(offs)
}

// appendValueOffsets appends the file offsets of the values of rows in
// leaf column c that prefetchRows touches.
func (d *DataFile) appendValueOffsets(offs []int64, c int, rows []int64, sc *pageScratch) []int64 {
	w := int64(d.leaves[c].fixedWidth())
	for gi := range d.groups {
		g := &d.groups[gi]
		spans := g.pages[c]
		if spans == nil || !d.sparsePages(g, c) || d.chunkMeta(g, c).Codec != format.Uncompressed {
			continue
		}
		p := 0
		for i := 0; i < len(rows); {
			r := rows[i]
			if r < g.first || r >= g.first+g.rows {
				i++
				continue
			}
			for p < len(spans) && spans[p].end <= r {
				p++
			}
			if p == len(spans) {
				break
			}
			s := spans[p]
			j := i + 1
			for j < len(rows) && rows[j] < s.end {
				j++
			}
			if j-i >= wholePageLeast(d.f, s.end-s.first) { // read whole (readGroupRows)
				i = j
				continue
			}
			lay := d.pageLayout(g, c, p, sc)
			for ; i < j; i++ {
				if lay == noLayout || lay.frames != nil {
					continue
				}
				k := lay.valueOf(int(rows[i] - s.first))
				if k < 0 {
					continue
				}
				if w > 0 {
					offs = append(offs, s.off+lay.values+int64(k)*w)
					continue
				}
				a, b := k/lay.markEvery(), k/lay.markEvery()+1
				if b >= len(lay.marks) {
					continue
				}
				for o := int64(lay.marks[a]); o < int64(lay.marks[b]); o += touchSpacing {
					offs = append(offs, s.off+lay.values+o)
				}
			}
		}
	}
	return offs
}
