package barrier

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/lakestate/lakestate/keygroup"
)

// The model drives a Ledger the way the coordinator will: subtask stores
// that reuse only what they heard was confirmed, concurrent checkpoints and
// savepoints, acknowledgements delivered late, twice or out of order,
// notifications delayed or lost with a failover, aborts at any time, subtask
// failovers that recreate file names with other content, and coordinator
// restarts that rebuild the ledger from retained metadata. After every step
// each retained checkpoint and savepoint must find every file's blob in
// storage with the content the store had; at the end, storage must hold
// exactly the live blobs.

const modelSubtasks = 2

type modelFile struct {
	path string
	gen  int // the attempt that wrote it: same path, other gen, other content
}

// size repeats across generations, so a mix-up of contents of equal size
// would go unnoticed by size checks and must be caught by content.
func (f modelFile) size() int64 { return int64(100 + 7*(f.gen%2) + len(f.path)) }

func (f modelFile) content(backend string) string {
	return fmt.Sprintf("%s/%s@%d", backend, f.path, f.gen)
}

type modelStore struct {
	index         int
	backend       string
	attempt       int
	next          int
	files         []modelFile
	sent          map[CheckpointID]map[string]modelFile // checkpoints only
	lastCompleted CheckpointID
	base          map[string]modelFile
}

type modelAck struct {
	id      CheckpointID
	attempt int
	state   SubtaskState
	truth   map[string]modelFile
}

type modelNote struct {
	subtask, attempt int
	id               CheckpointID
	complete         bool
}

type modelCheckpoint struct {
	kind   Kind
	doomed bool // its attempt failed: it must never complete
	states map[int]SubtaskState
	truth  map[int]map[string]modelFile
}

type modelStats struct {
	completed, savepoints, aborted, subsumed, placeholders, discarded, late, failovers, restarts, superseded int
}

type model struct {
	t         *testing.T
	rng       *rand.Rand
	retain    int
	l         *Ledger
	storage   map[string]string // blob → content
	stores    []*modelStore
	attempt   int
	nextID    CheckpointID
	acks      []modelAck
	notes     []modelNote
	pending   map[CheckpointID]*modelCheckpoint
	completed map[CheckpointID]*modelCheckpoint // retained checkpoints and live savepoints
	stats     *modelStats
}

func newModel(t *testing.T, seed uint64, stats *modelStats) *model {
	m := &model{
		t: t, rng: rand.New(rand.NewPCG(seed, 0x5eed)), storage: map[string]string{},
		nextID: 1, pending: map[CheckpointID]*modelCheckpoint{}, completed: map[CheckpointID]*modelCheckpoint{}, stats: stats,
	}
	m.retain = 1 + m.rng.IntN(3)
	m.l = newLedger(t, m.retain)
	for i := range modelSubtasks {
		m.stores = append(m.stores, &modelStore{index: i, backend: "backend-" + strconv.Itoa(i), sent: map[CheckpointID]map[string]modelFile{}})
	}
	return m
}

func (m *model) run(steps int) {
	for range steps {
		m.step()
		m.check()
	}
	m.drain()
}

func (m *model) step() {
	switch r := m.rng.IntN(100); {
	case r < 15:
		m.trigger()
	case r < 45:
		m.deliverAck()
	case r < 60:
		m.completeOne()
	case r < 65:
		m.abortOne()
	case r < 88:
		m.deliverNote()
	case r < 91:
		m.failover()
	case r < 93:
		m.restartCoordinator()
	default:
		m.disposeOne()
	}
}

func (m *model) trigger() {
	if len(m.pending) >= 3 {
		return
	}
	id, kind := m.nextID, KindCheckpoint
	m.nextID++
	if m.rng.IntN(7) == 0 {
		kind = KindSavepoint
	}
	if err := m.l.Begin(id, kind); err != nil {
		m.t.Fatal(err)
	}
	m.pending[id] = &modelCheckpoint{kind: kind, states: map[int]SubtaskState{}, truth: map[int]map[string]modelFile{}}
	for _, s := range m.stores {
		state, truth := m.snapshot(s, id, kind)
		m.acks = append(m.acks, modelAck{id: id, attempt: s.attempt, state: state, truth: truth})
	}
}

