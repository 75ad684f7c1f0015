package barrier

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"reflect"
	"strings"
	"testing"
)

func encode(t *testing.T, m *Metadata) []byte {
	t.Helper()
	data, err := EncodeMetadata(m)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestMetadataRoundTrip(t *testing.T) {
	for _, m := range []*Metadata{sampleMetadata(), sampleSavepoint(), sampleWithExtraFiles()} {
		data := encode(t, m)
		got, err := DecodeMetadata("chk-3/_metadata", data)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("round trip changed the document:\n got %+v\nwant %+v", got, m)
		}
		if again := encode(t, got); !bytes.Equal(again, data) {
			t.Fatalf("re-encoding is not byte-identical")
		}
	}
}

func TestMetadataHeaderLayout(t *testing.T) {
	data := encode(t, sampleMetadata())
	if string(data[:8]) != "LKSTCKPT" {
		t.Fatalf("magic = %q", data[:8])
	}
	if v := binary.BigEndian.Uint32(data[8:]); v != 3 {
		t.Fatalf("version = %d", v)
	}
	body, extras := split(t, data)
	if c := binary.BigEndian.Uint32(data[20:]); c != crc32.Checksum(data[24:], crc32.MakeTable(crc32.Castagnoli)) {
		t.Fatalf("checksum is not CRC-32C of the body and the extras")
	}
	for _, field := range []string{`"kind":"checkpoint"`, `"timestamp_ms":1700000000123`, `"key_groups":{"start":64,"end":127}`, `"backend":"paimon"`, `"uploaded":true`,
		`"extras":{"watermark":{"offset":0,"size":4}}`, `"extras":{"watermark":{"offset":4,"size":4}}`, `"extras":{"offsets":{"offset":8,"size":20}}`} {
		if !bytes.Contains(body, []byte(field)) {
			t.Errorf("body lacks %s", field)
		}
	}
	if want := "\x00\x00\x00*\x00\x00\x00*" + `{"partition-0":1234}`; string(extras) != want {
		t.Fatalf("extras section = %q, want %q", extras, want)
	}
}

// split returns the body and the extras section of a version 2 or 3 file.
func split(t *testing.T, data []byte) (body, extras []byte) {
	t.Helper()
	n, x := binary.BigEndian.Uint32(data[12:]), binary.BigEndian.Uint32(data[16:])
	if uint64(len(data)) != 24+uint64(n)+uint64(x) {
		t.Fatalf("file of %d bytes, header says body %d and extras %d", len(data), n, x)
	}
	return data[24 : 24+n], data[24+n:]
}

// seal builds a version 3 file of body and extras with a right header, so
// the decoder gets past the envelope to the content checks.
func seal(body, extras []byte) []byte { return sealVersion(3, body, extras) }

func sealVersion(v uint32, body, extras []byte) []byte {
	data := make([]byte, 24, 24+len(body)+len(extras))
	copy(data, metadataMagic)
	binary.BigEndian.PutUint32(data[8:], v)
	binary.BigEndian.PutUint32(data[12:], uint32(len(body)))
	binary.BigEndian.PutUint32(data[16:], uint32(len(extras)))
	data = append(append(data, body...), extras...)
	binary.BigEndian.PutUint32(data[20:], crc32.Checksum(data[24:], crc32.MakeTable(crc32.Castagnoli)))
	return data
}

func editBody(t *testing.T, from, to string) []byte {
	t.Helper()
	return editBodyOf(t, sampleMetadata(), from, to)
}

func editBodyOf(t *testing.T, m *Metadata, from, to string) []byte {
	t.Helper()
	body, extras := split(t, encode(t, m))
	if !bytes.Contains(body, []byte(from)) {
		t.Fatalf("body lacks %q", from)
	}
	return seal([]byte(strings.Replace(string(body), from, to, 1)), extras)
}

