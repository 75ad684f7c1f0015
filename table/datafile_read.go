package table

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"
)

// DataFile is an opened data file of a primary-key table: footer and page
// index parsed, columns resolved against a schema (by field id, then by
// name, as Paimon's readers do). It is immutable after open and safe for
// concurrent reads.
type DataFile struct {
	id        uint64        // names the open file in keyCache
	keyCache  *keyPageCache // keyPageCacheOfProcess but in tests
	path      string
	f         ReadableFile
	pf        *parquet.File
	schema    *Schema
	keyTypes  []DataType
	keyCols   []int // leaf column of each trimmed key field
	seqCol    int
	kindCol   int
	fieldCols []int // leaf column of each schema field, -1 when the file lacks it
	leaves    []leafInfo
	groups    []rowGroupInfo
	numRows   int64

	keyPagesOnce  sync.Once
	keyPageBounds []pageBound
}

type leafInfo struct {
	kind    parquet.Kind
	maxDef  byte
	typeLen int // bytes of a FIXED_LEN_BYTE_ARRAY value
}

type rowGroupInfo struct {
	rg      parquet.RowGroup
	ordinal int
	first   int64 // file row position of the group's first row
	rows    int64
	pages   [][]pageSpan // per leaf column; nil when the file has no offset index
	checked []chunkCheck // per leaf column
	dicts   []chunkDict  // per leaf column
	layouts []chunkLayouts
}

// chunkCheck validates a column chunk's page headers once, before the
// decoder first reads it.
type chunkCheck struct {
	once sync.Once
	err  error
}

// pageSpan is one data page: its rows [first, end) within the file, the
// offset of its header and its size, header included.
type pageSpan struct {
	first, end int64
	off, size  int64
}

// corruptError names the file and what is wrong with it.
func corruptError(path string, err error) error {
	return fmt.Errorf("data file %s: %w", path, err)
}

// guard turns a panic of the parquet decoder into an error naming the file.
func guard(path string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("data file %s: corrupt or truncated: %v", path, r)
	}
}

// OpenDataFile opens a data file to read it as schema s.
func OpenDataFile(fio FileIO, path string, s *Schema) (*DataFile, error) {
	f, err := fio.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	d, err := openDataFile(f, path, s)
	if err != nil {
		f.Close()
		return nil, err
	}
	return d, nil
}

func openDataFile(f ReadableFile, path string, s *Schema) (d *DataFile, err error) {
	defer guard(path, &err)
	if err := checkFraming(f, f.Size()); err != nil {
		return nil, corruptError(path, err)
	}
	pf, err := parquet.OpenFile(f, f.Size(), parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true), parquet.ReadBufferSize(16<<10))
	if err != nil {
		return nil, corruptError(path, err)
	}
	if err := checkChunks(pf.Metadata(), f.Size()); err != nil {
		return nil, corruptError(path, err)
	}
	d = &DataFile{id: openDataFiles.Add(1), keyCache: keyPageCacheOfProcess, path: path, f: f, pf: pf, schema: s, numRows: pf.NumRows()}
	if err := d.resolveColumns(); err != nil {
		return nil, corruptError(path, err)
	}
	first := int64(0)
	for gi, rg := range pf.RowGroups() {
		g := rowGroupInfo{rg: rg, ordinal: gi, first: first, rows: rg.NumRows()}
		if g.rows < 0 {
			return nil, corruptError(path, fmt.Errorf("row group %d has %d rows", gi, g.rows))
		}
		chunks := rg.ColumnChunks()
		if len(chunks) != len(d.leaves) {
			return nil, corruptError(path, fmt.Errorf("row group %d has %d column chunks for %d columns", gi, len(chunks), len(d.leaves)))
		}
		g.pages = make([][]pageSpan, len(chunks))
		g.checked = make([]chunkCheck, len(chunks))
		g.dicts = make([]chunkDict, len(chunks))
		g.layouts = make([]chunkLayouts, len(chunks))
		for c, ch := range chunks {
			oi, err := ch.OffsetIndex()
			if err != nil || oi == nil || oi.NumPages() == 0 {
				continue
			}
			spans := make([]pageSpan, oi.NumPages())
			for p := range spans {
				spans[p].first = first + oi.FirstRowIndex(p)
				spans[p].off = oi.Offset(p)
				spans[p].size = oi.CompressedPageSize(p)
				if p > 0 {
					spans[p-1].end = spans[p].first
					if spans[p].first < spans[p-1].first {
						return nil, corruptError(path, fmt.Errorf("column %d: offset index rows go backwards", c))
					}
				}
			}
			spans[len(spans)-1].end = first + g.rows
			g.pages[c] = spans
		}
		d.groups = append(d.groups, g)
		first += g.rows
	}
	if first != d.numRows {
		return nil, corruptError(path, fmt.Errorf("row groups hold %d rows, footer says %d", first, d.numRows))
	}
	return d, nil
}

