package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// taskRestore is what the operator of one task of a restored run gets.
type taskRestore struct {
	id int64
	// extras of every old subtask of the operator, by old index.
	extras [][]byte
}

// taskStart is what one task starts from, prepared off the actors.
type taskStart struct {
	dirs taskDirs
	// backend holds the task's keyed state (nil when not keyed): empty, or
	// adopted from the checkpoint; restored finishes a rescale into it.
	backend  subtask.Backend
	restored *barrier.RestoredStore
	history  *barrier.History
	restore  *taskRestore // nil: the operator starts fresh
	// fence closes backend once no executor job of the task's Store actor
	// uses it (the job spawns the Store actor with it).
	fence *barrier.StoreFence
}

// close closes the task's store, and the rescale sources a restore keeps
// open until the task's operator opened (a task stopped before that).
// It runs through the fence, once.
func (s *taskStart) close() error {
	if s.restored != nil {
		s.restored.Close()
	}
	if s.backend == nil {
		return nil
	}
	return s.backend.Close()
}

// runPrep is what a run needs before its tasks start.
type runPrep struct {
	plan    *plan
	backend StateBackend
	blobs   barrier.BlobStore
	fio     table.FileIO
	// local holds the local directories of the job's runs; the run's own
	// are under dir. Older runs' directories are removed.
	local, dir string
	from       *barrier.Metadata // nil: a fresh start
	entropy    io.Reader         // mints the store runs' backend ids
}

// prepared answers runPrep, by global task.
type prepared struct {
	starts []*taskStart
	err    error
}

// prepare removes the local files of earlier runs and makes every task's
// backend: empty, or restored from p.from at the plan's parallelism
// (adopted whole where a task's key groups are an old subtask's, otherwise
// clipped from the overlapping old subtasks by Finish once the operator has
// registered its states). It does blocking I/O: it runs on the executor.
func (p *runPrep) prepare() *prepared {
	if err := p.fio.RemoveAll(p.local); err != nil {
		return &prepared{err: fmt.Errorf("remove local state of earlier runs: %w", err)}
	}
	starts := make([]*taskStart, len(p.plan.tasks))
	var err error
	for _, n := range p.plan.nodes {
		if err = p.prepareNode(n, starts); err != nil {
			break
		}
	}
	if err != nil {
		for _, s := range starts {
			if s == nil {
				continue
			}
			if s.restored != nil {
				s.restored.Close()
			}
			if s.backend != nil {
				s.backend.Close()
			}
		}
		return &prepared{err: err}
	}
	return &prepared{starts: starts}
}

func (p *runPrep) prepareNode(n *node, starts []*taskStart) error {
	tasks := p.plan.nodeTasks(n)
	var op *barrier.OperatorState
	if p.from != nil {
		op, _ = p.from.Operator(n.name)
	}
	var extras [][]byte
	stateful := false
	if op != nil {
		if op.MaxParallelism != p.plan.maxParallelism {
			return fmt.Errorf("restore of checkpoint %d: operator %q has max parallelism %d, the job %d (it fixes the key groups and cannot change)",
				p.from.ID, n.name, op.MaxParallelism, p.plan.maxParallelism)
		}
		extras = make([][]byte, len(op.Subtasks))
		for i := range op.Subtasks {
			st := &op.Subtasks[i]
			var err error
			if extras[i], err = barrier.ReadExtras(context.Background(), p.blobs, st, extrasKey); err != nil {
				return fmt.Errorf("restore of checkpoint %d: operator %q subtask %d: %w", p.from.ID, n.name, i, err)
			}
			if st.Backend != barrier.BackendNone {
				stateful = true
			}
		}
		if stateful && !n.keyed() {
			return fmt.Errorf("restore of checkpoint %d: operator %q has keyed state but its inputs are not keyed", p.from.ID, n.name)
		}
	}
	var plans []barrier.SubtaskRestore
	if stateful {
		var err error
		if plans, err = barrier.PlanRestore(p.from, n.name, p.plan.parallelism); err != nil {
			return err
		}
	}
	for i, t := range tasks {
		s := &taskStart{dirs: taskDirs{
			state: path.Join(p.dir, t.id.String(), "state"),
			work:  path.Join(p.dir, t.id.String(), "work"),
		}, fence: barrier.NewStoreFence()}
		starts[t.global] = s
		if op != nil {
			s.restore = &taskRestore{id: int64(p.from.ID), extras: extras}
		}
		id, err := barrier.NewBackendID(p.entropy)
		if err != nil {
			return err
		}
		switch {
		case plans != nil:
			s.restored, err = barrier.RestoreSubtask(context.Background(), barrier.RestoreInput{
				Metadata: p.from, Plan: plans[i], Backend: p.backend.Name(), Blobs: p.blobs, FileIO: p.fio,
				Dir: s.dirs.state, Pebble: p.backend.pebbleOptions(s.dirs), Paimon: p.backend.paimonOptions(), BackendID: id,
			})
			if err != nil {
				return err
			}
			s.backend, s.history = s.restored.Backend, s.restored.History
			continue
		case n.keyed():
			if s.backend, err = p.backend.open(s.dirs); err != nil {
				return fmt.Errorf("%s: open %s backend: %w", t.id, p.backend.Name(), err)
			}
		}
		if s.history, err = barrier.NewHistory(id); err != nil {
			return err
		}
	}
	return nil
}

// errNoCheckpoint: a restore found no completed checkpoint.
var errNoCheckpoint = errors.New("no completed checkpoint to restore")
