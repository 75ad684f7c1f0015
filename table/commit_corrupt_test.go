package table

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Corrupt or truncated metadata in a table gives an error that names the
// file, never a panic.
func TestCorruptMetadataNamesTheFile(t *testing.T) {
	for _, tc := range []struct {
		file string // table-relative
		edit func([]byte) []byte
		want string
	}{
		{"snapshot/snapshot-6", func(b []byte) []byte { return b[:len(b)/2] }, "not a JSON object"},
		{"manifest/manifest-list-c4d273a1-00ed-4ca0-928a-bb0c59ada7b4-0", func(b []byte) []byte { return b[:len(b)-30] }, "truncated"},
		{"manifest/manifest-ba0138c4-ea53-45bb-9e8a-207e2b01fc8d-3", func(b []byte) []byte { b[len(b)-50] ^= 0x5a; return b }, ""},
		{"manifest/index-manifest-3f491f6b-79ec-484b-aa03-f4737e96bf9a-0", func(b []byte) []byte { return b[:10] }, "truncated"},
		{"index/index-16bec1d6-fa31-49bd-a240-deadcfff6003-1", func(b []byte) []byte { b[12] ^= 1; return b }, "CRC32"},
	} {
		dir := t.TempDir()
		copyTableDir(t, fixtureDir(t, "pk-dv-parquet"), dir)
		p := filepath.Join(dir, tc.file)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, tc.edit(b), 0o644); err != nil {
			t.Fatal(err)
		}
		tbl, err := Open(NewLocalFileIO(), dir)
		if err != nil {
			t.Fatal(err)
		}
		err = func() error {
			files, index, err := tbl.LiveFiles(6)
			if err != nil {
				return err
			}
			_ = files
			for _, e := range index {
				if _, err := tbl.ReadDeletionVectors(e); err != nil {
					return err
				}
			}
			return nil
		}()
		if err == nil || !strings.Contains(err.Error(), filepath.Base(tc.file)) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming it (and %q)", tc.file, err, tc.want)
		}
	}
}