func (d *DataFile) resolveColumns() error {
	fields := d.pf.Schema().Fields()
	byName := map[string]int{}
	byID := map[int]int{}
	for i, f := range fields {
		if !f.Leaf() || f.Repeated() {
			return fmt.Errorf("column %q is nested or repeated; only flat columns are supported", f.Name())
		}
		kind := f.Type().Kind()
		var def byte
		if f.Optional() {
			def = 1
		}
		d.leaves = append(d.leaves, leafInfo{kind: kind, maxDef: def, typeLen: f.Type().Length()})
		byName[f.Name()] = i
		if f.ID() != 0 {
			byID[f.ID()] = i
		}
	}
	find := func(id int, name string) int {
		if i, ok := byID[id]; ok && id != 0 {
			return i
		}
		if i, ok := byName[name]; ok {
			return i
		}
		return -1
	}
	s := d.schema
	for _, name := range s.TrimmedPrimaryKeys() {
		fi := s.FieldIndex(name)
		if fi < 0 {
			return fmt.Errorf("primary key %q is not a field of schema %d", name, s.ID)
		}
		c := find(s.Fields[fi].ID+keyFieldIDOffset, keyColumnPrefix+name)
		if c < 0 {
			return fmt.Errorf("no key column %s%s", keyColumnPrefix, name)
		}
		d.keyCols = append(d.keyCols, c)
		d.keyTypes = append(d.keyTypes, s.Fields[fi].Type)
	}
	if d.seqCol = find(seqFieldID, seqColumnName); d.seqCol < 0 {
		return fmt.Errorf("no %s column", seqColumnName)
	}
	if d.kindCol = find(kindFieldID, kindColumnName); d.kindCol < 0 {
		return fmt.Errorf("no %s column", kindColumnName)
	}
	for _, f := range s.Fields {
		d.fieldCols = append(d.fieldCols, find(f.ID, f.Name))
	}
	return nil
}

// Path is the file's path.
func (d *DataFile) Path() string { return d.path }

// NumRows is the number of rows in the file, deleted ones included.
func (d *DataFile) NumRows() int64 { return d.numRows }

// openDataFiles counts the data files opened, to give each its id.
var openDataFiles atomic.Uint64

// Close releases the file and its cached key pages.
func (d *DataFile) Close() error {
	d.keyCache.dropFile(d.id)
	return d.f.Close()
}

// readRange appends rows [lo,hi) of leaf column c to out. Pages wholly
// inside the range are decoded onto out; a page the range cuts is decoded
// into a scratch vector, made on first need, and its rows in the range
// copied.
func (d *DataFile) readRange(c int, lo, hi int64, out *colVec) (err error) {
	defer guard(d.path, &err)
	var page *colVec
	scratch := func() *colVec {
		if page == nil {
			page = &colVec{t: out.t, width: out.width}
		}
		return page
	}
	d.reserveRange(c, lo, hi, out)
	for gi := range d.groups {
		g := &d.groups[gi]
		glo, ghi := max(lo, g.first), min(hi, g.first+g.rows)
		if glo >= ghi {
			continue
		}
		if err := d.readGroupRange(g, c, glo, ghi, scratch, out); err != nil {
			return corruptError(d.path, fmt.Errorf("column %d: %w", c, err))
		}
	}
	return nil
}

