package subtask

// A flush's rows come in key order, but each sits wherever its Put left it:
// the record build walks an entry, then the datums of its row, then their
// strings, each load waiting for the one before it, and each missing the
// cache. The build touches rows a few blocks ahead of itself, a level per
// block: each block's touches are a tight loop of independent loads, whose
// misses overlap, and by the time the build reaches a row, its entry,
// datums and strings are in cache.

// touchBlock is the rows of a block: the build touches the strings of the
// block it starts, the datums of the next block and (of a map flush) the
// entries of the one after that.
const touchBlock = 16

// touchDatums loads a word of each datum of r (a datum is 40 bytes: every
// line of the row).
func touchDatums(r Row) uint64 {
	var s uint64
	for j := range r {
		s += uint64(len(r[j].str))
	}
	return s
}

// touchStrings loads the first byte of each non-empty string datum of r
// (the hardware prefetcher follows a long string's later lines).
func touchStrings(r Row) uint64 {
	var s uint64
	for j := range r {
		if str := r[j].str; len(str) > 0 {
			s += uint64(str[0])
		}
	}
	return s
}

// touchSpan is the rows [from, to) of each stage of the touches made at row i
// (a block's first) of n rows: stage 0 is this block, stage k the k-th after
// it. The first block also touches what earlier blocks would have.
func touchSpan(i, n, stage int) (int, int) {
	from := i + stage*touchBlock
	if i == 0 {
		from = 0
	}
	return min(from, n), min(i+(stage+1)*touchBlock, n)
}

// touchMutations touches, at row i, a block's first, the datums of the next
// block of rows and the strings of this one.
func touchMutations(rows []mutation, i int) uint64 {
	var s uint64
	from, to := touchSpan(i, len(rows), 1)
	for j := from; j < to; j++ {
		s += touchDatums(rows[j].vals)
	}
	from, to = touchSpan(i, len(rows), 0)
	for j := from; j < to; j++ {
		s += touchStrings(rows[j].vals)
	}
	return s
}

// touchMapRows touches, at row i, a block's first, the entries of the block
// after next, the key prefixes (in keys) and datums of the next block and
// the strings of this one.
func touchMapRows(rows []mapRow, keys []string, i int) uint64 {
	var s uint64
	from, to := touchSpan(i, len(rows), 2)
	for j := from; j < to; j++ {
		s += uint64(len(rows[j].e.value))
	}
	from, to = touchSpan(i, len(rows), 1)
	for j := from; j < to; j++ {
		if k := keys[rows[j].slot]; len(k) > 0 {
			s += uint64(k[0])
		}
		e := rows[j].e
		s += touchDatums(e.subRow) + touchDatums(e.value)
	}
	from, to = touchSpan(i, len(rows), 0)
	for j := from; j < to; j++ {
		e := rows[j].e
		s += touchStrings(e.subRow) + touchStrings(e.value)
	}
	return s
}
