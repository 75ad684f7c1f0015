package table

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Option names read only by the LSM primitives.
const (
	OptionCompactionSmallFileRatio = "compaction.small-file-ratio"
)

// Defaults of the compaction options, as Paimon's CoreOptions has them.
const (
	defaultNumSortedRunTrigger   = 5
	defaultMaxSizeAmplification  = 200
	defaultSizeRatio             = 1
	defaultTargetFileSizePK      = 128 << 20
	defaultCompactionSmallFileRt = 0.7
)

// CompactionOptions are a table's LSM shape and universal-compaction knobs.
type CompactionOptions struct {
	NumLevels                   int // levels 0..NumLevels-1
	NumSortedRunTrigger         int // runs above which universal picking compacts for run count
	NumSortedRunStopTrigger     int // runs above which writers wait for compaction
	MaxSizeAmplificationPercent int
	SizeRatio                   int
	TargetFileSize              int64 // rewrite output rolls to a new file past this size
	// SmallFileSize: a file below it is rewritten with its neighbours rather
	// than upgraded in place (target-file-size * compaction.small-file-ratio).
	SmallFileSize   int64
	DeletionVectors bool
}

// CompactionOptionsOf reads the options of a schema, applying Paimon's
// defaults and derivations (stop trigger = trigger+3 but never below the
// trigger; num-levels = trigger+1).
func CompactionOptionsOf(s *Schema) (CompactionOptions, error) {
	o := CompactionOptions{
		NumSortedRunTrigger:         s.IntOption(OptionNumSortedRunTrigger, defaultNumSortedRunTrigger),
		MaxSizeAmplificationPercent: s.IntOption(OptionMaxSizeAmplification, defaultMaxSizeAmplification),
		SizeRatio:                   s.IntOption(OptionSizeRatio, defaultSizeRatio),
		TargetFileSize:              defaultTargetFileSizePK,
		DeletionVectors:             s.DeletionVectors(),
	}
	o.NumSortedRunStopTrigger = max(o.NumSortedRunTrigger, s.IntOption(OptionNumSortedRunStop, o.NumSortedRunTrigger+3))
	o.NumLevels = s.IntOption(OptionNumLevels, o.NumSortedRunTrigger+1)
	if v, ok := s.Options[OptionTargetFileSize]; ok {
		n, err := ParseMemorySize(v)
		if err != nil {
			return CompactionOptions{}, fmt.Errorf("schema %d: option %s: %w", s.ID, OptionTargetFileSize, err)
		}
		o.TargetFileSize = n
	}
	ratio := defaultCompactionSmallFileRt
	if v, ok := s.Options[OptionCompactionSmallFileRatio]; ok {
		r, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || r < 0 || math.IsNaN(r) {
			return CompactionOptions{}, fmt.Errorf("schema %d: option %s=%q is not a ratio", s.ID, OptionCompactionSmallFileRatio, v)
		}
		ratio = r
	}
	o.SmallFileSize = int64(float64(o.TargetFileSize) * ratio)
	if o.NumLevels < 2 {
		return CompactionOptions{}, fmt.Errorf("schema %d: option %s=%d; at least 2 levels are needed", s.ID, OptionNumLevels, o.NumLevels)
	}
	return o, nil
}

// Universal returns the universal-compaction picker these options configure.
func (o CompactionOptions) Universal() UniversalCompaction {
	return UniversalCompaction{
		MaxSizeAmplificationPercent: o.MaxSizeAmplificationPercent,
		SizeRatio:                   o.SizeRatio,
		NumSortedRunTrigger:         o.NumSortedRunTrigger,
	}
}

// ParseMemorySize parses Paimon's memory-size spelling: a non-negative
// integer and an optional unit (b/bytes, k/kb/kibibytes, m/mb/mebibytes,
// g/gb/gibibytes, t/tb/tebibytes; powers of 1024, any case, spaces allowed).
func ParseMemorySize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("memory size %q does not start with a number", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("memory size %q: %w", s, err)
	}
	var mult int64
	switch strings.ToLower(strings.TrimSpace(t[i:])) {
	case "", "b", "bytes":
		mult = 1
	case "k", "kb", "kibibytes":
		mult = 1 << 10
	case "m", "mb", "mebibytes":
		mult = 1 << 20
	case "g", "gb", "gibibytes":
		mult = 1 << 30
	case "t", "tb", "tebibytes":
		mult = 1 << 40
	default:
		return 0, fmt.Errorf("memory size %q has an unknown unit", s)
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("memory size %q overflows 64 bits", s)
	}
	return n * mult, nil
}
