package faultfs

import "sort"

// Crash simulates a power loss: names that were not made durable are
// forgotten, and each unsynced write of a surviving file is dropped, kept or
// torn, as the seed decides. Handles from before the crash fail from now on.
func (f *FS) Crash() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.epoch++
	f.open = map[*writable]struct{}{}
	names := make([]string, 0, len(f.durable))
	for name := range f.durable {
		names = append(names, name)
	}
	sort.Strings(names) // the seed's draws must not depend on map order
	survivors := map[*inode]*inode{}
	f.names = map[string]*inode{}
	for _, name := range names {
		old := f.durable[name]
		n, ok := survivors[old]
		if !ok {
			data := f.survivingContent(old)
			n = &inode{data: data, synced: len(data)}
			survivors[old] = n
		}
		f.names[name] = n
		f.durable[name] = n
	}
	f.dirs = map[string]bool{}
	for d := range f.durDirs {
		f.dirs[d] = true
	}
	f.used = f.usedBytes(nil)
}

// survivingContent is the synced content of n plus its unsynced writes as
// the seed decides: dropped, kept, or torn (a prefix kept). Bytes of dropped
// writes before a kept one read back as zeros.
func (f *FS) survivingContent(n *inode) []byte {
	out := append([]byte(nil), n.data[:n.synced]...)
	for _, s := range n.pending {
		keep := 0
		switch f.rng.IntN(3) {
		case 1:
			keep = s.len
		case 2:
			keep = f.rng.IntN(s.len)
		}
		if keep == 0 {
			continue
		}
		if end := s.off + keep; end > len(out) {
			out = append(out, make([]byte, end-len(out))...)
		}
		copy(out[s.off:], n.data[s.off:s.off+keep])
	}
	return out
}

// usedBytes counts the bytes held by every file that is named, durable or
// open for writing, plus extra if it is none of those.
func (f *FS) usedBytes(extra *inode) int64 {
	seen := map[*inode]bool{}
	var used int64
	add := func(n *inode) {
		if n != nil && !seen[n] {
			seen[n] = true
			used += int64(len(n.data))
		}
	}
	for _, n := range f.names {
		add(n)
	}
	for _, n := range f.durable {
		add(n)
	}
	for w := range f.open {
		add(w.n)
	}
	add(extra)
	return used
}
