package table

import "sync"

// DataFileCache keeps a bucket's data files open for point lookups across
// compactions. Opening a file reads its footer and page index and, on first
// use of a column, checks every page header of the chunk: work proportional
// to the file. A maintenance session that looks a barrier's keys up in the
// deeper levels at every checkpoint pays it once per file with a cache, and
// its rounds cost what the keys touch. Files are shared: a DataFile is safe
// for concurrent reads.
type DataFileCache struct {
	fio    FileIO
	schema *Schema

	mu    sync.Mutex
	files map[string]*cachedDataFile // by path
}

type cachedDataFile struct {
	d       *DataFile
	refs    int
	evicted bool
}

// NewDataFileCache returns an empty cache of files read as schema s.
func NewDataFileCache(fio FileIO, s *Schema) *DataFileCache {
	return &DataFileCache{fio: fio, schema: s, files: make(map[string]*cachedDataFile)}
}

// acquire returns the open file at path and the function that releases it.
func (c *DataFileCache) acquire(path string) (*DataFile, func(), error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.files[path]
	if !ok {
		d, err := OpenDataFile(c.fio, path, c.schema)
		if err != nil {
			return nil, nil, err
		}
		f = &cachedDataFile{d: d}
		c.files[path] = f
	}
	f.refs++
	return f.d, func() { c.release(f) }, nil
}

func (c *DataFileCache) release(f *cachedDataFile) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f.refs--
	if f.evicted && f.refs == 0 {
		f.d.Close()
	}
}

// Retain closes and forgets every cached file whose path keep rejects, as
// when compaction removed it from the tree. A file still in use closes when
// its last user releases it.
func (c *DataFileCache) Retain(keep func(path string) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for p, f := range c.files {
		if keep(p) {
			continue
		}
		delete(c.files, p)
		f.evicted = true
		if f.refs == 0 {
			f.d.Close()
		}
	}
}

// Len is the number of cached files.
func (c *DataFileCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.files)
}

// Close forgets every file; each closes once no longer in use.
func (c *DataFileCache) Close() { c.Retain(func(string) bool { return false }) }

// lookupFile opens f for FindKeys, through the cache when there is one.
func (b *DataBucketFiles) lookupFile(f DataFileMeta) (*DataFile, func(), error) {
	if b.opts.LookupCache != nil {
		return b.opts.LookupCache.acquire(b.path(f))
	}
	d, err := OpenDataFile(b.fio, b.path(f), b.schema)
	if err != nil {
		return nil, nil, err
	}
	return d, func() { d.Close() }, nil
}