// snapshot is a store's sync phase plus its uploads: files change a little,
// files its reuse base has become placeholders, the rest are uploaded.
func (m *model) snapshot(s *modelStore, id CheckpointID, kind Kind) (SubtaskState, map[string]modelFile) {
	if len(s.files) > 0 && m.rng.IntN(5) < 2 {
		s.files = slices.Delete(s.files, 0, 1) // compaction removes the oldest
	}
	s.files = append(s.files, modelFile{path: "f-" + strconv.Itoa(s.next), gen: s.attempt})
	s.next++
	truth := map[string]modelFile{}
	var refs []FileRef
	for _, f := range s.files {
		truth[f.path] = f
		if kind == KindCheckpoint && s.base[f.path] == f {
			refs = append(refs, FileRef{Path: f.path, Size: f.size()})
			m.stats.placeholders++
			continue
		}
		blob, err := UploadBlobName(kind, id, FileKey{Backend: s.backend, Table: "t", Path: f.path})
		if err != nil {
			m.t.Fatal(err)
		}
		m.storage[blob] = f.content(s.backend)
		refs = append(refs, FileRef{Path: f.path, Size: f.size(), Blob: blob, Uploaded: true})
	}
	if kind == KindCheckpoint {
		s.sent[id] = truth
	}
	return SubtaskState{
		Index: s.index, KeyGroups: keygroup.RangeForSubtask(128, modelSubtasks, s.index),
		Backend: "paimon", BackendID: s.backend,
		Tables: []TableState{{Name: "t", SnapshotID: int64(id), Files: refs}},
		Extras: map[string]Extra{"next": {[]byte(strconv.Itoa(s.next))}},
	}, truth
}

func (m *model) deliverAck() {
	if len(m.acks) == 0 {
		return
	}
	i := m.rng.IntN(len(m.acks))
	a := m.acks[i]
	if m.rng.IntN(10) != 0 { // otherwise delivered again later
		m.acks = slices.Delete(m.acks, i, i+1)
	}
	resolved, plan, err := m.l.Ack(a.id, a.state)
	m.apply(plan)
	m.stats.discarded += len(plan.Delete)
	mc := m.pending[a.id]
	if err != nil {
		if errors.Is(err, ErrNotPending) {
			m.stats.late++
		} else if mc != nil && !mc.doomed {
			m.t.Fatalf("honest ack of subtask %d for %d rejected: %v", a.state.Index, a.id, err)
		}
		if mc != nil {
			m.apply(m.l.Abort(a.id))
		}
		return
	}
	if mc == nil {
		m.t.Fatalf("ledger accepted an ack for %d, which the coordinator does not have pending", a.id)
	}
	if a.attempt == m.attempt && !mc.doomed {
		mc.states[a.state.Index] = resolved
		mc.truth[a.state.Index] = a.truth
	}
}

func (m *model) completeOne() {
	var ready []CheckpointID
	for id, mc := range m.pending {
		if !mc.doomed && len(mc.states) == modelSubtasks {
			ready = append(ready, id)
		}
	}
	if len(ready) == 0 {
		return
	}
	slices.Sort(ready)
	id := ready[m.rng.IntN(len(ready))]
	mc := m.pending[id]
	meta := MetadataBlobName(mc.kind, id)
	m.storage[meta] = "metadata"
	if m.rng.IntN(10) == 0 { // an abort overtakes the completion
		m.apply(m.l.Abort(id))
		plan, err := m.l.Complete(id, meta)
		if !errors.Is(err, ErrNotPending) {
			m.t.Fatalf("completion after abort: %v", err)
		}
		m.apply(plan)
		if _, ok := m.storage[meta]; ok {
			m.t.Fatalf("metadata of aborted %d left behind", id)
		}
		return
	}
	plan, err := m.l.Complete(id, meta)
	if err != nil {
		m.t.Fatalf("complete %d: %v", id, err)
	}
	delete(m.pending, id)
	m.completed[id] = mc
	m.apply(plan)
	if mc.kind == KindSavepoint {
		m.stats.savepoints++
	} else {
		m.stats.completed++
	}
	for _, s := range m.stores {
		m.notes = append(m.notes, modelNote{subtask: s.index, attempt: s.attempt, id: id, complete: true})
	}
}

