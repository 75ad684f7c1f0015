package table

// sameSpans reports whether two columns break pages at the same rows, so the
// page bounds of one key column extend those of the previous one. Offsets
// differ between columns by nature and are not compared: comparing them
// bounded pages by the first key column alone, which for state tables (key
// group first, constant within a subtask) pruned nothing.
func sameSpans(a, b []pageSpan) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].first != b[i].first || a[i].end != b[i].end {
			return false
		}
	}
	return true
}
