package runtime

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lakestate/lakestate/actors"
)

// A run's stats say why each of its checkpoints was aborted: here every
// store declines, and each abort the driver saw carries that cause.
func TestRunStatsKeepAbortCauses(t *testing.T) {
	sys := actors.NewSystem(actors.Options{})
	defer sys.Close()
	run, err := Start(sys, keyedGraph(func() Operator { return openedOp{opened: new(atomic.Int32)} }),
		Options{Parallelism: 2, Backend: &countedBackend{}, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Kill()
	_, cerr := run.Checkpoint()
	if cerr == nil {
		t.Fatal("a checkpoint of stores that decline completed")
	}
	st := run.Stats()
	if st.Aborted == 0 || len(st.AbortCauses) != st.Aborted {
		t.Fatalf("%d aborted, causes %v; want one cause per abort", st.Aborted, st.AbortCauses)
	}
	last := st.AbortCauses[len(st.AbortCauses)-1]
	if last == nil || !strings.Contains(cerr.Error(), last.Error()) {
		t.Fatalf("last cause %v, checkpoint error %v; want the checkpoint's cause", last, cerr)
	}
}