func (m *model) abortOne() {
	ids := slices.Sorted(maps.Keys(m.pending))
	if len(ids) == 0 {
		return
	}
	m.apply(m.l.Abort(ids[m.rng.IntN(len(ids))]))
}

func (m *model) disposeOne() {
	sps := m.l.Savepoints()
	if len(sps) == 0 {
		return
	}
	id := sps[m.rng.IntN(len(sps))]
	plan, err := m.l.DisposeSavepoint(id)
	if err != nil {
		m.t.Fatal(err)
	}
	delete(m.completed, id)
	m.apply(plan)
}

// apply carries out a plan: deletes blobs, forgets aborted and subsumed
// checkpoints and tells the stores about aborts.
func (m *model) apply(p Plan) {
	for _, b := range p.Delete {
		delete(m.storage, b) // idempotent, like BlobStore.Delete
	}
	for _, id := range p.Aborted {
		if m.pending[id] == nil {
			m.t.Fatalf("plan aborts %d, which is not pending", id)
		}
		delete(m.pending, id)
		m.stats.aborted++
		for _, s := range m.stores {
			m.notes = append(m.notes, modelNote{subtask: s.index, attempt: s.attempt, id: id})
		}
	}
	for _, id := range p.Subsumed {
		if mc := m.completed[id]; mc == nil || mc.kind != KindCheckpoint {
			m.t.Fatalf("plan subsumes %d, which is not a retained checkpoint", id)
		}
		delete(m.completed, id)
		m.stats.subsumed++
	}
}

func (m *model) deliverNote() {
	if len(m.notes) == 0 {
		return
	}
	i := m.rng.IntN(len(m.notes))
	n := m.notes[i]
	m.notes = slices.Delete(m.notes, i, i+1)
	s := m.stores[n.subtask]
	if n.attempt != s.attempt {
		return // addressed to a failed attempt
	}
	if !n.complete {
		delete(s.sent, n.id)
		return
	}
	// Flink's rule (FLINK-23949): only a newer checkpoint this store sent
	// becomes the reuse base; a savepoint notification never does.
	if files, ok := s.sent[n.id]; ok && n.id > s.lastCompleted {
		s.base, s.lastCompleted = files, n.id
		for id := range s.sent {
			if id <= n.id {
				delete(s.sent, id)
			}
		}
	}
}

// failover restarts every subtask from the latest completed checkpoint with
// the same backend ids. Pending checkpoints are doomed but aborted only
// later; their acknowledgements may still arrive.
func (m *model) failover() {
	m.stats.failovers++
	for _, mc := range m.pending {
		mc.doomed = true
	}
	m.resetStores()
}

func (m *model) resetStores() {
	m.attempt++
	latest, _, ok := m.l.Latest()
	for _, s := range m.stores {
		s.attempt, s.files, s.base, s.lastCompleted, s.next = m.attempt, nil, nil, 0, 0
		s.sent = map[CheckpointID]map[string]modelFile{}
		if !ok {
			continue
		}
		mc := m.completed[latest]
		truth := mc.truth[s.index]
		for _, p := range slices.Sorted(maps.Keys(truth)) {
			s.files = append(s.files, truth[p])
		}
		slices.SortFunc(s.files, func(a, b modelFile) int { return fileNumber(a) - fileNumber(b) })
		s.base, s.lastCompleted = truth, latest
		s.next, _ = strconv.Atoi(string(mc.states[s.index].Extras["next"].Bytes()))
	}
}

func fileNumber(f modelFile) int {
	n, _ := strconv.Atoi(f.path[len("f-"):])
	return n
}

// restartCoordinator loses the ledger and every pending checkpoint, rebuilds
// the ledger from the retained checkpoints' and savepoints' metadata, sweeps
// what nothing references, and restarts the job.
func (m *model) restartCoordinator() {
	m.stats.restarts++
	m.l = newLedger(m.t, m.retain)
	for _, id := range slices.Sorted(maps.Keys(m.completed)) {
		mc := m.completed[id]
		if _, err := m.l.Restore(m.metadata(id, mc), MetadataBlobName(mc.kind, id), true); err != nil {
			m.t.Fatalf("restore %d: %v", id, err)
		}
	}
	live := m.l.LiveBlobs()
	for b := range m.storage {
		if _, ok := slices.BinarySearch(live, b); !ok {
			delete(m.storage, b)
		}
	}
	m.pending = map[CheckpointID]*modelCheckpoint{}
	m.acks, m.notes = nil, nil
	m.resetStores()
}

