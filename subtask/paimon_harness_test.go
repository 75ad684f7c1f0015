package subtask_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lakestate/lakestate/subtask"
)

// The scenario suite runs the paimon backend without deletion vectors: reads
// merge sorted runs, so it needs no maintenance round.
func init() {
	backendCases = append(backendCases, backendCase{
		name: "paimon",
		fresh: func(t testing.TB) subtask.Backend {
			b, err := subtask.OpenPaimon(filepath.Join(t.TempDir(), "state"), subtask.PaimonOptions{NoDeletionVectors: true})
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
		restore: func(t *testing.T, b subtask.Backend, cp subtask.Checkpoint) subtask.Backend {
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			// Restore from a copy of the tables, as a download would.
			src := b.(*subtask.PaimonBackend).Root()
			dst := filepath.Join(t.TempDir(), "state")
			if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			r, err := subtask.OpenPaimon(dst, subtask.PaimonOptions{NoDeletionVectors: true})
			if err != nil {
				t.Fatal(err)
			}
			return r
		},
	})
}
