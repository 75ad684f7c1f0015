package table

import (
	"fmt"
	"math"
)

// RowExpiry makes a rewrite drop every key whose newest row has outlived a
// time-to-live: its Field (a BIGINT of epoch millis; null never expires)
// satisfies Field + TTLMillis <= NowMillis. An expired key is dropped like a
// retraction, so only where the plan drops retractions.
type RowExpiry struct {
	Field     string
	TTLMillis int64
	NowMillis int64
}

// int64FieldReader is implemented by BucketFiles whose rows can be asked for
// a BIGINT field: the accessor reads the current row of one of its iterators
// and reports null as ok == false.
type int64FieldReader interface {
	int64Field(name string) (func(RowIterator) (v int64, ok bool), error)
}

// rowExpiry is a resolved RowExpiry.
type rowExpiry struct {
	field     func(RowIterator) (int64, bool)
	threshold int64 // a time at or before it has expired
}

func resolveExpiry(e *RowExpiry, files BucketFiles) (*rowExpiry, error) {
	if e == nil {
		return nil, nil
	}
	if e.TTLMillis < 0 || e.NowMillis < math.MinInt64+e.TTLMillis {
		return nil, fmt.Errorf("row expiry: ttl %d ms at %d is out of range", e.TTLMillis, e.NowMillis)
	}
	r, ok := files.(int64FieldReader)
	if !ok {
		return nil, fmt.Errorf("row expiry: %T cannot read field %q", files, e.Field)
	}
	field, err := r.int64Field(e.Field)
	if err != nil {
		return nil, fmt.Errorf("row expiry: %w", err)
	}
	return &rowExpiry{field: field, threshold: e.NowMillis - e.TTLMillis}, nil
}

func (e *rowExpiry) expired(it RowIterator) bool {
	if e == nil {
		return false
	}
	ts, ok := e.field(it)
	return ok && ts <= e.threshold
}
