package table

import (
	"strconv"
)

// Paimon writes schema and snapshot files with Jackson's default pretty
// printer. Readers do not care about layout, but matching it byte for byte
// lets a test compare our output with Java-written files. The layout:
// objects put each field on its own line as `"key" : value`, indented two
// spaces per object level; arrays stay on one line as `[ a, b ]` and do not
// add a level; empty containers are `{ }` and `[ ]`; no trailing newline.

// jsonField is one key of a jsonObject; val is a jsonObject, jsonArray,
// string, int64, bool or nil (null).
type jsonField struct {
	key string
	val any
}

type jsonObject []jsonField

type jsonArray []any

// renderJackson renders v in Jackson's default pretty layout.
func renderJackson(v any) []byte {
	return appendJackson(nil, v, 0)
}

func appendJackson(b []byte, v any, level int) []byte {
	switch v := v.(type) {
	case jsonObject:
		if len(v) == 0 {
			return append(b, "{ }"...)
		}
		b = append(b, '{')
		for i, f := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '\n')
			b = appendIndent(b, level+1)
			b = appendJSONString(b, f.key)
			b = append(b, " : "...)
			b = appendJackson(b, f.val, level+1)
		}
		b = append(b, '\n')
		b = appendIndent(b, level)
		return append(b, '}')
	case jsonArray:
		if len(v) == 0 {
			return append(b, "[ ]"...)
		}
		b = append(b, "[ "...)
		for i, e := range v {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendJackson(b, e, level)
		}
		return append(b, " ]"...)
	case string:
		return appendJSONString(b, v)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case bool:
		return strconv.AppendBool(b, v)
	case nil:
		return append(b, "null"...)
	}
	panic("jackson json: unsupported value type")
}

func appendIndent(b []byte, level int) []byte {
	for i := 0; i < level; i++ {
		b = append(b, ' ', ' ')
	}
	return b
}

// appendJSONString quotes s the way Jackson does: short escapes for quote,
// backslash, \b \t \n \f \r, \u00XX (upper-case hex) for other control
// characters, everything else (including non-ASCII) verbatim.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\t':
			b = append(b, '\\', 't')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