// encodeV1 is the version 1 encoding of m: a 20-byte header and the whole
// document, extras as base64, in JSON.
func encodeV1(t testing.TB, m *Metadata) []byte {
	body, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 20, 20+len(body))
	copy(data, metadataMagic)
	binary.BigEndian.PutUint32(data[8:], 1)
	binary.BigEndian.PutUint32(data[12:], uint32(len(body)))
	binary.BigEndian.PutUint32(data[16:], crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	return append(data, body...)
}

// Files of format version 1 still decode, to the same document.
func TestDecodeMetadataVersion1(t *testing.T) {
	for _, m := range []*Metadata{sampleMetadata(), sampleSavepoint()} {
		got, err := DecodeMetadata("chk-3/_metadata", encodeV1(t, m))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("version 1 decodes to\n %+v\nwant %+v", got, m)
		}
	}
	bad := encodeV1(t, sampleMetadata())
	bad[30] ^= 1
	if _, err := DecodeMetadata("chk-3/_metadata", bad); err == nil || !strings.Contains(err.Error(), "chk-3/_metadata: checksum mismatch") {
		t.Fatalf("corrupt version 1 file: err = %v", err)
	}
}

// Every corruption yields a *MetadataError naming the file and the problem.
func TestDecodeMetadataRejectsCorruption(t *testing.T) {
	good := encode(t, sampleMetadata())
	goodBody, goodExtras := split(t, good)
	mutate := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	cases := []struct {
		name    string
		data    []byte
		problem string
	}{
		{"empty", nil, "truncated"},
		{"short header", good[:19], "truncated"},
		{"short version 2 header", good[:23], "truncated"},
		{"magic", mutate(func(b []byte) []byte { b[0] = 'X'; return b }), "bad magic"},
		{"version", mutate(func(b []byte) []byte { b[11] = 4; return b }), "unsupported format version 4 (this build reads 1 to 3)"},
		{"huge length", mutate(func(b []byte) []byte { binary.BigEndian.PutUint32(b[12:], 1<<31); return b }), "exceeds"},
		{"huge extras", mutate(func(b []byte) []byte { binary.BigEndian.PutUint32(b[16:], 1<<31+1); return b }), "exceeds"},
		{"truncated extras", good[:len(good)-1], "header says"},
		{"trailing bytes", append(bytes.Clone(good), '\n'), "header says"},
		{"flipped body bit", mutate(func(b []byte) []byte { b[40] ^= 1; return b }), "checksum mismatch"},
		{"flipped extras bit", mutate(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), "checksum mismatch"},
		{"flipped checksum", mutate(func(b []byte) []byte { b[21] ^= 1; return b }), "checksum mismatch"},
		{"not json", seal([]byte("not json"), nil), "malformed body"},
		{"unknown field", editBody(t, `"job_id"`, `"jobb_id"`), "malformed body"},
		{"second value", seal(append(bytes.Clone(goodBody), " {}"...), goodExtras), "trailing data"},
		{"extra outside the section", editBody(t, `"offsets":{"offset":8,"size":20}`, `"offsets":{"offset":9,"size":20}`), `extra "offsets" at [9,+20) outside the 28-byte extras section`},
		{"negative extra offset", editBody(t, `"offsets":{"offset":8,`, `"offsets":{"offset":-8,`), "outside"},
		{"extra as base64", editBody(t, `"offsets":{"offset":8,"size":20}`, `"offsets":"AAA="`), "malformed body"},
		{"zero id", editBody(t, `"id":3,`, `"id":0,`), "checkpoint id is 0"},
		{"bad kind", editBody(t, `"kind":"checkpoint"`, `"kind":"snapshot"`), "unknown checkpoint kind"},
		{"wrong range", editBody(t, `{"start":64,"end":127}`, `{"start":63,"end":127}`), "key groups [63,127], want [64,127]"},
		{"parallelism", editBody(t, `"parallelism":2`, `"parallelism":3`), "2 subtasks for parallelism 3"},
		{"negative size", editBody(t, `"size":1000`, `"size":-1`), "negative size"},
		{"escaping path", editBody(t, `"path":"bucket-0/data-1.parquet"`, `"path":"../data-1.parquet"`), "invalid file path"},
		{"bad blob", editBody(t, `"blob":"shared/chk-1/backend-0`, `"blob":"/shared/chk-1/backend-0`), "invalid blob name"},
		{"duplicate operator", editBody(t, `"id":"source"`, `"id":"agg"`), "listed twice"},
		{"slash in table", editBody(t, `"name":"values"`, `"name":"a/b"`), "contains a slash"},
		{"reserved table", editBody(t, `"name":"values"`, `"name":"_extras"`), `table name "_extras" is reserved`},
		{"extra files in version 2", version2(t, sampleWithExtraFiles()), `operator "agg" subtask 0: extra files in a version 2 file`},
		{"extra file twice", editBodyOf(t, sampleWithExtraFiles(), `"path":"txn-0-3"`, `"path":"txn-0-2"`), `extra file "txn-0-2" of "sink" listed twice`},
		{"extra file owner", editBodyOf(t, sampleWithExtraFiles(), `"owner":"sink"`, `"owner":"a/b"`), "owner"},
		{"extra file path", editBodyOf(t, sampleWithExtraFiles(), `"path":"txn-0-3"`, `"path":"/txn"`), "invalid file path"},
		{"extra file size", editBodyOf(t, sampleWithExtraFiles(), `"size":5000`, `"size":-5`), "negative size"},
		{"extra file blob", editBodyOf(t, sampleWithExtraFiles(), `"blob":"shared/chk-3/backend-0/_extras`, `"blob":"/x`), "invalid blob name"},
		{"extra file crc", editBodyOf(t, sampleWithExtraFiles(), `"crc32c":1}`, `"crc32c":-1}`), "malformed body"},
		{"extra file field", editBodyOf(t, sampleWithExtraFiles(), `"crc32c":1}`, `"crc32c":1,"x":1}`), "malformed body"},
		{"extra files without backend id", editBodyOf(t, sampleWithExtraFiles(), `"backend_id":"backend-0"`, `"backend_id":""`), "backend id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := DecodeMetadata("chk-3/_metadata", c.data)
			if err == nil {
				t.Fatalf("decoded %+v", m)
			}
			var me *MetadataError
			if !errors.As(err, &me) || me.File != "chk-3/_metadata" {
				t.Fatalf("err = %v, want a MetadataError for the file", err)
			}
			if !strings.HasPrefix(err.Error(), "checkpoint metadata chk-3/_metadata: ") || !strings.Contains(err.Error(), c.problem) {
				t.Fatalf("err = %q, want it to name %q", err, c.problem)
			}
		})
	}
}

