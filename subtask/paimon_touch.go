package subtask

// A flush's rows come in key order, but each sits wherever its Put left it:
// a record build that visits its rows in key order (paimonCodec.writeRecord)
// walks the datums of a row, then their strings, each load waiting for the
// one before it, and each missing the cache. The build touches rows a few
// blocks ahead of itself, a level per block: each block's touches are a
// tight loop of independent loads, whose misses overlap, and by the time the
// build reaches a row, its datums and strings are in cache.

// touchBlock is the rows of a block: the build touches the strings of the
// block it starts and the datums of the next block.
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

// A map flush's rows come in key order, and the first pass of its record's
// build reads each row's entry and key prefix wherever the operator's writes
// left them: each load waits for the one before it, and each misses the
// cache. The pass touches rows a few ahead of itself: the touches are
// independent loads whose misses overlap, and by the time the pass reaches
// a row its entry and key are in cache.

// touchAhead is how many rows ahead of its build a map record's first pass
// touches a row's entry and key.
const touchAhead = 16

// touchMapRow loads a word of a map row's entry and the first byte of its
// key prefix.
func touchMapRow(r *mapRow, keys []string) uint64 {
	s := uint64(len(r.e.value))
	if k := keys[r.slot]; len(k) > 0 {
		s += uint64(k[0])
	}
	return s
}
