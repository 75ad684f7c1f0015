package runtime_test

import (
	"fmt"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/runtime"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// A keyed job: count words with a group aggregate at parallelism 2 and
// collect the exactly-once output in a changelog table.
func Example() {
	sys := actors.NewSystem(actors.Options{})
	defer sys.Close()

	word := func(w string) runtime.Row { return runtime.Row{subtask.Str(w)} }
	src := &runtime.RowsSource{
		Schema: runtime.Schema{{Name: "word", Type: table.String().NotNull()}},
		Rows:   [][]runtime.Row{{word("to"), word("be")}, {word("or"), word("not"), word("to"), word("be")}},
	}
	g := runtime.NewGraph()
	words := g.Source("words", src)[0]
	counts := runtime.Aggregate("count", words, []int{0}, runtime.Count("n"))
	out := runtime.NewChangelogTable()
	counts.Sink("out", out)

	run, err := runtime.Start(sys, g, runtime.Options{Parallelism: 2})
	if err != nil {
		panic(err)
	}
	if err := run.Wait(); err != nil {
		panic(err)
	}
	rows, err := out.Rows()
	if err != nil {
		panic(err)
	}
	for _, r := range rows {
		fmt.Println(r[0].Str(), r[1].Int())
	}
	// Output:
	// be 2
	// not 1
	// or 1
	// to 2
}