func (m *model) metadata(id CheckpointID, mc *modelCheckpoint) *Metadata {
	op := OperatorState{ID: "op", Parallelism: modelSubtasks, MaxParallelism: 128}
	for i := range modelSubtasks {
		op.Subtasks = append(op.Subtasks, mc.states[i])
	}
	return &Metadata{ID: id, Kind: mc.kind, JobID: "job", Operators: []OperatorState{op}}
}

// check: every retained checkpoint and savepoint is restorable with the
// content its stores had, and the ledger agrees with the model about what
// is retained.
func (m *model) check() {
	m.t.Helper()
	if err := m.l.registry.checkInvariants(); err != nil {
		m.t.Fatalf("registry: %v", err)
	}
	retained := append(m.l.Retained(), m.l.Savepoints()...)
	slices.Sort(retained)
	if want := slices.Sorted(maps.Keys(m.completed)); !slices.Equal(retained, want) {
		m.t.Fatalf("ledger retains %v, model %v", retained, want)
	}
	for id, mc := range m.completed {
		if _, ok := m.storage[MetadataBlobName(mc.kind, id)]; !ok {
			m.t.Fatalf("metadata of retained %d lost", id)
		}
		for i, s := range mc.states {
			for _, f := range s.Tables[0].Files {
				want := mc.truth[i][f.Path].content(s.BackendID)
				if got, ok := m.storage[f.Blob]; !ok {
					m.t.Fatalf("%s %d subtask %d: %s lost (blob %s)", mc.kind, id, i, f.Path, f.Blob)
				} else if got != want {
					m.t.Fatalf("%s %d subtask %d: %s resolves to %s holding %s, want %s", mc.kind, id, i, f.Path, f.Blob, got, want)
				}
			}
		}
	}
	for _, b := range m.l.LiveBlobs() {
		if _, ok := m.storage[b]; !ok {
			m.t.Fatalf("live blob %s missing from storage", b)
		}
	}
	for k, e := range m.l.registry.entries {
		if len(e.copies) > 1 {
			m.stats.superseded++
			_ = k
		}
	}
}

// drain delivers what is in flight and aborts what is pending; then storage
// must hold exactly the live blobs.
func (m *model) drain() {
	for len(m.acks) > 0 {
		a := m.acks[0]
		m.acks = m.acks[1:]
		_, plan, err := m.l.Ack(a.id, a.state)
		m.apply(plan)
		if err != nil && m.pending[a.id] != nil {
			m.apply(m.l.Abort(a.id))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(m.pending)) {
		m.apply(m.l.Abort(id))
	}
	m.check()
	live := m.l.LiveBlobs()
	stored := slices.Sorted(maps.Keys(m.storage))
	if !slices.Equal(stored, live) {
		leaked, lost := diff(stored, live), diff(live, stored)
		m.t.Fatalf("storage differs from live blobs: leaked %v, lost %v", leaked, lost)
	}
}

func diff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); !ok {
			out = append(out, x)
		}
	}
	return out
}

func TestLedgerModel(t *testing.T) {
	var stats modelStats
	for seed := range uint64(80) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			newModel(t, seed, &stats).run(300)
		})
	}
	t.Logf("%+v", stats)
	// The runs must have reached the interesting paths, or they prove little.
	for name, n := range map[string]int{
		"completed": stats.completed, "savepoints": stats.savepoints, "aborted": stats.aborted,
		"subsumed": stats.subsumed, "placeholders": stats.placeholders, "discarded": stats.discarded,
		"late acks": stats.late, "failovers": stats.failovers, "restarts": stats.restarts,
		"superseded copies": stats.superseded,
	} {
		if n == 0 {
			t.Errorf("no run reached %s", name)
		}
	}
}
