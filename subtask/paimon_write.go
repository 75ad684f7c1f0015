//go:build wip && !shim

package subtask

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakestate/lakestate/table"
)

func writeAndCommit(t *table.Table, rec arrow.Record, kinds []table.ValueKind, c table.CommitInfo) (table.CommitResult, error) {
	return t.WriteAndCommit(rec, kinds, c)
}
