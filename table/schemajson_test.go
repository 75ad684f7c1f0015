package table

import (
	"bytes"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func TestSchemaDecodeJavaFixture(t *testing.T) {
	s, err := DecodeSchema("schema-0", readFixture(t, "pk-dv-parquet", "schema/schema-0"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Field{
		{0, "f0", String().NotNull()},
		{1, "f1", Int().NotNull()},
		{2, "f2", Int().NotNull()},
		{3, "f3", Double()},
	}
	if !reflect.DeepEqual(s.Fields, want) || s.HighestFieldID != 3 || s.TimeMillis != 1756266169299 {
		t.Fatalf("fields %+v", s)
	}
	if !reflect.DeepEqual(s.PartitionKeys, []string{"f1"}) || !reflect.DeepEqual(s.PrimaryKeys, []string{"f0", "f1", "f2"}) {
		t.Fatalf("keys %v %v", s.PartitionKeys, s.PrimaryKeys)
	}
	if n, err := s.Buckets(); err != nil || n != 2 || !s.DeletionVectors() || s.Options["commit.force-compact"] != "true" {
		t.Fatalf("options %v", s.Options)
	}
	a, err := DecodeSchema("schema-0", readFixture(t, "append-parquet", "schema/schema-0"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Fields[3].Type != Timestamp(9) || a.Fields[4].Type != Decimal(23, 5) || a.Fields[2].Type != Date() {
		t.Fatalf("append fixture types %+v", a.Fields)
	}
}

// Our encoding of the Java-written schema equals the Java bytes once the
// options block is put in key order (Java keeps insertion order, we sort).
func TestSchemaEncodeMatchesJavaLayout(t *testing.T) {
	for _, table := range []string{"pk-dv-parquet", "pk-mor-parquet", "append-parquet"} {
		data := readFixture(t, table, "schema/schema-0")
		s, err := DecodeSchema("schema-0", data)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := EncodeSchema(s), sortOptionsBlock(t, data); !bytes.Equal(got, want) {
			t.Errorf("%s:\n%s\nwant\n%s", table, got, want)
		}
	}
}

func sortOptionsBlock(t *testing.T, data []byte) []byte {
	lines := strings.Split(string(data), "\n")
	start, end := -1, -1
	for i, l := range lines {
		if l == `  "options" : {` {
			start = i + 1
		}
		if start >= 0 && i >= start && strings.HasPrefix(l, "  }") {
			end = i
			break
		}
	}
	if start < 0 || end < 0 {
		t.Fatal("no options block")
	}
	opts := lines[start:end]
	for i := range opts {
		opts[i] = strings.TrimSuffix(opts[i], ",")
	}
	sort.Strings(opts)
	for i := range opts[:len(opts)-1] {
		opts[i] += ","
	}
	return []byte(strings.Join(lines, "\n"))
}

func TestSchemaRoundTrip(t *testing.T) {
	s := &Schema{
		ID: 2,
		Fields: []Field{
			{0, "kg", Int().NotNull()}, {1, "b", Boolean()}, {2, "t", TinyInt()}, {3, "s", SmallInt()},
			{4, "l", BigInt().NotNull()}, {5, "f", Float()}, {6, "d", Double()}, {7, "str", String()},
			{8, "bin", Bytes()}, {9, "dec", Decimal(38, 10)}, {10, "day", Date()}, {11, "ts3", Timestamp(3)},
			{12, "ts6", Timestamp(6)}, {13, "ts9", Timestamp(9)}, {14, "quote\"name", String()},
		},
		HighestFieldID: 14,
		PrimaryKeys:    []string{"kg", "l"},
		Options:        map[string]string{OptionBucket: "4", OptionFileFormat: "parquet", OptionDeletionVectors: "true"},
		TimeMillis:     1234,
	}
	data := EncodeSchema(s)
	back, err := DecodeSchema("schema-2", data)
	if err != nil {
		t.Fatal(err)
	}
	s.PartitionKeys = []string{}
	if !reflect.DeepEqual(back, s) {
		t.Fatalf("round trip:\n%+v\n%+v", back, s)
	}
	if !bytes.Equal(EncodeSchema(back), data) {
		t.Fatal("re-encoding differs")
	}
	if !strings.Contains(string(data), `"partitionKeys" : [ ],`) || !strings.Contains(string(data), `"type" : "DECIMAL(38, 10)"`) {
		t.Fatalf("layout:\n%s", data)
	}
}

func TestSchemaOldVersionDefaults(t *testing.T) {
	v1 := `{"id":0,"fields":[{"id":0,"name":"k","type":"INT NOT NULL"}],"highestFieldId":0,"partitionKeys":[],"primaryKeys":["k"],"options":{}}`
	s, err := DecodeSchema("schema-0", []byte(v1))
	if err != nil {
		t.Fatal(err)
	}
	if s.Options[OptionBucket] != "1" || s.Options[OptionFileFormat] != "orc" {
		t.Fatalf("v1 defaults: %v", s.Options)
	}
	v3 := strings.Replace(v1, `{"id":0,`, `{"version":3,"id":0,`, 1)
	if s, err = DecodeSchema("schema-0", []byte(v3)); err != nil || len(s.Options) != 0 {
		t.Fatalf("v3 has no defaults: %v %v", s, err)
	}
}

func TestSchemaBadInput(t *testing.T) {
	good := string(readFixture(t, "pk-dv-parquet", "schema/schema-0"))
	for _, tc := range []struct{ name, data, want string }{
		{"truncated", good[:100], "not a JSON object"},
		{"nested type", strings.Replace(good, `"DOUBLE"`, `{"type":"ARRAY","element":"INT"}`, 1), "nested types"},
		{"bad type", strings.Replace(good, `"DOUBLE"`, `"GEOMETRY"`, 1), "unsupported type"},
		{"unknown pk", strings.Replace(good, `"f0", "f1", "f2"`, `"f0", "zz"`, 1), `primary key "zz"`},
		{"no fields", strings.Replace(good, `"fields"`, `"fieldz"`, 1), `"fields": missing`},
		{"options array", strings.Replace(good, `"options" : {`, `"options" : [ ], "x": {`, 1), `"options": not an object`},
	} {
		_, err := DecodeSchema("schema/schema-0", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "schema/schema-0") {
			t.Errorf("%s: error %v, want one naming the file and %q", tc.name, err, tc.want)
		}
	}
}

func FuzzDecodeSchema(f *testing.F) {
	for _, table := range []string{"pk-dv-parquet", "append-parquet"} {
		f.Add(readFixture(f, table, "schema/schema-0"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodeSchema("schema-fuzz", data)
		if err != nil {
			if !strings.Contains(err.Error(), "schema-fuzz") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		back, err := DecodeSchema("again", EncodeSchema(s))
		if err != nil {
			t.Fatalf("re-decode of an encoded schema: %v", err)
		}
		if !bytes.Equal(EncodeSchema(back), EncodeSchema(s)) {
			t.Fatal("encoding is not stable")
		}
	})
}
