package runtime

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/barrier"
)

// Messages between the tasks of a job. ch is the channel's number at the
// receiver, except in creditMsg, which travels back to the sender and names
// the sender's output channel.
type (
	dataMsg struct {
		ch   int32
		recs []Record
	}
	barrierMsg struct {
		ch int32
		id int64
	}
	watermarkMsg struct {
		ch int32
		wm int64
	}
	endMsg struct{ ch int32 }
	// creditMsg returns n credits, and with them the batches the receiver
	// is done with (emptied, for the sender to fill again).
	creditMsg struct {
		ch, n int32
		spent [][]Record
	}
)

func (m *dataMsg) Trace() string      { return fmt.Sprintf("ch=%d n=%d", m.ch, len(m.recs)) }
func (m *barrierMsg) Trace() string   { return fmt.Sprintf("ch=%d id=%d", m.ch, m.id) }
func (m *watermarkMsg) Trace() string { return fmt.Sprintf("ch=%d wm=%d", m.ch, m.wm) }
func (m *endMsg) Trace() string       { return fmt.Sprintf("ch=%d", m.ch) }
func (m *creditMsg) Trace() string    { return fmt.Sprintf("ch=%d n=%d", m.ch, m.n) }

// Messages between the job actor and its tasks.
type (
	// wireMsg gives a task the PIDs of every task and of every task's Store
	// actor, by global index.
	wireMsg struct{ pids, stores []*actor.PID }
	// injectBarrier asks a source task to start checkpoint id: record its
	// offsets and inject barrier id into its outputs.
	injectBarrier struct{ id int64 }
	// holdSources stops a source reading (hold) or lets it go on: some
	// store's maintenance is behind.
	holdSources struct{ hold bool }
	// startMsg lets a source start reading, once every task is wired.
	startMsg struct{}
	// produceMsg makes a source read its next batch; token tells a poll
	// timer's message from a stale one.
	produceMsg struct{ token uint64 }
	taskFailed struct {
		task int
		err  error
	}
	// inputEnded: every input channel of a sink ended.
	inputEnded struct{ task int }
	// sinkCommitted: a sink committed every transaction up to checkpoint id.
	sinkCommitted struct {
		task int
		id   int64
	}
	// sourceIdle: a source has nothing to read now (or has finished), or
	// reads again.
	sourceIdle struct {
		task int
		idle bool
	}
	checkpointTick struct{}
	triggerRequest struct{ token uint64 }
)

func (m *injectBarrier) Trace() string { return fmt.Sprintf("id=%d", m.id) }

// Events the job actor reports to the driver's probe.
type (
	evTriggered struct {
		token uint64
		id    int64
	}
	evCompleted struct{ id int64 }
	evAborted   struct {
		id  int64
		err error
	}
	evStarted struct{ restored int64 }
	evSynced  struct {
		id    int64
		task  int
		keyed bool
		took  time.Duration
		done  *barrier.SyncDone
	}
	evUploaded     struct{ stats *barrier.UploadStats }
	evBackpressure struct{ stalled bool }
	evFinished     struct{ id int64 }
	evFailed       struct{ err error }
	evSourcesIdle  struct{}
)
