package nexmark

// Window sizes of q5 and q7, in milliseconds of event time. Windows are
// aligned to the Unix epoch, as Flink aligns them with no offset.
const (
	Q5WindowSize  = 10_000
	Q5WindowSlide = 2_000
	Q7WindowSize  = 10_000
)

// windowStart is the start of the window of length size, aligned to the
// epoch, that contains t.
func windowStart(t, size int64) int64 {
	m := t % size
	if m < 0 {
		m += size
	}
	return t - m
}
