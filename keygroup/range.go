package keygroup

import "fmt"

// Range is an inclusive range of key groups [Start, End]. A Range with
// End < Start is empty; Empty is the canonical empty range.
type Range struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Empty is the canonical empty range.
var Empty = Range{Start: 0, End: -1}

// IsEmpty reports whether r holds no key group.
func (r Range) IsEmpty() bool { return r.End < r.Start }

// Len is the number of key groups in r.
func (r Range) Len() int {
	if r.IsEmpty() {
		return 0
	}
	return r.End - r.Start + 1
}

// Contains reports whether key group kg is in r.
func (r Range) Contains(kg int) bool { return kg >= r.Start && kg <= r.End }

// Intersect returns the key groups in both r and o, or Empty.
func (r Range) Intersect(o Range) Range {
	s := max(r.Start, o.Start)
	e := min(r.End, o.End)
	if e < s {
		return Empty
	}
	return Range{Start: s, End: e}
}

// String formats r as "[start,end]", or "[]" when empty.
func (r Range) String() string {
	if r.IsEmpty() {
		return "[]"
	}
	return fmt.Sprintf("[%d,%d]", r.Start, r.End)
}
