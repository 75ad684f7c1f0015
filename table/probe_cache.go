package table

import "sync"

// keyPageCacheBytes bounds the decoded key pages kept for probes and
// lookups, across every open data file of the process. It is the budget of
// Pebble's default block cache: a probe against the table and one against
// Pebble keep the same amount of decoded data at hand.
const keyPageCacheBytes = 8 << 20

// keyPageID names a key page of an open data file.
type keyPageID struct {
	file   uint64 // DataFile.id, unique per open
	page   int    // index into the file's keyPages
	sample bool   // the page's keySample, not the page
}

// keyPage is a key page as a probe searches it: the key columns its bounds
// do not pin (pageBound.pinned on), decoded, or packed when they are
// integer fields; or the page's sample, when the probe is to read the rows
// it wants from the file. It is read-only once cached.
type keyPage struct {
	vecs   []*colVec
	packed *packedKeys
	sample *keySample
}

func (kp *keyPage) memSize() int {
	if kp.packed != nil {
		return kp.packed.memSize()
	}
	if kp.sample != nil {
		return kp.sample.memSize()
	}
	size := 0
	for _, v := range kp.vecs {
		size += v.memSize()
	}
	return size
}

// appendKey appends the encoding of row r's unpinned key fields, of the
// given types.
func (kp *keyPage) appendKey(dst []byte, types []DataType, r int) []byte {
	if kp.packed != nil {
		return kp.packed.appendKey(dst, r)
	}
	for k, t := range types {
		dst = kp.vecs[k].appendKey(dst, t, r)
	}
	return dst
}

// cachedKeyPage is a key page in the cache.
type cachedKeyPage struct {
	page *keyPage
	size int
	used bool // read since it was cached or last spared by eviction
}

// keyPageCache keeps decoded key pages, so the key pages of small upper
// levels and of hot ranges are decoded once, not once per probe batch.
// Eviction takes a random page, sparing (once) one read since it was last
// considered: probes sweep pages in key order, and under such sweeps of
// more pages than fit, least-recently-used eviction would keep none.
type keyPageCache struct {
	mu       sync.Mutex
	budget   int
	used     int
	pages    map[keyPageID]*cachedKeyPage
	declined int // misses not admitted while full
}

func newKeyPageCache(budget int) *keyPageCache {
	return &keyPageCache{budget: budget, pages: map[keyPageID]*cachedKeyPage{}}
}

var keyPageCacheOfProcess = newKeyPageCache(keyPageCacheBytes)

// getPage returns key page id, or else its sample when sample says the
// page may have one, or nil.
func (c *keyPageCache) getPage(id keyPageID, sample bool) *keyPage {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pages[id]
	if p == nil && sample {
		id.sample = true
		p = c.pages[id]
	}
	if p == nil {
		return nil
	}
	p.used = true
	return p.page
}

// holds says whether key page p of a file, or its sample, is cached,
// without marking it read.
func (c *keyPageCache) holds(file uint64, p int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pages[keyPageID{file: file, page: p}] != nil || c.pages[keyPageID{file: file, page: p, sample: true}] != nil
}

// admitEvery is how many of the misses that would evict one admits: the
// rest are decoded into scratch. Sweeps over more key pages than fit then
// allocate and evict little, while pages read often still get in soon.
const admitEvery = 8

// admits says whether a missed page of about size bytes is to be cached.
func (c *keyPageCache) admits(size int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.used+size <= c.budget {
		return true
	}
	c.declined++
	return c.declined%admitEvery == 0
}

// add caches a page, evicting pages beyond the budget. A page larger than a
// sixteenth of the budget (a whole row group of a file without a page
// index) is not kept.
func (c *keyPageCache) add(id keyPageID, page *keyPage) {
	size := 64 + page.memSize()
	if size > c.budget/16 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pages[id] != nil {
		return
	}
	for c.used+size > c.budget {
		c.evictOne()
	}
	c.pages[id] = &cachedKeyPage{page: page, size: size}
	c.used += size
}

// evictOne drops a random page, skipping up to a few read ones (clearing
// their mark). Map iteration starts at a random entry.
func (c *keyPageCache) evictOne() {
	spared := 0
	for id, p := range c.pages {
		if p.used && spared < 4 {
			p.used = false
			spared++
			continue
		}
		delete(c.pages, id)
		c.used -= p.size
		return
	}
}

// dropFile forgets the pages of a closed file.
func (c *keyPageCache) dropFile(file uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, p := range c.pages {
		if id.file == file {
			delete(c.pages, id)
			c.used -= p.size
		}
	}
}

// memSize is the bytes v holds.
func (v *colVec) memSize() int {
	return cap(v.fixed) + 4*cap(v.offs) + cap(v.data) + cap(v.bits) + cap(v.valid) + 96
}
