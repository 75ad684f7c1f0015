package table

import (
	"sync"
	"sync/atomic"
)

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
// it wants from the file. It is read-only once cached but for hits.
type keyPage struct {
	vecs   []*colVec
	packed *packedKeys
	sample *keySample
	// Probe keys searched on the page since the cache's clock read since:
	// how often the page (or sample) spares a read, per key searched in
	// the cache.
	hits  atomic.Int64
	since int64
	// a sample's hits from which its page is next weighed for the cache
	// (admitsOver), doubled each time it is declined
	upgradeAt atomic.Int64
}

// density is how often the page was searched per key searched in the
// cache since it was cached, per byte of size (Laplace-smoothed, so that
// a page just cached is not the first to go).
func (kp *keyPage) density(now int64, size int) float64 {
	return float64(kp.hits.Load()+1) / (float64(max(0, now-kp.since)+1) * float64(size))
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
}

// keyPageCache keeps decoded key pages, so the key pages of small upper
// levels and of hot ranges are decoded once, not once per probe batch, and
// the samples of the pages of large levels. Eviction weighs a few pages
// picked at random and drops the one searched least often per byte it
// holds (keyPage.density): probes sweep pages in key order, and under such
// sweeps of more pages than fit, least-recently-used eviction would keep
// none. A page that has a sample is cached whole only once its sample is
// searched more often per byte of the page than what it would evict
// (admitsOver): the pages of a level too large for the cache, each
// searched for a key or so per batch, cost ten times their samples' bytes
// to spare one run read each, and stay sampled, while the pages of the
// upper levels, searched for many keys per batch, are cached whole.
type keyPageCache struct {
	mu       sync.Mutex
	budget   int
	used     int
	pages    map[keyPageID]*cachedKeyPage
	declined int          // misses not admitted while full
	clock    atomic.Int64 // probe keys searched in the cache's pages
	// missed remembers recent misses of pages not cached on them: a
	// slot per page hash (keyPageID.hash), overwritten by later misses.
	missed [missedSlots]uint64
}

// missedSlots is the number of recent misses keyPageCache.firstMiss
// remembers: about the pages the budget holds, packed.
const missedSlots = 4096

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
	return p.page
}

// holds says whether key page p of a file, or its sample, is cached.
func (c *keyPageCache) holds(file uint64, p int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pages[keyPageID{file: file, page: p}] != nil || c.pages[keyPageID{file: file, page: p, sample: true}] != nil
}

// firstMiss says whether page id was not missed recently, and remembers
// this miss.
func (c *keyPageCache) firstMiss(id keyPageID) bool {
	h := id.hash()
	c.mu.Lock()
	defer c.mu.Unlock()
	slot := &c.missed[h%missedSlots]
	if *slot == h {
		return false
	}
	*slot = h
	return true
}

// hash is a hash of the page's file and index, never 0 (an empty slot).
func (id keyPageID) hash() uint64 {
	return hashMix(id.file^0x9e3779b97f4a7c15, uint64(id.page)^0xbf58476d1ce4e5b9) | 1
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

// evictionChoices is how many cached pages eviction weighs.
const evictionChoices = 8

// admitsOver says whether a page of about size bytes, whose sample is
// cached, is to be cached whole: when it fits, or when the page eviction
// would drop is searched less often per byte than the sample.
func (c *keyPageCache) admitsOver(size int, sample *keyPage) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if size > c.budget/16 || len(c.pages) == 0 {
		return false // add would not keep it
	}
	if c.used+size <= c.budget {
		return true
	}
	now := c.clock.Load()
	_, v := c.victim(now)
	return sample.density(now, size) > v.page.density(now, v.size)
}

// fits says whether a page of about size bytes is kept without evicting.
func (c *keyPageCache) fits(size int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return size <= c.budget/16 && c.used+size <= c.budget
}

// cachedPageOverhead is the bytes the cache counts for a page beyond its
// memSize: its entry.
const cachedPageOverhead = 64

// add caches a page, evicting pages beyond the budget. A page larger than a
// sixteenth of the budget (a whole row group of a file without a page
// index) is not kept.
func (c *keyPageCache) add(id keyPageID, page *keyPage) {
	size := cachedPageOverhead + page.memSize()
	if size > c.budget/16 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pages[id] != nil {
		return
	}
	now := c.clock.Load()
	for c.used+size > c.budget && len(c.pages) > 0 {
		id, p := c.victim(now)
		delete(c.pages, id)
		c.used -= p.size
	}
	if page.since == 0 {
		page.since = now
	}
	c.pages[id] = &cachedKeyPage{page: page, size: size}
	c.used += size
}

// victim weighs up to evictionChoices pages (map iteration starts at a
// random entry) and returns the one to evict: the one searched least often
// per byte it holds.
func (c *keyPageCache) victim(now int64) (keyPageID, *cachedKeyPage) {
	var vid keyPageID
	var v *cachedKeyPage
	vd, n := 0.0, 0
	for id, p := range c.pages {
		if d := p.page.density(now, p.size); v == nil || d < vd {
			vid, v, vd = id, p, d
		}
		if n++; n == evictionChoices {
			break
		}
	}
	return vid, v
}

// remove forgets page id.
func (c *keyPageCache) remove(id keyPageID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.pages[id]; p != nil {
		delete(c.pages, id)
		c.used -= p.size
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
