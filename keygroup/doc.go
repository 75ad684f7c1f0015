// Package keygroup owns the assignment of keys to key groups and of key groups
// to operator subtasks, and the overlap arithmetic that restore and rescale
// planning need.
//
// The scheme is Flink's, bit for bit, so that state partitioned by lakestate
// and by Flink agree: a key's 32-bit hash code is scrambled with the 32-bit
// MurmurHash3 finalization and taken modulo the maximum parallelism; subtask i
// of p owns the contiguous range [ceil(i·maxP/p), ceil((i+1)·maxP/p) − 1].
// Because the key group leads every state table's primary key, a key-group
// range is also a key range, which is what lets a restore read or clip by
// range.
//
// The package imports nothing else of the project, so both barrier/ and
// subtask/ can use it.
package keygroup
