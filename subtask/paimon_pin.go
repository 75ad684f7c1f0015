package subtask

import "fmt"

// PinSnapshot makes the reads of state name see snapshot id of its table.
// The barrier pins the snapshot its maintenance round produced and keeps it
// from expiring while reads use it; Store.Repin would pin the newest
// snapshot, which a later maintenance commit may already have passed. Like
// every call on a store, it must not run concurrently with the store's use.
func (b *PaimonBackend) PinSnapshot(name string, id int64) error {
	t, ok := b.tables[name]
	if !ok {
		return fmt.Errorf("paimon backend: pin snapshot %d of unknown state %q", id, name)
	}
	if id == t.snapshot {
		return nil
	}
	return t.pin(id)
}

// TTL is the time-to-live of state name's rows in milliseconds (0: they
// never expire); with a TTL, rows keep their write time in ColumnWriteTime.
// A maintenance session that drops expired rows needs both, and the same
// clock as the store's SetNow.
func (b *PaimonBackend) TTL(name string) (int64, bool) {
	t, ok := b.tables[name]
	if !ok {
		return 0, false
	}
	return t.l.TTL, true
}