// readRows appends the rows at the given ascending file positions of leaf
// column c to out, decoding only the pages that hold them and converting
// only those rows where the page decoder reads the page.
func (d *DataFile) readRows(c int, rows []int64, out *colVec) (err error) {
	defer guard(d.path, &err)
	page := colVec{t: out.t, width: out.width}
	var sel []int32
	for gi := range d.groups {
		g := &d.groups[gi]
		i := sort.Search(len(rows), func(i int) bool { return rows[i] >= g.first })
		j := sort.Search(len(rows), func(i int) bool { return rows[i] >= g.first+g.rows })
		if i == j {
			continue
		}
		want := rows[i:j]
		if err := d.readGroupRows(g, c, want, &page, sel, out); err != nil {
			return corruptError(d.path, fmt.Errorf("column %d: %w", c, err))
		}
	}
	return nil
}

func (d *DataFile) readGroupRows(g *rowGroupInfo, c int, want []int64, page *colVec, sel []int32, out *colVec) error {
	selectRows := func(first, end int64) {
		sel = sel[:0]
		for len(want) > 0 && want[0] < end {
			sel = append(sel, int32(want[0]-first))
			want = want[1:]
		}
	}
	spans := g.pages[c]
	if spans == nil {
		return d.eachPageOf(g, c, want, page, func(first, end int64) error {
			selectRows(first, end)
			out.gather(page, sel)
			return nil
		})
	}
	pr := d.newPageReader(g, c)
	defer pr.close()
	p := 0
	for len(want) > 0 {
		p += sort.Search(len(spans)-p, func(i int) bool { return spans[p+i].end > want[0] })
		if p >= len(spans) {
			return fmt.Errorf("row %d beyond the last page", want[0])
		}
		s := spans[p]
		rest := want
		// wanted counts the rows of page q to read; a page of an
		// uncompressed chunk with a few wanted rows is read in part
		// rather than whole in a window with its neighbours. Of a
		// mapped file, where a read costs no system call, it is read in
		// part unless it holds a wanted row per layoutMark rows.
		least := 1
		if pr.partial {
			least = wholePageLeast(d.f, s.end-s.first)
		}
		wanted := func(q int) int {
			i := sort.Search(len(rest), func(i int) bool { return rest[i] >= spans[q].first })
			j := i + sort.Search(len(rest)-i, func(k int) bool { return rest[i+k] >= spans[q].end })
			return j - i
		}
		if wanted(p) >= least {
			if err := pr.readAhead(p, func(q int) bool { return wanted(q) >= least }); err != nil {
				return err
			}
		}
		selectRows(s.first, s.end)
		if err := pr.readRows(p, sel, page, out); err != nil {
			return err
		}
	}
	return nil
}

// checkChunk validates the page headers of column c of group g once.
func (d *DataFile) checkChunk(g *rowGroupInfo, c int) error {
	ch := &g.checked[c]
	ch.once.Do(func() {
		ch.err = checkChunkPages(d.f, d.chunkMeta(g, c), g.pages[c])
	})
	return ch.err
}

// reserveRange grows out's buffers, once, to take rows [lo,hi) of column
// c: their values, and for strings and bytes about the bytes of the pages
// holding them. A merge's first chunk of a file then does not regrow them
// page by page, and later chunks into the same buffers find them sized.
func (d *DataFile) reserveRange(c int, lo, hi int64, out *colVec) {
	n := int(hi - lo)
	switch {
	case out.width > 0:
		out.fixed = slices.Grow(out.fixed, n*out.width)
	case out.isVar():
		out.offs = slices.Grow(out.offs, n)
		var bytes int64
		for gi := range d.groups {
			spans := d.groups[gi].pages[c]
			for p := sort.Search(len(spans), func(i int) bool { return spans[i].end > lo }); p < len(spans) && spans[p].first < hi; p++ {
				bytes += spans[p].size
			}
		}
		out.data = slices.Grow(out.data, int(min(bytes, 64<<20)))
	}
}

