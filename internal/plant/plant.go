package plant

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Bug names one planted bug.
type Bug uint8

const (
	// ReuseUnconfirmed: a store takes a checkpoint as its reuse base as soon
	// as its own uploads succeed, before the coordinator confirms it, so a
	// later checkpoint may reference files of one that is then aborted.
	ReuseUnconfirmed Bug = iota + 1
	// AbortDeletesShared: aborting a checkpoint deletes every file it
	// referenced, including the ones a completed checkpoint still needs.
	AbortDeletesShared
	// SkipBarrierRound: maintenance answers a barrier without running its
	// deletion-vector round, so the barrier's level-0 rows stay invisible to
	// reads that skip level 0.
	SkipBarrierRound
	// TwoCompactors: a second maintenance session compacts the same table
	// beside the first.
	TwoCompactors

	numBugs
)

var names = [numBugs]string{
	ReuseUnconfirmed:   "reuse-unconfirmed",
	AbortDeletesShared: "abort-deletes-shared",
	SkipBarrierRound:   "skip-dv-round",
	TwoCompactors:      "two-compactors",
}

func (b Bug) String() string {
	if b == 0 || b >= numBugs {
		return fmt.Sprintf("bug(%d)", uint8(b))
	}
	return names[b]
}

// All lists every planted bug.
func All() []Bug {
	out := make([]Bug, 0, numBugs-1)
	for b := Bug(1); b < numBugs; b++ {
		out = append(out, b)
	}
	return out
}

// Parse reads a bug by its name.
func Parse(name string) (Bug, error) {
	for b := Bug(1); b < numBugs; b++ {
		if names[b] == name {
			return b, nil
		}
	}
	return 0, fmt.Errorf("unknown planted bug %q (known: %s)", name, strings.Join(names[1:], ", "))
}

// ParseList reads names (duplicates allowed) into a sorted set of bugs.
func ParseList(list []string) ([]Bug, error) {
	var out []Bug
	for _, n := range list {
		b, err := Parse(n)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// switches is read by hooks on every pass, hence atomic (a plain load on
// the usual platforms) rather than under the lock.
var switches [numBugs]atomic.Bool

var (
	mu     sync.Mutex
	users  int   // Enable calls not yet released
	active []Bug // the set they share
)

// On reports whether bug b is planted.
func On(b Bug) bool { return switches[b].Load() }

// Enable plants exactly the given bugs until release is called. Runs in
// one process may overlap (a sweep runs seeds in parallel) only when they
// plant the same set; otherwise Enable fails, since a switch is process-wide.
func Enable(bugs []Bug) (release func(), err error) {
	set := slices.Clone(bugs)
	slices.Sort(set)
	set = slices.Compact(set)
	for _, b := range set {
		if b == 0 || b >= numBugs {
			return nil, fmt.Errorf("plant: unknown bug %d", uint8(b))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if users > 0 && !slices.Equal(active, set) {
		return nil, fmt.Errorf("plant: bugs %v requested while a concurrent run plants %v", set, active)
	}
	if users == 0 {
		active = set
		for b := Bug(1); b < numBugs; b++ {
			switches[b].Store(slices.Contains(set, b))
		}
	}
	users++
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			users--
			if users == 0 {
				active = nil
				for b := Bug(1); b < numBugs; b++ {
					switches[b].Store(false)
				}
			}
		})
	}, nil
}
