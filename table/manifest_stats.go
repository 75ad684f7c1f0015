package table

import (
	"bytes"
	"fmt"
)

// partitionStats computes a manifest's _PARTITION_STATS: per partition field
// the min and max non-null value and the null count over the entries'
// partition rows ("full" stats, no truncation). Readers prune manifests
// with them, so they must cover every entry. A table without partition
// keys has empty stats: zero-arity rows and no null counts.
func partitionStats(fields []Field, partitions [][]byte) (SimpleStats, error) {
	if len(fields) == 0 {
		return SimpleStats{MinValues: EmptyBinaryRow(), MaxValues: EmptyBinaryRow(), NullCounts: []*int64{}}, nil
	}
	types := make([]DataType, len(fields))
	for i, f := range fields {
		types[i] = f.Type
		types[i].Nullable = true
	}
	mins := make([]Datum, len(fields))
	maxs := make([]Datum, len(fields))
	nulls := make([]int64, len(fields))
	seen := make([]bool, len(fields))
	var last []byte
	var lastVals []Datum
	for _, p := range partitions {
		if last != nil && bytes.Equal(p, last) {
			// Entries of one commit mostly share a partition: only nulls count.
			for i, v := range lastVals {
				nulls[i] += boolInt(v.Null)
			}
			continue
		}
		vals, err := DecodeBinaryRow(p, types)
		if err != nil {
			return SimpleStats{}, fmt.Errorf("partition row %x: %w", p, err)
		}
		last, lastVals = p, vals
		for i, v := range vals {
			switch {
			case v.Null:
				nulls[i]++
			case !seen[i]:
				mins[i], maxs[i], seen[i] = v, v, true
			default:
				if CompareDatum(types[i], v, mins[i]) < 0 {
					mins[i] = v
				}
				if CompareDatum(types[i], v, maxs[i]) > 0 {
					maxs[i] = v
				}
			}
		}
	}
	counts := make([]*int64, len(fields))
	for i := range fields {
		if !seen[i] {
			mins[i], maxs[i] = NullDatum, NullDatum
		}
		n := nulls[i]
		counts[i] = &n
	}
	return SimpleStats{
		MinValues:  EncodeBinaryRow(types, mins),
		MaxValues:  EncodeBinaryRow(types, maxs),
		NullCounts: counts,
	}, nil
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
