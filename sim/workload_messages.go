package sim

import (
	"fmt"

	"github.com/lakestate/lakestate/barrier"
)

// Messages between the workload's actors. All are immutable once sent.
type (
	// events carries a batch of the stream from the source to one keyed
	// subtask.
	events struct{ batch []event }
	// streamBarrier is checkpoint ID's barrier flowing with the records:
	// source → keyed subtask → sink subtask.
	streamBarrier struct {
		id   barrier.CheckpointID
		kind barrier.Kind
	}
	// outputs carries output records from a keyed subtask to its sink.
	outputs struct{ recs []record }
	// sourceTick paces the source.
	sourceTick struct{}
	// triggerTick paces the checkpoint triggers.
	triggerTick struct{}
	// startTriggers starts the trigger timer once the job is wired.
	startTriggers struct{ source any }
	// stopTriggers stops triggering; the job actor answers jobIdle to
	// replyTo once no checkpoint it triggered is pending.
	stopTriggers struct{}
	jobIdle      struct{}
	// delayed is a notification a relay holds back.
	delayed struct{ msg any }
	// progress tells the driver of the real system that output was
	// committed.
	progress struct{}
)

func (m *events) Trace() string {
	if len(m.batch) == 0 {
		return "empty"
	}
	return fmt.Sprintf("off=%d n=%d", m.batch[0].Off, len(m.batch))
}
func (m *streamBarrier) Trace() string { return fmt.Sprintf("id=%d %s", m.id, m.kind) }
func (m *outputs) Trace() string       { return fmt.Sprintf("n=%d", len(m.recs)) }
