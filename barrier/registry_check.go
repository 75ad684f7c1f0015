package barrier

import (
	"fmt"
	"maps"
)

// checkInvariants verifies the registry's internal consistency: every copy
// is referenced, each checkpoint references at most one copy per key and the
// index agrees, and blob counts match the copies.
func (r *Registry) checkInvariants() error {
	users := make(map[string]int)
	refs := 0
	for k, e := range r.entries {
		if len(e.copies) == 0 {
			return fmt.Errorf("key %s has no copies", k)
		}
		perCheckpoint := make(map[CheckpointID]int)
		for _, c := range e.copies {
			if len(c.refs) == 0 {
				return fmt.Errorf("key %s copy %s has no references", k, c.blob)
			}
			users[c.blob]++
			for id := range c.refs {
				perCheckpoint[id]++
				if _, ok := r.byCheckpoint[id][k]; !ok {
					return fmt.Errorf("key %s referenced by %d, which does not list it", k, id)
				}
				refs++
			}
		}
		for id, n := range perCheckpoint {
			if n > 1 {
				return fmt.Errorf("checkpoint %d references %d copies of %s", id, n, k)
			}
		}
	}
	indexed := 0
	for _, keys := range r.byCheckpoint {
		indexed += len(keys)
	}
	if refs != indexed {
		return fmt.Errorf("%d references vs %d indexed", refs, indexed)
	}
	if !maps.Equal(users, r.blobUsers) {
		return fmt.Errorf("blob users %v, want %v", r.blobUsers, users)
	}
	return nil
}