// readGroupRange appends file rows [lo,hi) of column c in group g to out
// (readRange).
func (d *DataFile) readGroupRange(g *rowGroupInfo, c int, lo, hi int64, scratch func() *colVec, out *colVec) error {
	spans := g.pages[c]
	if spans == nil {
		if err := d.checkChunk(g, c); err != nil {
			return err
		}
		page := scratch()
		return d.scanPages(g, c, func(first, end int64) bool { return end > lo && first < hi }, page, func(first, end int64) error {
			out.appendRange(page, int(max(lo, first)-first), int(min(hi, end)-first))
			return nil
		})
	}
	pr := d.newPageReader(g, c)
	defer pr.close()
	for p := sort.Search(len(spans), func(i int) bool { return spans[i].end > lo }); p < len(spans) && spans[p].first < hi; p++ {
		if err := pr.readAhead(p, func(q int) bool { return spans[q].first < hi }); err != nil {
			return err
		}
		s := spans[p]
		if s.first >= lo && s.end <= hi {
			if err := pr.readOnto(s, out, scratch); err != nil {
				return err
			}
			continue
		}
		page := scratch()
		if err := pr.read(s, page); err != nil {
			return err
		}
		out.appendRange(page, int(max(lo, s.first)-s.first), int(min(hi, s.end)-s.first))
	}
	return nil
}

// eachPageOf decodes into page every page of column c in group g that holds
// one of the ascending rows and calls fn with its rows.
func (d *DataFile) eachPageOf(g *rowGroupInfo, c int, rows []int64, page *colVec, fn func(first, end int64) error) error {
	spans := g.pages[c]
	if spans == nil {
		if err := d.checkChunk(g, c); err != nil {
			return err
		}
		return d.scanPages(g, c, func(first, end int64) bool {
			i := sort.Search(len(rows), func(i int) bool { return rows[i] >= first })
			return i < len(rows) && rows[i] < end
		}, page, fn)
	}
	pr := d.newPageReader(g, c)
	defer pr.close()
	p := 0
	for len(rows) > 0 {
		p += sort.Search(len(spans)-p, func(i int) bool { return spans[p+i].end > rows[0] })
		if p >= len(spans) {
			return fmt.Errorf("row %d beyond the last page", rows[0])
		}
		if err := pr.read(spans[p], page); err != nil {
			return err
		}
		if err := fn(spans[p].first, spans[p].end); err != nil {
			return err
		}
		for len(rows) > 0 && rows[0] < spans[p].end {
			rows = rows[1:]
		}
	}
	return nil
}

// pageReader reads pages of one column chunk: through the page decoder
// where it can, through parquet-go otherwise.
type pageReader struct {
	d    *DataFile
	g    *rowGroupInfo
	c    int
	fast bool
	// partial: the chunk's pages are uncompressed and not dictionary
	// encoded, so rows of a page can be read alone (pageLayout)
	partial bool
	sc      *pageScratch
	pages   parquet.Pages // opened on the first page the decoder leaves to parquet-go
}

func (d *DataFile) newPageReader(g *rowGroupInfo, c int) *pageReader {
	pr := &pageReader{d: d, g: g, c: c, fast: d.fastPages(g, c), partial: d.sparsePages(g, c)}
	if pr.fast {
		pr.sc = pageScratchPool.Get().(*pageScratch)
		pr.sc.win = pr.sc.win[:0]
	}
	return pr
}

// readAhead lets the reader fetch, with spans[p], the pages after it that
// needed accepts, in one read.
func (pr *pageReader) readAhead(p int, needed func(q int) bool) error {
	if !pr.fast {
		return nil
	}
	return pr.sc.readAhead(pr.d.f, pr.g.pages[pr.c], p, needed)
}

func (pr *pageReader) close() {
	if pr.sc != nil {
		pageScratchPool.Put(pr.sc)
		pr.sc = nil
	}
	if pr.pages != nil {
		pr.pages.Close()
	}
}