// version2 is m's encoding relabelled as format version 2.
func version2(t *testing.T, m *Metadata) []byte {
	t.Helper()
	body, extras := split(t, encode(t, m))
	return sealVersion(2, body, extras)
}

// Files of format version 2 (no extra files) still decode, to the same
// document.
func TestDecodeMetadataVersion2(t *testing.T) {
	for _, m := range []*Metadata{sampleMetadata(), sampleSavepoint()} {
		got, err := DecodeMetadata("chk-3/_metadata", version2(t, m))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("version 2 decodes to\n %+v\nwant %+v", got, m)
		}
	}
}

// The extra files are in the body, each as its owner and a file reference
// with the piece's checksum, and an empty list decodes as none.
func TestExtraFilesLayout(t *testing.T) {
	body, _ := split(t, encode(t, sampleWithExtraFiles()))
	want := `"extra_files":[{"owner":"sink","path":"txn-0-2","size":4000,"blob":"shared/chk-2/backend-0/_extras/sink/txn-0-2","uploaded":false,"crc32c":305441741},` +
		`{"owner":"sink","path":"txn-0-3","size":5000,"blob":"shared/chk-3/backend-0/_extras/sink/txn-0-3","uploaded":true,"crc32c":1}]`
	if !bytes.Contains(body, []byte(want)) {
		t.Fatalf("body lacks %s:\n%s", want, body)
	}
	m, err := DecodeMetadata("x", editBody(t, `"backend_id":"backend-1",`, `"backend_id":"backend-1","extra_files":[],`))
	if err != nil {
		t.Fatal(err)
	}
	if s := m.Operators[0].Subtasks[1]; s.ExtraFiles != nil {
		t.Fatalf("extra files = %#v, want nil", s.ExtraFiles)
	}
	var blobs []string
	sampleWithExtraFiles().Operators[0].Subtasks[0].Files(func(k FileKey, f FileRef) {
		if k.Table == ExtrasTable {
			blobs = append(blobs, k.String()+" "+f.Blob)
		}
	})
	if w := []string{"backend-0/_extras/sink/txn-0-2 shared/chk-2/backend-0/_extras/sink/txn-0-2", "backend-0/_extras/sink/txn-0-3 shared/chk-3/backend-0/_extras/sink/txn-0-3"}; !reflect.DeepEqual(blobs, w) {
		t.Fatalf("extra files listed as %q, want %q", blobs, w)
	}
}

