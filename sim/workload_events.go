package sim

import (
	"fmt"
	"math/rand/v2"
)

// event is one record of the source's stream. The stream is a pure function
// of the seed, so a restored source replays it from any offset.
type event struct {
	Off  int64 // position in the stream
	Key  int64
	Val  int64
	Time int64 // event time, slightly out of order
}

// stream is the source's event sequence of one seed.
type stream struct {
	events []event
}

func newStream(seed uint64, n, keys int) *stream {
	r := rand.New(rand.NewPCG(seed, 0x5eed_e7e7))
	s := &stream{events: make([]event, n)}
	for i := range s.events {
		s.events[i] = event{Off: int64(i), Key: int64(r.IntN(keys)), Val: int64(r.IntN(100)), Time: int64(i)*10 + int64(r.IntN(40))}
	}
	return s
}

// The operator's windows, in event-time units.
const (
	windowSpan   = 60  // the range read sums the key's events of the last windowSpan
	windowRetain = 150 // rows older than this behind the current event are deleted
	listLen      = 3   // the list state keeps the key's last listLen events
	subKeys      = 5   // the map state counts events per Val % subKeys
	// windowCleanEvery: every that many offsets, an event deletes its key's
	// rows older than windowRetain.
	windowCleanEvery = 4
)

// keyState is what the keyed operator keeps per key, in plain Go: the model
// the store-backed operator is checked against.
type keyState struct {
	count, sum int64
	last       [][2]int64 // (val, off), oldest first
	subs       map[int64]int64
	win        []winRow // sorted by (time, seq)
}

type winRow struct{ time, seq, val int64 }

// output is the record the operator emits for an event: a digest of every
// state it read after applying the event.
func output(e event, count, sum int64, last [][2]int64, mapLen int, subCount int64, winSum, winN int64) string {
	ld := int64(0)
	for _, l := range last {
		ld = ld*131 + l[0]*7 + l[1]
	}
	return fmt.Sprintf("k=%d n=%d s=%d l=%d/%d m=%d/%d w=%d/%d", e.Key, count, sum, len(last), ld, mapLen, subCount, winSum, winN)
}

// model runs the operator over the whole stream without failures, state in
// Go maps: the reference output and the reference final state.
type model struct {
	keys map[int64]*keyState
	out  []string // by offset
}

func runModel(s *stream) *model {
	m := &model{keys: map[int64]*keyState{}, out: make([]string, len(s.events))}
	for _, e := range s.events {
		ks := m.keys[e.Key]
		if ks == nil {
			ks = &keyState{subs: map[int64]int64{}}
			m.keys[e.Key] = ks
		}
		ks.count++
		ks.sum += e.Val
		ks.last = append(ks.last, [2]int64{e.Val, e.Off})
		if len(ks.last) > listLen {
			ks.last = append([][2]int64(nil), ks.last[len(ks.last)-listLen:]...)
		}
		sub := e.Val % subKeys
		ks.subs[sub]++
		// insert (time, off) in order
		row := winRow{e.Time, e.Off, e.Val}
		i := len(ks.win)
		for i > 0 && (ks.win[i-1].time > row.time || ks.win[i-1].time == row.time && ks.win[i-1].seq > row.seq) {
			i--
		}
		ks.win = append(ks.win, winRow{})
		copy(ks.win[i+1:], ks.win[i:])
		ks.win[i] = row
		var ws, wn int64
		for _, w := range ks.win {
			if w.time >= e.Time-windowSpan && w.time <= e.Time {
				ws += w.val
				wn++
			}
		}
		if e.Off%windowCleanEvery == 0 {
			kept := ks.win[:0]
			for _, w := range ks.win {
				if w.time >= e.Time-windowRetain {
					kept = append(kept, w)
				}
			}
			ks.win = kept
		}
		m.out[e.Off] = output(e, ks.count, ks.sum, ks.last, len(ks.subs), ks.subs[sub], ws, wn)
	}
	return m
}
