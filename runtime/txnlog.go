package runtime

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// TxnLog is a Committer that keeps every committed transaction as a file of
// a directory, named by its TxnID, so that a job's committed output survives
// the process: a run restored in another process re-commits the
// transactions its checkpoint still holds (a file that exists is not
// written again) and Replay reads everything back. Commit runs on the
// executor, like every Commit.
type TxnLog struct{ dir string }

const txnLogSuffix = ".txn"

// OpenTxnLog returns the log in dir, creating the directory.
func OpenTxnLog(dir string) (*TxnLog, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &TxnLog{dir: dir}, nil
}

// txnFileName is <sink>-<writer>-<checkpoint>.txn, the sink's name escaped.
func txnFileName(id TxnID) string {
	return fmt.Sprintf("%s-%d-%d%s", url.PathEscape(id.Sink), id.Writer, id.Checkpoint, txnLogSuffix)
}

func parseTxnFileName(name string) (TxnID, bool) {
	base, ok := strings.CutSuffix(name, txnLogSuffix)
	if !ok {
		return TxnID{}, false
	}
	parts := strings.Split(base, "-")
	if len(parts) < 3 {
		return TxnID{}, false
	}
	ck, err1 := strconv.ParseInt(parts[len(parts)-1], 10, 64)
	w, err2 := strconv.Atoi(parts[len(parts)-2])
	sink, err3 := url.PathUnescape(strings.Join(parts[:len(parts)-2], "-"))
	if err1 != nil || err2 != nil || err3 != nil {
		return TxnID{}, false
	}
	return TxnID{Sink: sink, Writer: w, Checkpoint: ck}, true
}

// Commit writes the transaction's file unless it exists: the write goes to
// a temporary file that is synced and renamed into place.
func (l *TxnLog) Commit(txn *Txn) error {
	name := filepath.Join(l.dir, txnFileName(txn.TxnID))
	if _, err := os.Stat(name); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.CreateTemp(l.dir, ".tmp-*")
	if err != nil {
		return err
	}
	for _, p := range txn.encoding() {
		if _, err = f.Write(p); err != nil {
			break
		}
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("log transaction %s: %w", name, err)
	}
	return nil
}

func (l *TxnLog) readsEncoding() {}

// Replay commits every logged transaction to c, in checkpoint order, and
// returns how many there were.
func (l *TxnLog) Replay(c Committer) (int, error) {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return 0, err
	}
	type logged struct {
		id   TxnID
		name string
	}
	var files []logged
	for _, e := range entries {
		if id, ok := parseTxnFileName(e.Name()); ok {
			files = append(files, logged{id, e.Name()})
		}
	}
	slices.SortFunc(files, func(a, b logged) int {
		return cmp.Or(cmp.Compare(a.id.Checkpoint, b.id.Checkpoint), cmp.Compare(a.id.Sink, b.id.Sink), cmp.Compare(a.id.Writer, b.id.Writer))
	})
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(l.dir, f.name))
		if err != nil {
			return 0, err
		}
		txns, err := decodeTxns(b, f.id.Sink)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", f.name, err)
		}
		if len(txns) != 1 || txns[0].TxnID != f.id {
			return 0, fmt.Errorf("%s: holds %d transactions, want the one its name says", f.name, len(txns))
		}
		if err := c.Commit(txns[0]); err != nil {
			return 0, err
		}
	}
	return len(files), nil
}