func TestSavepointValidation(t *testing.T) {
	m := sampleSavepoint()
	m.Operators[0].Subtasks[1].Tables[0].Files[0].Blob = m.Operators[0].Subtasks[0].Tables[0].Files[0].Blob
	if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "appears twice in a savepoint") {
		t.Fatalf("shared blob in a savepoint: %v", err)
	}
	m = sampleSavepoint()
	m.Operators[0].Subtasks[0].Tables[0].Files[2].Uploaded = false
	if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "a savepoint references no earlier upload") {
		t.Fatalf("savepoint placeholder: %v", err)
	}
	if _, err := EncodeMetadata(m); err == nil {
		t.Fatalf("encoded an invalid savepoint")
	}
}

// An extra given in parts is written as its parts back to back: the file is
// byte for byte the one of the joined extra, and decodes to one part.
func TestExtraPartsEncodeAsJoined(t *testing.T) {
	joined := sampleMetadata()
	parts := sampleMetadata()
	src := parts.Operators[1].Subtasks[0].Extras
	b := src["offsets"][0]
	src["offsets"] = Extra{b[:3], nil, b[3:10], b[10:]}
	parts.Operators[0].Subtasks[1].Extras["empty"] = Extra{nil, {}}
	joined.Operators[0].Subtasks[1].Extras["empty"] = Extra{{}}
	data := encode(t, parts)
	if want := encode(t, joined); !bytes.Equal(data, want) {
		t.Fatal("an extra in parts encodes differently from the joined extra")
	}
	got, err := DecodeMetadata("chk-3/_metadata", data)
	if err != nil {
		t.Fatal(err)
	}
	if e := got.Operators[1].Subtasks[0].Extras["offsets"]; len(e) != 1 || !bytes.Equal(e.Bytes(), b) || e.Len() != len(b) {
		t.Fatalf("decoded extra %q, want %q in one part", e, b)
	}
}

// Absent and empty extras decode alike, so re-encoding is stable.
func TestEmptyExtrasNormalise(t *testing.T) {
	data := editBody(t, `"extras":{"offsets":{"offset":8,"size":20}}`, `"extras":{}`)
	m, err := DecodeMetadata("x", data)
	if err != nil {
		t.Fatal(err)
	}
	if s := m.Operators[1].Subtasks[0]; s.Extras != nil {
		t.Fatalf("extras = %#v, want nil", s.Extras)
	}
}

