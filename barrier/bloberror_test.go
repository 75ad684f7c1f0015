package barrier

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

func TestIsTransient(t *testing.T) {
	cause := errors.New("503 slow down")
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"transient", TransientError("put", "a", cause), true},
		{"wrapped transient", fmt.Errorf("upload: %w", TransientError("put", "a", cause)), true},
		{"permanent", PermanentError("put", "a", cause), false},
		{"not found", NotFoundError("get", "a"), false},
		{"bare deadline", context.DeadlineExceeded, true},
		{"bare cancel", context.Canceled, false},
		{"transient wrapping cancel", TransientError("put", "a", context.Canceled), false},
		{"permanent wrapping deadline", PermanentError("put", "a", context.DeadlineExceeded), false},
		{"plain", cause, false},
	}
	for _, c := range cases {
		if got := IsTransient(c.err); got != c.want {
			t.Errorf("%s: IsTransient(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

func TestBlobErrorNamesOpBlobAndCause(t *testing.T) {
	err := NotFoundError("get", "chk-3/_metadata")
	if !IsNotFound(err) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("not found error not recognised: %v", err)
	}
	if got, want := err.Error(), "blob get chk-3/_metadata: permanent: file does not exist"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	if IsNotFound(TransientError("get", "x", errors.New("timeout"))) {
		t.Fatalf("timeout taken for not found")
	}
}

func TestValidBlobName(t *testing.T) {
	good := []string{"a", "chk-1/_metadata", "shared/b-1/t/bucket-0/data-x.parquet", "a/tmp", "a/x.tmp"}
	for _, n := range good {
		if err := ValidBlobName(n); err != nil {
			t.Errorf("ValidBlobName(%q) = %v", n, err)
		}
	}
	bad := []string{"", ".", "/a", "a/", "a//b", "a/./b", "a/../b", "..", ".tmp", ".tmp/a", "a/.tmpx", "a\\b", "a\x00b"}
	for _, n := range bad {
		if ValidBlobName(n) == nil {
			t.Errorf("ValidBlobName(%q) accepted", n)
		}
	}
}
