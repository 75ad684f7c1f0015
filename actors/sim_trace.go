package actors

import (
	"encoding/binary"
	"fmt"
	"reflect"

	"github.com/asynkron/protoactor-go/actor"
)

// Traceable is implemented by messages whose content should be part of a simulation's trace. The
// string must be deterministic: no pointers, no map iteration order, no wall-clock time.
type Traceable interface {
	Trace() string
}

type stepKind byte

const (
	stepMessage  stepKind = 'm' // a message handled by an actor
	stepTimer    stepKind = 't' // a timer delivering its message
	stepExecutor stepKind = 'x' // an executor job running
	stepCrash    stepKind = 'c' // an actor crashed by Sim.Crash
)

// traceHash is FNV-1a (64 bit), folded by hand so the trace needs no allocation per step.
type traceHash struct{ sum uint64 }

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func newTraceHash() traceHash { return traceHash{sum: fnvOffset} }

func (h *traceHash) bytes(b []byte) {
	for _, c := range b {
		h.sum ^= uint64(c)
		h.sum *= fnvPrime
	}
}

// field folds s followed by a separator, so ("ab","c") and ("a","bc") differ.
func (h *traceHash) field(s string) {
	for i := 0; i < len(s); i++ {
		h.sum ^= uint64(s[i])
		h.sum *= fnvPrime
	}
	h.sum ^= 0xff
	h.sum *= fnvPrime
}

// record folds one step into the trace and writes it to SimOptions.Trace if set.
func (s *Sim) record(kind stepKind, receiver string, msg any) {
	typ, detail := describe(msg)
	var buf [9]byte
	buf[0] = byte(kind)
	binary.LittleEndian.PutUint64(buf[1:], uint64(s.clock.now))
	s.trace.bytes(buf[:])
	s.trace.field(receiver)
	s.trace.field(typ)
	s.trace.field(detail)
	if s.opts.Trace != nil {
		fmt.Fprintf(s.opts.Trace, "%d %v %c %s %s %s\n", s.steps, s.clock.now, kind, receiver, typ, detail)
	}
}

// describe names a message by type (never by %v, which would print pointers) plus its trace
// string if it has one.
func describe(msg any) (typ, detail string) {
	if env, ok := msg.(*actor.MessageEnvelope); ok {
		msg = env.Message
	}
	if msg == nil {
		return "", ""
	}
	if t, ok := msg.(Traceable); ok {
		detail = t.Trace()
	}
	return reflect.TypeOf(msg).String(), detail
}
