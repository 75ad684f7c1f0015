package table

import (
	"fmt"
	"strconv"
	"strings"
)

// TypeRoot is the kind of a Paimon data type, without its parameters.
type TypeRoot int

const (
	TypeBoolean TypeRoot = iota
	TypeTinyInt
	TypeSmallInt
	TypeInt
	TypeBigInt
	TypeFloat
	TypeDouble
	TypeString
	TypeBytes
	TypeDecimal
	TypeDate
	TypeTimestamp
)

// DataType is a Paimon atomic type as far as state tables need them.
type DataType struct {
	Root     TypeRoot
	Nullable bool
	// Precision and Scale of a DECIMAL; Precision of a TIMESTAMP (0..9).
	Precision int
	Scale     int
}

// Convenience constructors; all nullable, use NotNull to drop nullability.
func Boolean() DataType  { return DataType{Root: TypeBoolean, Nullable: true} }
func TinyInt() DataType  { return DataType{Root: TypeTinyInt, Nullable: true} }
func SmallInt() DataType { return DataType{Root: TypeSmallInt, Nullable: true} }
func Int() DataType      { return DataType{Root: TypeInt, Nullable: true} }
func BigInt() DataType   { return DataType{Root: TypeBigInt, Nullable: true} }
func Float() DataType    { return DataType{Root: TypeFloat, Nullable: true} }
func Double() DataType   { return DataType{Root: TypeDouble, Nullable: true} }
func String() DataType   { return DataType{Root: TypeString, Nullable: true} }
func Bytes() DataType    { return DataType{Root: TypeBytes, Nullable: true} }
func Date() DataType     { return DataType{Root: TypeDate, Nullable: true} }
func Decimal(p, s int) DataType {
	return DataType{Root: TypeDecimal, Nullable: true, Precision: p, Scale: s}
}
func Timestamp(precision int) DataType {
	return DataType{Root: TypeTimestamp, Nullable: true, Precision: precision}
}

// NotNull returns t without nullability.
func (t DataType) NotNull() DataType { t.Nullable = false; return t }

// String renders t the way Paimon's schema JSON spells it.
func (t DataType) String() string {
	var s string
	switch t.Root {
	case TypeBoolean:
		s = "BOOLEAN"
	case TypeTinyInt:
		s = "TINYINT"
	case TypeSmallInt:
		s = "SMALLINT"
	case TypeInt:
		s = "INT"
	case TypeBigInt:
		s = "BIGINT"
	case TypeFloat:
		s = "FLOAT"
	case TypeDouble:
		s = "DOUBLE"
	case TypeString:
		s = "STRING"
	case TypeBytes:
		s = "BYTES"
	case TypeDecimal:
		s = fmt.Sprintf("DECIMAL(%d, %d)", t.Precision, t.Scale)
	case TypeDate:
		s = "DATE"
	case TypeTimestamp:
		s = fmt.Sprintf("TIMESTAMP(%d)", t.Precision)
	default:
		s = fmt.Sprintf("UNKNOWN(%d)", int(t.Root))
	}
	if !t.Nullable {
		s += " NOT NULL"
	}
	return s
}

// ParseDataType parses Paimon's SQL spelling of an atomic type. It accepts the
// synonyms Java writers use for the same physical types (VARCHAR(n), CHAR(n),
// VARBINARY(n), BINARY(n), INTEGER, DEC, NUMERIC).
func ParseDataType(s string) (DataType, error) {
	orig := s
	s = strings.TrimSpace(strings.ToUpper(s))
	t := DataType{Nullable: true}
	if strings.HasSuffix(s, " NOT NULL") {
		t.Nullable = false
		s = strings.TrimSpace(strings.TrimSuffix(s, " NOT NULL"))
	} else if strings.HasSuffix(s, " NULL") {
		s = strings.TrimSpace(strings.TrimSuffix(s, " NULL"))
	}
	name, args := s, []int(nil)
	if i := strings.IndexByte(s, '('); i >= 0 {
		j := strings.LastIndexByte(s, ')')
		if j < i {
			return DataType{}, fmt.Errorf("data type %q: unbalanced parentheses", orig)
		}
		name = strings.TrimSpace(s[:i])
		for _, a := range strings.Split(s[i+1:j], ",") {
			n, err := strconv.Atoi(strings.TrimSpace(a))
			if err != nil {
				return DataType{}, fmt.Errorf("data type %q: bad parameter %q", orig, a)
			}
			args = append(args, n)
		}
		if rest := strings.TrimSpace(s[j+1:]); rest != "" {
			return DataType{}, fmt.Errorf("data type %q: unsupported suffix %q", orig, rest)
		}
	}
	switch name {
	case "BOOLEAN":
		t.Root = TypeBoolean
	case "TINYINT":
		t.Root = TypeTinyInt
	case "SMALLINT":
		t.Root = TypeSmallInt
	case "INT", "INTEGER":
		t.Root = TypeInt
	case "BIGINT":
		t.Root = TypeBigInt
	case "FLOAT":
		t.Root = TypeFloat
	case "DOUBLE":
		t.Root = TypeDouble
	case "STRING", "VARCHAR", "CHAR":
		t.Root = TypeString
	case "BYTES", "VARBINARY", "BINARY":
		t.Root = TypeBytes
	case "DATE":
		t.Root = TypeDate
	case "DECIMAL", "DEC", "NUMERIC":
		t.Root = TypeDecimal
		t.Precision, t.Scale = 10, 0
		if len(args) >= 1 {
			t.Precision = args[0]
		}
		if len(args) >= 2 {
			t.Scale = args[1]
		}
		if t.Precision < 1 || t.Precision > 38 || t.Scale < 0 || t.Scale > t.Precision {
			return DataType{}, fmt.Errorf("data type %q: decimal precision/scale out of range", orig)
		}
	case "TIMESTAMP":
		t.Root = TypeTimestamp
		t.Precision = 6
		if len(args) >= 1 {
			t.Precision = args[0]
		}
		if t.Precision < 0 || t.Precision > 9 {
			return DataType{}, fmt.Errorf("data type %q: timestamp precision out of range", orig)
		}
	default:
		return DataType{}, fmt.Errorf("data type %q: unsupported type", orig)
	}
	return t, nil
}
