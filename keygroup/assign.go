package keygroup

import "fmt"

const (
	// DefaultMaxParallelism is the maximum parallelism used when a job does
	// not choose one.
	DefaultMaxParallelism = 128
	// UpperBoundMaxParallelism is the largest supported maximum parallelism
	// (Flink's bound: key groups are stored in 15 bits plus sign).
	UpperBoundMaxParallelism = 1 << 15
)

// Validate checks that maxParallelism and parallelism form a valid
// assignment: 1 ≤ parallelism ≤ maxParallelism ≤ UpperBoundMaxParallelism.
func Validate(maxParallelism, parallelism int) error {
	if maxParallelism < 1 || maxParallelism > UpperBoundMaxParallelism {
		return fmt.Errorf("keygroup: max parallelism %d outside [1, %d]", maxParallelism, UpperBoundMaxParallelism)
	}
	if parallelism < 1 || parallelism > maxParallelism {
		return fmt.Errorf("keygroup: parallelism %d outside [1, max parallelism %d]", parallelism, maxParallelism)
	}
	return nil
}

// ForKeyHash returns the key group of a key whose 32-bit hash code is keyHash.
// It panics if maxParallelism is outside [1, UpperBoundMaxParallelism]:
// callers validate configuration once, not per record.
func ForKeyHash(keyHash int32, maxParallelism int) int {
	if maxParallelism < 1 || maxParallelism > UpperBoundMaxParallelism {
		panic(fmt.Sprintf("keygroup: max parallelism %d outside [1, %d]", maxParallelism, UpperBoundMaxParallelism))
	}
	return int(Murmur(keyHash)) % maxParallelism
}

// RangeForSubtask returns the key groups owned by subtask index of
// parallelism subtasks. It panics on arguments Validate rejects or an index
// outside [0, parallelism).
func RangeForSubtask(maxParallelism, parallelism, index int) Range {
	mustValid(maxParallelism, parallelism, index)
	// start = ceil(i·maxP/p); end = ceil((i+1)·maxP/p) − 1 = floor(((i+1)·maxP − 1)/p).
	return Range{
		Start: (index*maxParallelism + parallelism - 1) / parallelism,
		End:   ((index+1)*maxParallelism - 1) / parallelism,
	}
}

// SubtaskForKeyGroup returns the index of the subtask of parallelism that owns
// key group kg. It panics on arguments Validate rejects or kg outside
// [0, maxParallelism).
func SubtaskForKeyGroup(maxParallelism, parallelism, kg int) int {
	if err := Validate(maxParallelism, parallelism); err != nil {
		panic(err.Error())
	}
	if kg < 0 || kg >= maxParallelism {
		panic(fmt.Sprintf("keygroup: key group %d outside [0, %d)", kg, maxParallelism))
	}
	return kg * parallelism / maxParallelism
}

// Ranges returns the ranges of all parallelism subtasks, indexed by subtask.
func Ranges(maxParallelism, parallelism int) ([]Range, error) {
	if err := Validate(maxParallelism, parallelism); err != nil {
		return nil, err
	}
	out := make([]Range, parallelism)
	for i := range out {
		out[i] = RangeForSubtask(maxParallelism, parallelism, i)
	}
	return out, nil
}

func mustValid(maxParallelism, parallelism, index int) {
	if err := Validate(maxParallelism, parallelism); err != nil {
		panic(err.Error())
	}
	if index < 0 || index >= parallelism {
		panic(fmt.Sprintf("keygroup: subtask index %d outside [0, %d)", index, parallelism))
	}
}