// readRows appends rows sel of page p to out; page is scratch.
func (pr *pageReader) readRows(p int, sel []int32, page, out *colVec) error {
	if pr.fast {
		err := pr.d.decodePageRows(pr.g, pr.c, p, sel, out, pr.sc)
		if !errors.Is(err, errFallback) {
			return err
		}
	}
	s := pr.g.pages[pr.c][p]
	if err := pr.read(s, page); err != nil {
		return err
	}
	out.gather(page, sel)
	return nil
}

// read decodes page s into page (reset first).
func (pr *pageReader) read(s pageSpan, page *colVec) error {
	page.reset()
	if pr.fast {
		err := pr.d.decodePage(pr.g, pr.c, s, page, pr.sc)
		if !errors.Is(err, errFallback) {
			return err
		}
		page.reset()
	}
	return pr.readParquet(s, page)
}

// readOnto appends the rows of page s to out: decoded onto it, or, for a
// page the decoder leaves to parquet-go, read into scratch and copied.
func (pr *pageReader) readOnto(s pageSpan, out *colVec, scratch func() *colVec) error {
	if pr.fast {
		err := pr.d.decodePage(pr.g, pr.c, s, out, pr.sc)
		if !errors.Is(err, errFallback) {
			return err
		}
	}
	page := scratch()
	page.reset()
	if err := pr.readParquet(s, page); err != nil {
		return err
	}
	out.appendRange(page, 0, page.n)
	return nil
}

// readParquet decodes page s into page (empty) through parquet-go.
func (pr *pageReader) readParquet(s pageSpan, page *colVec) error {
	if pr.pages == nil {
		if err := pr.d.checkChunk(pr.g, pr.c); err != nil {
			return err
		}
		pr.pages = pr.g.rg.ColumnChunks()[pr.c].Pages()
	}
	if err := pr.pages.SeekToRow(s.first - pr.g.first); err != nil {
		return err
	}
	p, err := pr.pages.ReadPage()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("page at row %d missing", s.first)
		}
		return err
	}
	defer parquet.Release(p)
	leaf := pr.d.leaves[pr.c]
	if err := page.appendPage(p, leaf.kind, leaf.maxDef); err != nil {
		return err
	}
	if int64(page.n) != s.end-s.first {
		return fmt.Errorf("page holds %d rows, index says %d", page.n, s.end-s.first)
	}
	return nil
}

// scanPages reads column c of group g page by page from its start, for files
// without an offset index, decoding the pages want accepts into page and
// calling fn with their rows.
func (d *DataFile) scanPages(g *rowGroupInfo, c int, want func(first, end int64) bool, page *colVec, fn func(first, end int64) error) error {
	pages := g.rg.ColumnChunks()[c].Pages()
	defer pages.Close()
	first := g.first
	for first < g.first+g.rows {
		p, err := pages.ReadPage()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("column ends at row %d of %d", first, g.first+g.rows)
			}
			return err
		}
		end := first + p.NumRows()
		if p.NumRows() <= 0 {
			parquet.Release(p)
			return fmt.Errorf("page with %d rows", p.NumRows())
		}
		var ferr error
		if want(first, end) {
			page.reset()
			if ferr = page.appendPage(p, d.leaves[c].kind, d.leaves[c].maxDef); ferr == nil {
				if int64(page.n) != end-first {
					ferr = fmt.Errorf("page holds %d rows, index says %d", page.n, end-first)
				} else {
					ferr = fn(first, end)
				}
			}
		}
		parquet.Release(p)
		if ferr != nil {
			return ferr
		}
		first = end
	}
	return nil
}

// wholePageLeast is the number of wanted rows from which a row read takes
// a page of an uncompressed chunk whole rather than in part: 4, or of a
// mapped file, where a read costs no system call, one per layoutMark rows.
func wholePageLeast(f ReadableFile, pageRows int64) int {
	if readsAreCopies(f) {
		return int(pageRows) / layoutMark
	}
	return 4
}
