package table

import (
	"errors"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// CommitInfo identifies a commit and carries its time. (User, Identifier,
// kind) makes a commit idempotent: committing it again is a no-op that
// reports the snapshot that already holds it. Identifiers of one user must
// grow. The time is the caller's (the commit path never reads a clock).
type CommitInfo struct {
	User       string
	Identifier int64
	TimeMillis int64
}

// CommitResult is the outcome of a commit.
type CommitResult struct {
	SnapshotID int64
	Added      []ManifestEntry // the ADD entries the snapshot recorded
	Skipped    bool            // already committed; SnapshotID is that snapshot
}

// CompactChange is what a compaction commits: data files it removes (at
// their current level), files it adds (new files, or existing files at a new
// level), and for every bucket whose deletion vectors changed the bucket's
// complete new set.
type CompactChange struct {
	Deleted []ManifestEntry
	Added   []ManifestEntry
	DVFiles []BucketDV
}

// BucketDV is the complete set of deletion vectors of one bucket after a
// commit: data file name -> deleted row positions. An empty set removes the
// bucket's deletion-vector file.
type BucketDV struct {
	Partition []byte
	Bucket    int32
	Vectors   map[string]*roaring.Bitmap
}

// ErrCommitStateUnknown marks a commit whose snapshot may or may not have
// become visible (publication or its directory sync failed). Every file it
// wrote is kept; retrying with the same CommitInfo finds out which.
var ErrCommitStateUnknown = errors.New("commit outcome unknown")

// ErrConflict marks a commit refused because the table changed under it in
// a way it cannot absorb (a file it deletes is gone, or its files overlap
// others within a level). Retrying the same change cannot succeed.
var ErrConflict = errors.New("commit conflict")

// CommitAppend commits new files (ADD entries, normally level-0 files a
// writer produced) as an APPEND snapshot. With no files it still publishes
// a snapshot, which records the commit identifier.
func (t *Table) CommitAppend(added []ManifestEntry, c CommitInfo) (CommitResult, error) {
	delta := make([]ManifestEntry, len(added))
	for i, e := range added {
		e.Kind = FileAdd
		delta[i] = e
	}
	return t.commit(CommitAppend, delta, nil, c)
}

// CommitCompact commits a compaction as a COMPACT snapshot. It is refused
// with ErrConflict unless every deleted file is live and, after the change,
// no two files of a level >= 1 of a bucket overlap in key range.
func (t *Table) CommitCompact(ch CompactChange, c CommitInfo) (CommitResult, error) {
	delta := make([]ManifestEntry, 0, len(ch.Deleted)+len(ch.Added))
	for _, e := range ch.Deleted {
		e.Kind = FileDelete
		delta = append(delta, e)
	}
	for _, e := range ch.Added {
		e.Kind = FileAdd
		delta = append(delta, e)
	}
	return t.commit(CommitCompact, delta, slices.Clone(ch.DVFiles), c)
}

// commitFiles are the files one commit wrote, to be removed when it gives up.
type commitFiles struct {
	manifests []string // manifest-directory file names
	indexes   []string // index-directory file names
}

func (f *commitFiles) remove(t *Table) {
	for _, name := range f.manifests {
		t.fio.Remove(t.paths.manifestPath(name))
	}
	for _, name := range f.indexes {
		t.fio.Remove(t.paths.indexPath(name))
	}
	*f = commitFiles{}
}

func (t *Table) commit(kind CommitKind, delta []ManifestEntry, dvs []BucketDV, c CommitInfo) (CommitResult, error) {
	t.commitMu.Lock()
	defer t.commitMu.Unlock()
	if err := t.checkDelta(kind, delta, dvs); err != nil {
		return CommitResult{}, fmt.Errorf("commit %s of %s/%d: %w", kind, c.User, c.Identifier, err)
	}
	latest, err := t.latestSnapshot()
	if err != nil {
		return CommitResult{}, err
	}
	if id, done, err := t.findCommitted(c, kind, latest); err != nil || done {
		return CommitResult{SnapshotID: id, Skipped: done}, err
	}

	// Files that do not depend on the base: written once, kept across retries.
	var shared commitFiles
	deltaMetas, err := t.meta.writeManifests(delta)
	if err != nil {
		return CommitResult{}, err
	}
	for _, m := range deltaMetas {
		shared.manifests = append(shared.manifests, m.FileName)
	}
	deltaList, deltaListSize, err := t.meta.writeManifestList(deltaMetas)
	if err != nil {
		shared.remove(t)
		return CommitResult{}, err
	}
	shared.manifests = append(shared.manifests, deltaList)
	dvEntries, err := t.writeDVFiles(dvs)
	for _, e := range dvEntries {
		shared.indexes = append(shared.indexes, e.FileName)
	}
	if err != nil {
		shared.remove(t)
		return CommitResult{}, err
	}
	if err := t.syncNewNames(delta, len(dvEntries) > 0); err != nil {
		shared.remove(t)
		return CommitResult{}, err
	}

	for attempt := 0; ; attempt++ {
		live, err := t.liveAt(latest)
		if err != nil {
			shared.remove(t)
			return CommitResult{}, err
		}
		if err := t.checkConflicts(kind, live, delta, dvs); err != nil {
			shared.remove(t)
			return CommitResult{}, fmt.Errorf("commit %s of %s/%d on snapshot %d: %w", kind, c.User, c.Identifier, live.snapshotID, err)
		}
		snap, index, own, err := t.prepareSnapshot(kind, latest, live, delta, deltaList, deltaListSize, dvs, dvEntries, c)
		if err != nil {
			shared.remove(t)
			return CommitResult{}, err
		}
		err = t.snapshots.publish(snap)
		if err == nil {
			// A lost hint only costs readers a directory listing.
			_ = t.snapshots.writeHint(latestHint, snap.ID)
			t.advanceOwn(live, snap, delta, index)
			t.commits.record(snap)
			return CommitResult{SnapshotID: snap.ID, Added: addsOf(delta)}, nil
		}
		if errors.Is(err, ErrCommitStateUnknown) {
			// Keep every file the snapshot could reference.
			return CommitResult{}, err
		}
		if !errors.Is(err, errSnapshotExists) {
			own.remove(t)
			shared.remove(t)
			return CommitResult{}, err
		}
		own.remove(t)
		if attempt >= t.retries {
			shared.remove(t)
			return CommitResult{}, fmt.Errorf("commit %s of %s/%d: snapshot id taken %d times in a row: %w", kind, c.User, c.Identifier, attempt+1, err)
		}
		if latest, err = t.latestSnapshot(); err != nil {
			shared.remove(t)
			return CommitResult{}, err
		}
		id, done, err := t.findCommitted(c, kind, latest)
		if err != nil || done {
			shared.remove(t)
			return CommitResult{SnapshotID: id, Skipped: done}, err
		}
	}
}

func addsOf(delta []ManifestEntry) []ManifestEntry {
	var out []ManifestEntry
	for _, e := range delta {
		if e.Kind == FileAdd {
			out = append(out, e)
		}
	}
	return out
}

// latestSnapshot reads the newest snapshot, or nil for an empty table.
func (t *Table) latestSnapshot() (*Snapshot, error) {
	id, ok, err := t.snapshots.latestID()
	if err != nil || !ok {
		return nil, err
	}
	return t.snapshots.read(id)
}

// prepareSnapshot writes the base manifest list (merging manifests) and, if
// deletion vectors changed, a new index manifest (returned as index), and
// returns the snapshot that publishes them with the files it wrote for this
// attempt.
func (t *Table) prepareSnapshot(kind CommitKind, latest *Snapshot, live *liveState, delta []ManifestEntry,
	deltaList string, deltaListSize int64, dvs []BucketDV, dvEntries []IndexManifestEntry, c CommitInfo,
) (snap *Snapshot, index []IndexManifestEntry, own commitFiles, err error) {
	fail := func(err error) (*Snapshot, []IndexManifestEntry, commitFiles, error) {
		own.remove(t)
		return nil, nil, commitFiles{}, err
	}
	snap = newSnapshot()
	snap.ID, snap.SchemaID = 1, t.schema.ID
	snap.LogOffsets = map[int32]int64{}
	var before []ManifestFileMeta
	nextRowID := int64(0)
	if latest != nil {
		if before, err = t.meta.dataManifests(latest); err != nil {
			return fail(err)
		}
		snap.ID = latest.ID + 1
		snap.TotalRecordCount = latest.TotalRecordCount
		snap.IndexManifest = latest.IndexManifest
		snap.Watermark = latest.Watermark
		snap.Statistics = latest.Statistics
		if latest.LogOffsets != nil {
			snap.LogOffsets = latest.LogOffsets
		}
		if latest.NextRowID != nil {
			nextRowID = *latest.NextRowID
		}
	}
	base, merged, err := t.meta.mergeManifests(before, t.merge)
	for _, m := range merged {
		own.manifests = append(own.manifests, m.FileName)
	}
	if err != nil {
		return fail(err)
	}
	baseList, baseListSize, err := t.meta.writeManifestList(base)
	if err != nil {
		return fail(err)
	}
	own.manifests = append(own.manifests, baseList)
	if len(dvs) > 0 {
		index = combineIndex(live.index, dvs, dvEntries)
		if snap.IndexManifest, err = t.meta.writeIndexManifest(index); err != nil {
			return fail(err)
		}
		own.manifests = append(own.manifests, snap.IndexManifest)
	}
	if err := t.fio.SyncDir(t.paths.manifestDir()); err != nil {
		return fail(fmt.Errorf("sync %s: %w", t.paths.manifestDir(), err))
	}
	var deltaRecords int64
	for _, e := range delta {
		if e.Kind == FileAdd {
			deltaRecords += e.File.RowCount
		} else {
			deltaRecords -= e.File.RowCount
		}
	}
	zero := int64(0)
	snap.BaseManifestList, snap.BaseManifestListSize = baseList, &baseListSize
	snap.DeltaManifestList, snap.DeltaManifestListSize = deltaList, &deltaListSize
	snap.CommitUser, snap.CommitIdentifier, snap.CommitKind = c.User, c.Identifier, kind
	snap.TimeMillis = c.TimeMillis
	snap.TotalRecordCount += deltaRecords
	snap.DeltaRecordCount = deltaRecords
	snap.ChangelogRecordCount = &zero
	snap.NextRowID = &nextRowID
	return snap, index, own, nil
}

// advanceOwn moves the cached live state past our own snapshot; index is
// the new index manifest's entries, nil when it did not change.
func (t *Table) advanceOwn(live *liveState, snap *Snapshot, delta []ManifestEntry, index []IndexManifestEntry) {
	t.liveMu.Lock()
	defer t.liveMu.Unlock()
	if err := live.files.applyAll(delta); err != nil {
		// checkConflicts folded the same entries without error.
		panic(fmt.Sprintf("commit: delta of snapshot %d does not fold after its checks: %v", snap.ID, err))
	}
	if index != nil {
		live.indexName, live.index = snap.IndexManifest, index
	}
	live.snapshotID = snap.ID
	t.live = live
}

// syncNewNames syncs the directories that received new names for this
// commit before any snapshot can reference them: the buckets of added data
// files, the index directory and the manifest directory.
func (t *Table) syncNewNames(delta []ManifestEntry, wroteIndex bool) error {
	dirs := map[string]bool{}
	for _, e := range delta {
		if e.Kind != FileAdd || e.File.ExternalPath != nil {
			continue
		}
		dir, err := t.paths.bucketDir(e.Partition, e.Bucket)
		if err != nil {
			return err
		}
		dirs[dir] = true
	}
	if wroteIndex {
		dirs[t.paths.indexDir()] = true
	}
	for dir := range dirs {
		if err := t.fio.SyncDir(dir); err != nil {
			return fmt.Errorf("sync %s: %w", dir, err)
		}
	}
	return nil
}
