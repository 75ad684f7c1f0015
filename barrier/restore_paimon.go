package barrier

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// PaimonRoot is where a restored subtask's paimon tables live: the root of
// its subtask.PaimonBackend, one directory per state table.
func PaimonRoot(dir string) string { return path.Join(dir, "paimon") }

// The snapshot files of a Paimon table, relative to the table directory.
const (
	paimonSnapshotDir    = "snapshot"
	paimonSnapshotPrefix = paimonSnapshotDir + "/snapshot-"
)

// paimonOptions are the options of every restored paimon backend: its tables
// live on the restore's FileIO, where the download put them.
func paimonOptions(in RestoreInput) subtask.PaimonOptions {
	o := in.Paimon
	o.FileIO = in.FileIO
	return o
}

// openPaimonRestored downloads every table of a paimon checkpoint into its
// own fresh directory under root, checks it against its snapshot and opens
// the backend over root. A table directory that already holds files is
// refused, so a restore never writes into a table that exists.
func openPaimonRestored(ctx context.Context, in RestoreInput, st *SubtaskState, root string, read *int64) (subtask.Backend, error) {
	opts := paimonOptions(in)
	for i := range st.Tables {
		t := &st.Tables[i]
		buckets, err := restorePaimonTable(ctx, in, t, path.Join(root, t.Name), read)
		if err != nil {
			return nil, fmt.Errorf("from subtask %d: table %q: %w", st.Index, t.Name, err)
		}
		if i == 0 || buckets == opts.Buckets {
			opts.Buckets = buckets
			continue
		}
		return nil, fmt.Errorf("from subtask %d: table %q has %d buckets, table %q has %d: one backend keeps one bucket count",
			st.Index, t.Name, buckets, st.Tables[0].Name, opts.Buckets)
	}
	return subtask.OpenPaimon(root, opts)
}

// restorePaimonTable downloads one table into dir, writes its snapshot hints
// and checks that the files its snapshot references are all there, each with
// the size its manifest records, that every deletion-vector file decodes and
// that every data file's footer reads. It returns the table's bucket count.
func restorePaimonTable(ctx context.Context, in RestoreInput, t *TableState, dir string, read *int64) (int, error) {
	snapshotID, err := paimonSnapshotOf(t)
	if err != nil {
		return 0, err
	}
	if names, err := in.FileIO.List(dir); err != nil {
		return 0, err
	} else if len(names) > 0 {
		return 0, fmt.Errorf("restore into %s: the directory is not empty", dir)
	}
	sizes := make(map[string]int64, len(t.Files))
	for _, f := range t.Files {
		n, err := download(ctx, in.Blobs, in.FileIO, f, path.Join(dir, f.Path))
		*read += n
		if err != nil {
			return 0, fmt.Errorf("file %q: %w", f.Path, err)
		}
		sizes[f.Path] = f.Size
	}
	id := strconv.FormatInt(snapshotID, 10)
	for _, hint := range []string{"EARLIEST", "LATEST"} {
		if err := writeSynced(in.FileIO, path.Join(dir, paimonSnapshotDir, hint), []byte(id)); err != nil {
			return 0, err
		}
	}
	tbl, err := table.Open(in.FileIO, dir)
	if err != nil {
		return 0, err
	}
	if err := checkPaimonFiles(tbl, snapshotID, sizes); err != nil {
		return 0, fmt.Errorf("snapshot %d: %w", snapshotID, err)
	}
	return tbl.Schema().Buckets()
}

// paimonSnapshotOf finds the one snapshot file of a checkpointed table.
func paimonSnapshotOf(t *TableState) (int64, error) {
	var ids []int64
	for _, f := range t.Files {
		digits, ok := strings.CutPrefix(f.Path, paimonSnapshotPrefix)
		if !ok {
			continue
		}
		id, err := strconv.ParseInt(digits, 10, 64)
		if err != nil || id <= 0 || strconv.FormatInt(id, 10) != digits {
			return 0, fmt.Errorf("file %q: not a snapshot file name", f.Path)
		}
		ids = append(ids, id)
	}
	switch {
	case len(ids) != 1:
		return 0, fmt.Errorf("a paimon checkpoint holds one snapshot file per table, this one %d", len(ids))
	case t.SnapshotID != 0 && t.SnapshotID != ids[0]:
		return 0, fmt.Errorf("the checkpoint names snapshot %d but holds snapshot-%d", t.SnapshotID, ids[0])
	}
	return ids[0], nil
}

// checkPaimonFiles checks the live files of snapshot id against the
// downloaded ones (table-relative path to size).
func checkPaimonFiles(tbl *table.Table, id int64, sizes map[string]int64) error {
	if _, err := tbl.Snapshot(id); err != nil {
		return err
	}
	entries, index, err := tbl.LiveFiles(id)
	if err != nil {
		return err
	}
	present := func(rel string, size int64) error {
		got, ok := sizes[rel]
		switch {
		case !ok:
			return fmt.Errorf("file %q is live but missing from the checkpoint", rel)
		case got != size:
			return fmt.Errorf("file %q has %d bytes, its manifest says %d", rel, got, size)
		}
		return nil
	}
	for _, e := range index {
		if err := present(path.Join("index", e.FileName), e.FileSize); err != nil {
			return err
		}
		if e.IndexType == table.IndexTypeDeletionVectors {
			if _, err := tbl.ReadDeletionVectors(e); err != nil {
				return err
			}
		}
	}
	for _, e := range entries {
		bucket, err := tbl.BucketPath(e.Partition, e.Bucket)
		if err != nil {
			return err
		}
		rel := path.Join(bucket, e.File.FileName)
		if err := present(rel, e.File.FileSize); err != nil {
			return err
		}
		f, err := table.OpenDataFile(tbl.FileIO(), path.Join(tbl.Dir(), rel), tbl.Schema())
		if err != nil {
			return err
		}
		rows := f.NumRows()
		if err := f.Close(); err != nil {
			return err
		}
		if rows != e.File.RowCount {
			return fmt.Errorf("file %q has %d rows, its manifest says %d", rel, rows, e.File.RowCount)
		}
	}
	return nil
}

// writeSynced writes a small file and syncs it.
func writeSynced(fio table.FileIO, p string, data []byte) error {
	w, err := fio.Create(p)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	if err == nil {
		err = w.Sync()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}
