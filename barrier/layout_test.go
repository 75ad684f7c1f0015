package barrier

import "testing"

func TestMetadataBlobNames(t *testing.T) {
	cases := []struct {
		kind Kind
		id   CheckpointID
		name string
	}{
		{KindCheckpoint, 1, "chk-1/_metadata"},
		{KindCheckpoint, 18446744073709551615, "chk-18446744073709551615/_metadata"},
		{KindSavepoint, 42, "savepoint-42/_metadata"},
	}
	for _, c := range cases {
		if got := MetadataBlobName(c.kind, c.id); got != c.name {
			t.Errorf("MetadataBlobName(%v, %d) = %q, want %q", c.kind, c.id, got, c.name)
		}
		kind, id, ok := ParseMetadataBlobName(c.name)
		if !ok || kind != c.kind || id != c.id {
			t.Errorf("ParseMetadataBlobName(%q) = %v %d %v", c.name, kind, id, ok)
		}
	}
	for _, bad := range []string{"chk-0/_metadata", "chk-01/_metadata", "chk-+1/_metadata", "chk-1/metadata", "chk-1/_metadata/x",
		"chk-/_metadata", "shared/chk-1/_metadata", "chk-18446744073709551616/_metadata", "savepoint-x/_metadata", "chk-1"} {
		if _, _, ok := ParseMetadataBlobName(bad); ok {
			t.Errorf("ParseMetadataBlobName(%q) accepted", bad)
		}
	}
}

func TestUploadBlobNames(t *testing.T) {
	k := FileKey{Backend: "b-7", Table: "values", Path: "bucket-0/data-1.parquet"}
	if got, err := UploadBlobName(KindCheckpoint, 5, k); err != nil || got != "shared/chk-5/b-7/values/bucket-0/data-1.parquet" {
		t.Fatalf("checkpoint upload = %q, %v", got, err)
	}
	if got, err := UploadBlobName(KindSavepoint, 6, k); err != nil || got != "savepoint-6/b-7/values/bucket-0/data-1.parquet" {
		t.Fatalf("savepoint upload = %q, %v", got, err)
	}
	bad := []FileKey{
		{Backend: "", Table: "t", Path: "p"},
		{Backend: "a/b", Table: "t", Path: "p"},
		{Backend: "b", Table: "..", Path: "p"},
		{Backend: "b", Table: "t", Path: "../p"},
		{Backend: "b", Table: "t", Path: ""},
	}
	for _, k := range bad {
		if name, err := UploadBlobName(KindCheckpoint, 1, k); err == nil {
			t.Errorf("UploadBlobName(%+v) = %q", k, name)
		}
	}
	if _, err := UploadBlobName(KindSavepoint, 1, FileKey{Backend: "_metadata", Table: "t", Path: "p"}); err == nil {
		t.Errorf("savepoint upload colliding with the metadata accepted")
	}
}

func TestKindText(t *testing.T) {
	for _, k := range []Kind{KindCheckpoint, KindSavepoint} {
		b, err := k.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Kind
		if err := back.UnmarshalText(b); err != nil || back != k {
			t.Fatalf("%v round trip = %v, %v", k, back, err)
		}
	}
	if _, err := Kind(0).MarshalText(); err == nil {
		t.Fatalf("kind 0 marshalled")
	}
	var k Kind
	if err := k.UnmarshalText([]byte("Checkpoint")); err == nil {
		t.Fatalf("wrong case accepted")
	}
}
