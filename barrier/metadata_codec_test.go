package barrier

import (
	"bytes"
	"encoding/binary"
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
	for _, m := range []*Metadata{sampleMetadata(), sampleSavepoint()} {
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
	if v := binary.BigEndian.Uint32(data[8:]); v != 1 {
		t.Fatalf("version = %d", v)
	}
	body := data[20:]
	if n := binary.BigEndian.Uint32(data[12:]); int(n) != len(body) {
		t.Fatalf("length = %d, body %d", n, len(body))
	}
	if c := binary.BigEndian.Uint32(data[16:]); c != crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)) {
		t.Fatalf("checksum is not CRC-32C of the body")
	}
	for _, field := range []string{`"kind":"checkpoint"`, `"timestamp_ms":1700000000123`, `"key_groups":{"start":64,"end":127}`, `"backend":"paimon"`, `"uploaded":true`} {
		if !bytes.Contains(body, []byte(field)) {
			t.Errorf("body lacks %s", field)
		}
	}
}

// reseal rewrites the header's length and checksum after a body edit, so the
// decoder gets past the envelope to the content checks.
func reseal(data []byte) []byte {
	body := data[20:]
	binary.BigEndian.PutUint32(data[12:], uint32(len(body)))
	binary.BigEndian.PutUint32(data[16:], crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	return data
}

func editBody(t *testing.T, from, to string) []byte {
	t.Helper()
	data := encode(t, sampleMetadata())
	body := string(data[20:])
	if !strings.Contains(body, from) {
		t.Fatalf("body lacks %q", from)
	}
	return reseal(append(data[:20:20], strings.Replace(body, from, to, 1)...))
}

// Every corruption yields a *MetadataError naming the file and the problem.
func TestDecodeMetadataRejectsCorruption(t *testing.T) {
	good := encode(t, sampleMetadata())
	mutate := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	cases := []struct {
		name    string
		data    []byte
		problem string
	}{
		{"empty", nil, "truncated"},
		{"short header", good[:19], "truncated"},
		{"magic", mutate(func(b []byte) []byte { b[0] = 'X'; return b }), "bad magic"},
		{"version", mutate(func(b []byte) []byte { b[11] = 2; return b }), "unsupported format version 2"},
		{"huge length", mutate(func(b []byte) []byte { binary.BigEndian.PutUint32(b[12:], 1<<31); return b }), "exceeds"},
		{"truncated body", good[:len(good)-1], "header says"},
		{"trailing bytes", append(bytes.Clone(good), '\n'), "header says"},
		{"flipped body bit", mutate(func(b []byte) []byte { b[40] ^= 1; return b }), "checksum mismatch"},
		{"flipped checksum", mutate(func(b []byte) []byte { b[17] ^= 1; return b }), "checksum mismatch"},
		{"not json", reseal(append(bytes.Clone(good[:20]), "not json"...)), "malformed body"},
		{"unknown field", editBody(t, `"job_id"`, `"jobb_id"`), "malformed body"},
		{"second value", reseal(append(bytes.Clone(good), " {}"...)), "trailing data"},
		{"zero id", editBody(t, `"id":3,`, `"id":0,`), "checkpoint id is 0"},
		{"bad kind", editBody(t, `"kind":"checkpoint"`, `"kind":"snapshot"`), "unknown checkpoint kind"},
		{"wrong range", editBody(t, `{"start":64,"end":127}`, `{"start":63,"end":127}`), "key groups [63,127], want [64,127]"},
		{"parallelism", editBody(t, `"parallelism":2`, `"parallelism":3`), "2 subtasks for parallelism 3"},
		{"negative size", editBody(t, `"size":1000`, `"size":-1`), "negative size"},
		{"escaping path", editBody(t, `"path":"bucket-0/data-1.parquet"`, `"path":"../data-1.parquet"`), "invalid file path"},
		{"bad blob", editBody(t, `"blob":"shared/chk-1/backend-0`, `"blob":"/shared/chk-1/backend-0`), "invalid blob name"},
		{"duplicate operator", editBody(t, `"id":"source"`, `"id":"agg"`), "listed twice"},
		{"slash in table", editBody(t, `"name":"values"`, `"name":"a/b"`), "contains a slash"},
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

// Absent and empty extras decode alike, so re-encoding is stable.
func TestEmptyExtrasNormalise(t *testing.T) {
	data := editBody(t, `"extras":{"offsets":"eyJwYXJ0aXRpb24tMCI6MTIzNH0="}`, `"extras":{}`)
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
	f.Add(good)
	f.Add(sp)
	f.Add(good[:20])
	f.Add(good[:len(good)/2])
	f.Add([]byte("LKSTCKPT"))
	f.Add(reseal(append(bytes.Clone(good[:20]), `{"id":1,"kind":"checkpoint","timestamp_ms":0,"job_id":"j","operators":[]}`...)))
	f.Add(reseal(append(bytes.Clone(good[:20]), `{"id":1,"kind":"checkpoint","timestamp_ms":0,"job_id":"j","operators":[{"id":"o","parallelism":40000,"max_parallelism":40000,"subtasks":null}]}`...)))
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

// FuzzDecodeMetadataBody fuzzes the JSON body behind a valid envelope, so
// inputs get past the checksum to the body decoder and the validation.
func FuzzDecodeMetadataBody(f *testing.F) {
	for _, m := range []*Metadata{sampleMetadata(), sampleSavepoint()} {
		data, err := EncodeMetadata(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[20:])
	}
	f.Add([]byte(`{"id":1,"kind":"checkpoint","timestamp_ms":0,"job_id":"j","operators":[]}`))
	f.Add([]byte(`{"id":1,"kind":"savepoint","timestamp_ms":0,"job_id":"j","operators":[{"id":"o","parallelism":1,"max_parallelism":1,"subtasks":[{"index":0,"key_groups":{"start":0,"end":0},"backend":"memory","backend_id":"b","tables":[{"name":"t","snapshot_id":0,"files":[{"path":"f","size":0,"blob":"x","uploaded":true}]}]}]}]}`))
	f.Add([]byte(`{"id":18446744073709551615,"kind":"checkpoint","timestamp_ms":-1,"job_id":"","operators":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		header := make([]byte, 20)
		copy(header, metadataMagic)
		binary.BigEndian.PutUint32(header[8:], metadataVersion)
		data := reseal(append(header, body...))
		m, err := DecodeMetadata("fuzz/_metadata", data)
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
