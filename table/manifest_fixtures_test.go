package table

import (
	"os"
	"path/filepath"
	"testing"
)

// fixtureDir is a table or vector directory under ../shared/fixtures, which
// every checkout and CI run has beside the project.
func fixtureDir(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join("..", "..", "shared", "fixtures", name)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return dir
}

func readFixture(t testing.TB, name, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir(t, name), rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
