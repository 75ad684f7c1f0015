package table

import "github.com/apache/arrow-go/v18/arrow"

// DatumOf reads row i of an Arrow column whose type is ArrowType(t), as
// returned by the reads, as a Datum. Bytes alias the array.
func DatumOf(col arrow.Array, i int, t DataType) (Datum, error) { return datumOf(col, i, t) }