func FuzzDecodeMetadata(f *testing.F) {
	good, err := EncodeMetadata(sampleMetadata())
	if err != nil {
		f.Fatal(err)
	}
	sp, err := EncodeMetadata(sampleSavepoint())
	if err != nil {
		f.Fatal(err)
	}
	withFiles, err := EncodeMetadata(sampleWithExtraFiles())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(sp)
	f.Add(withFiles)
	f.Add(good[:24])
	f.Add(good[:len(good)/2])
	f.Add([]byte("LKSTCKPT"))
	f.Add(encodeV1(f, sampleMetadata()))
	f.Add(seal([]byte(`{"id":1,"kind":"checkpoint","timestamp_ms":0,"job_id":"j","operators":[]}`), nil))
	f.Add(seal([]byte(`{"id":1,"kind":"checkpoint","timestamp_ms":0,"job_id":"j","operators":[{"id":"o","parallelism":40000,"max_parallelism":40000,"subtasks":null}]}`), nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeMetadata("fuzz/_metadata", data)
		if err != nil {
			var me *MetadataError
			if !errors.As(err, &me) || me.File != "fuzz/_metadata" {
				t.Fatalf("error %v does not name the file", err)
			}
			return
		}
		again, err := EncodeMetadata(m)
		if err != nil {
			t.Fatalf("decoded metadata does not re-encode: %v", err)
		}
		m2, err := DecodeMetadata("fuzz/_metadata", again)
		if err != nil {
			t.Fatalf("re-encoded metadata does not decode: %v", err)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip changed the document")
		}
	})
}

// FuzzDecodeMetadataBody fuzzes the JSON body and the extras section behind
// a valid envelope, so inputs get past the checksum to the body decoder, the
// extras ranges and the validation.
func FuzzDecodeMetadataBody(f *testing.F) {
	for _, m := range []*Metadata{sampleMetadata(), sampleSavepoint(), sampleWithExtraFiles()} {
		data, err := EncodeMetadata(m)
		if err != nil {
			f.Fatal(err)
		}
		n := binary.BigEndian.Uint32(data[12:])
		f.Add(data[24:24+n], data[24+n:])
	}
	f.Add([]byte(`{"id":1,"kind":"savepoint","timestamp_ms":0,"job_id":"j","operators":[{"id":"o","parallelism":1,"max_parallelism":1,"subtasks":[{"index":0,"key_groups":{"start":0,"end":0},"backend":"none","backend_id":"b","tables":[],"extra_files":[{"owner":"s","path":"t","size":1,"blob":"x","uploaded":true,"crc32c":7},{"owner":"s","path":"u","size":0,"blob":"x","uploaded":true,"crc32c":0}]}]}]}`), []byte(nil))
	f.Add([]byte(`{"id":1,"kind":"checkpoint","timestamp_ms":0,"job_id":"j","operators":[]}`), []byte(nil))
	f.Add([]byte(`{"id":1,"kind":"savepoint","timestamp_ms":0,"job_id":"j","operators":[{"id":"o","parallelism":1,"max_parallelism":1,"subtasks":[{"index":0,"key_groups":{"start":0,"end":0},"backend":"memory","backend_id":"b","tables":[{"name":"t","snapshot_id":0,"files":[{"path":"f","size":0,"blob":"x","uploaded":true}]}],"extras":{"a":{"offset":1,"size":2},"b":{"offset":0,"size":3}}}]}]}`), []byte("xyz"))
	f.Add([]byte(`{"id":18446744073709551615,"kind":"checkpoint","timestamp_ms":-1,"job_id":"","operators":null}`), []byte(nil))
	f.Add([]byte(`null`), []byte(nil))
	f.Fuzz(func(t *testing.T, body, extras []byte) {
		m, err := DecodeMetadata("fuzz/_metadata", seal(body, extras))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "checkpoint metadata fuzz/_metadata: ") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		again, err := EncodeMetadata(m)
		if err != nil {
			t.Fatalf("decoded metadata does not re-encode: %v", err)
		}
		m2, err := DecodeMetadata("fuzz/_metadata", again)
		if err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip changed the document: %v", err)
		}
	})
}
