package table

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// memFile is an in-memory ReadableFile.
type memFile struct{ *bytes.Reader }

func (memFile) Close() error { return nil }

func openMem(data []byte, path string, s *Schema) (*DataFile, error) {
	return openDataFile(memFile{bytes.NewReader(data)}, path, s)
}

// exerciseDataFile runs every read path over a file; errors are fine,
// panics are not.
func exerciseDataFile(d *DataFile) {
	if fr, err := d.ReadAll(); err == nil {
		fr.Release()
	}
	keys := [][]byte{
		AppendKeyDatums(nil, d.keyTypes, probeDatums(d.keyTypes, "Alice", 1)),
		AppendKeyDatums(nil, d.keyTypes, probeDatums(d.keyTypes, "Tony", 0)),
	}
	if bytes.Compare(keys[0], keys[1]) > 0 {
		keys[0], keys[1] = keys[1], keys[0]
	}
	if ms, err := d.lookup(keys, []int32{0, 1}, nil); err == nil && len(ms) > 0 {
		v := newColVec(d.schema.Fields[len(d.schema.Fields)-1].Type)
		_ = d.readRows(d.fieldCols[len(d.fieldCols)-1], matchPositions(ms), v)
	}
	_, _, _ = d.rowRange(keyRange{lo: keys[0], hi: keys[1]})
	_, _ = d.prefixRanges([][]byte{keys[0][:1], keys[1][:1]}, nil)
}

func probeDatums(types []DataType, s string, n int64) []Datum {
	out := make([]Datum, len(types))
	for i, t := range types {
		if t.Root == TypeString || t.Root == TypeBytes {
			out[i] = BytesDatum([]byte(s))
		} else {
			out[i] = IntDatum(n)
		}
	}
	return out
}

func fixtureDataFiles(t testing.TB) [][]byte {
	var out [][]byte
	for _, name := range []string{"pk-dv-parquet", "pk-mor-parquet"} {
		root := fixtureDir(t, name)
		_ = filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
			if err == nil && strings.HasSuffix(p, ".parquet") {
				if b, err := os.ReadFile(p); err == nil {
					out = append(out, b)
				}
			}
			return nil
		})
	}
	return out
}

// FuzzDataFile feeds mutated data files (seeded with the Java-written
// fixture files) to the footer, page-index and page decoders.
func FuzzDataFile(f *testing.F) {
	for _, b := range fixtureDataFiles(f) {
		f.Add(b)
	}
	f.Add([]byte("PAR1PAR1"))
	s := fixturePKSchema(true)
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := openMem(data, "fuzz.parquet", s)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.parquet") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		exerciseDataFile(d)
	})
}

// Truncated and corrupted copies of a real file give errors naming the file.
func TestCorruptDataFiles(t *testing.T) {
	files := fixtureDataFiles(t)
	if len(files) == 0 {
		t.Skip("no fixture files")
	}
	good := files[0]
	s := fixturePKSchema(true)
	cases := map[string][]byte{
		"empty":          nil,
		"magic only":     []byte("PAR1"),
		"truncated half": good[:len(good)/2],
		"no tail magic":  good[:len(good)-1],
		"footer length":  append(append([]byte(nil), good[:len(good)-8]...), 0xff, 0xff, 0xff, 0x7f, 'P', 'A', 'R', '1'),
	}
	flipped := bytes.Clone(good)
	for i := 4; i < len(flipped)-8; i += 7 {
		flipped[i] ^= 0x5a
	}
	cases["pages scrambled"] = flipped
	footer := bytes.Clone(good)
	for i := len(footer) - 200; i < len(footer)-8; i += 3 {
		footer[i] ^= 0xa5
	}
	cases["footer scrambled"] = footer
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			d, err := openMem(data, "bucket-0/bad.parquet", s)
			if err == nil {
				// the damage may only show when pages decode
				fr, err2 := d.ReadAll()
				if err2 == nil {
					fr.Release()
					t.Skip("damage left the file readable")
				}
				err = err2
			}
			if !strings.Contains(err.Error(), "bucket-0/bad.parquet") {
				t.Fatalf("error does not name the file: %v", err)
			}
		})
	}
}
