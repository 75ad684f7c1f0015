package actors

import "hash/fnv"

// hashString is a stable (cross-process) hash, unlike hash/maphash whose seed is random.
func hashString(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
