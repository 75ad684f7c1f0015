package barrier

import (
	"fmt"
	"strconv"
)

// CheckpointID numbers checkpoints and savepoints of a job in one increasing
// sequence. Zero is not a valid id.
type CheckpointID uint64

func (id CheckpointID) String() string { return strconv.FormatUint(uint64(id), 10) }

// Kind tells a checkpoint from a savepoint. Checkpoints are incremental and
// subsumed by retention; savepoints share no file with anything and are kept
// until disposed.
type Kind uint8

const (
	KindCheckpoint Kind = iota + 1
	KindSavepoint
)

func (k Kind) String() string {
	switch k {
	case KindCheckpoint:
		return "checkpoint"
	case KindSavepoint:
		return "savepoint"
	default:
		return fmt.Sprintf("kind(%d)", uint8(k))
	}
}

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool { return k == KindCheckpoint || k == KindSavepoint }

// MarshalText encodes k by name, which keeps metadata readable.
func (k Kind) MarshalText() ([]byte, error) {
	if !k.Valid() {
		return nil, fmt.Errorf("invalid checkpoint kind %d", uint8(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText decodes a kind name.
func (k *Kind) UnmarshalText(b []byte) error {
	switch string(b) {
	case "checkpoint":
		*k = KindCheckpoint
	case "savepoint":
		*k = KindSavepoint
	default:
		return fmt.Errorf("unknown checkpoint kind %q", b)
	}
	return nil
}
