package table

import (
	"sync"
)

// KeyFilters keeps the key filters of one bucket's data files in memory
// across compactions, by file name. A lookup of a barrier's keys in the
// deeper levels (LookupSuperseded) then reads only the files that may hold
// a key: keys of append-only data, new everywhere, skip every file.
//
// A filter is made where the keys pass anyway: by the writer of a
// compaction's output, by ReadKeys of a whole file (a level-0 file carried
// up), and otherwise on a file's first lookup, from all its keys (the files
// of a restored table). A data file never changes under its name, and a
// filter is used only for a file of the row count and size it was built
// from, so a filter is never stale; keeping one for a file that left the
// tree costs only memory (Retain).
type KeyFilters struct {
	mu      sync.Mutex
	filters map[string]*KeyFilter
}

// NewKeyFilters returns an empty set.
func NewKeyFilters() *KeyFilters { return &KeyFilters{filters: make(map[string]*KeyFilter)} }

// get returns the filter of f, or nil when the set has none for it.
func (s *KeyFilters) get(f DataFileMeta) *KeyFilter {
	s.mu.Lock()
	defer s.mu.Unlock()
	flt := s.filters[f.FileName]
	if flt == nil || !flt.describes(f) {
		return nil
	}
	return flt
}

func (s *KeyFilters) put(name string, flt *KeyFilter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.filters[name] = flt
}

// Retain forgets the filters of the files keep rejects.
func (s *KeyFilters) Retain(keep func(fileName string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range s.filters {
		if !keep(name) {
			delete(s.filters, name)
		}
	}
}

// Len is the number of filters held.
func (s *KeyFilters) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.filters)
}

// Bytes is the memory of the filters held.
func (s *KeyFilters) Bytes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, f := range s.filters {
		n += f.Bytes()
	}
	return n
}

// KeyFilter returns the filter of f, building it from all of f's keys when
// the set lacks it; nil without KeyFilters.
func (b *DataBucketFiles) KeyFilter(f DataFileMeta) (*KeyFilter, error) {
	s := b.opts.KeyFilters
	if s == nil {
		return nil, nil
	}
	if flt := s.get(f); flt != nil {
		return flt, nil
	}
	return b.readKeys(f, nil, true, func([]byte) {})
}
