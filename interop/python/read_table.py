"""Print every row of a Paimon table, as pypaimon reads it, as sorted JSONL.

Usage: read_table.py TABLE_DIR...   (with several tables, each one's rows follow a line "# TABLE_DIR")

The rendering is the one `lakestate inspect table --format jsonl` uses, so the outputs compare as
text: one JSON object per row with the user columns in schema order, Go's encoding/json layout
(no spaces, <>& and U+2028/U+2029 escaped), floats as Go's strconv.FormatFloat(x, 'g', -1, bits)
(shortest round-trip digits; NaN and infinities as strings), bytes as
standard base64, decimals as strings with exactly `scale` fraction digits, DATE as YYYY-MM-DD,
TIMESTAMP(p) and TIME(p) with exactly p fraction digits. Lines are sorted by their UTF-8 bytes.
"""

import base64
import datetime
import decimal
import math
import re
import sys

import numpy
import pyarrow as pa
from pypaimon.common.file_io import FileIO
from pypaimon.common.identifier import Identifier
from pypaimon.common.options.options import Options
from pypaimon.schema.schema_manager import SchemaManager
from pypaimon.table.file_store_table import FileStoreTable

_EPOCH = datetime.datetime(1970, 1, 1)
_NANOS_PER_UNIT = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f",
                  "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def go_string(s):
    """A JSON string exactly as Go's json.Marshal writes it."""
    out = ['"']
    for ch in s:
        if ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif ord(ch) < 0x20 or ch in "<>&\u2028\u2029":
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def go_float(x, bits):
    """A float as Go's strconv.FormatFloat(x, 'g', -1, bits) writes it, for bits 64 or 32."""
    if math.isnan(x):
        return '"NaN"'
    if math.isinf(x):
        return '"Infinity"' if x > 0 else '"-Infinity"'
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    if bits == 64:
        shortest = repr(x)
    else:
        # numpy's unique mode prints the shortest digits that read back as the same float32,
        # as Go's strconv does for bitSize 32.
        shortest = numpy.format_float_scientific(numpy.float32(x), unique=True, trim="-")
    sign, digits, exp = decimal.Decimal(shortest).as_tuple()
    digits = list(digits)
    while len(digits) > 1 and digits[-1] == 0:
        digits.pop()
        exp += 1
    text = "".join(map(str, digits))
    minus = "-" if sign else ""
    e10 = len(text) - 1 + exp
    if e10 < -4 or e10 >= 6:
        # %g with the shortest precision: exponent form, signed, at least two digits.
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return "%s%se%s%02d" % (minus, mantissa, "-" if e10 < 0 else "+", abs(e10))
    point = len(text) + exp
    if exp >= 0:
        return minus + text + "0" * exp
    if point > 0:
        return minus + text[:point] + "." + text[point:]
    return minus + "0." + "0" * (-point) + text


def _precision(type_text, default):
    m = re.search(r"\((\d+)\)", type_text)
    return int(m.group(1)) if m else default


def _clock(nanos_of_day, precision):
    seconds, nanos = divmod(nanos_of_day, 1_000_000_000)
    text = "%02d:%02d:%02d" % (seconds // 3600, seconds // 60 % 60, seconds % 60)
    return text + ("." + ("%09d" % nanos)[:precision] if precision > 0 else "")


def column_renderer(type_text):
    """Returns a function from one Python/Arrow value to its JSON text, for a Paimon type."""
    t = type_text.upper()
    root = re.match(r"[A-Z_]+", t).group(0)
    if root == "BOOLEAN":
        return lambda v: "true" if v else "false"
    if root in ("TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT"):
        return str
    if root == "FLOAT":
        return lambda v: go_float(v, 32)
    if root == "DOUBLE":
        return lambda v: go_float(v, 64)
    if root in ("CHAR", "VARCHAR", "STRING"):
        return go_string
    if root in ("BINARY", "VARBINARY", "BYTES"):
        return lambda v: '"' + base64.b64encode(v).decode("ascii") + '"'
    if root == "DECIMAL":
        scale = int(re.search(r"\(\s*\d+\s*,\s*(\d+)\s*\)", t).group(1))
        quantum = decimal.Decimal(1).scaleb(-scale)
        context = decimal.Context(prec=80)
        return lambda v: '"' + format(v.quantize(quantum, context=context), "f") + '"'
    if root == "DATE":
        return lambda v: '"' + v.isoformat() + '"'
    if root == "TIME":
        p = _precision(t, 0)
        return lambda v: '"' + _clock(v, p) + '"'
    if root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        p = _precision(t, 6)

        def render(nanos):
            days, nanos_of_day = divmod(nanos, 86_400_000_000_000)
            day = (_EPOCH + datetime.timedelta(days=days)).date()
            return '"' + day.isoformat() + "T" + _clock(nanos_of_day, p) + '"'
        return render
    raise ValueError("type not supported by the interop harness: " + type_text)


def _raw_values(column):
    """Python values of one Arrow column; temporal columns as integers in nanoseconds."""
    typ = column.type
    if pa.types.is_timestamp(typ):
        scale = _NANOS_PER_UNIT[typ.unit]
        return [None if v is None else v * scale
                for v in column.cast(pa.int64()).to_pylist()]
    if pa.types.is_time(typ):
        scale = _NANOS_PER_UNIT[typ.unit]
        ints = column.cast(pa.int64() if pa.types.is_time64(typ) else pa.int32())
        return [None if v is None else v * scale for v in ints.to_pylist()]
    return column.to_pylist()


def render_rows(table):
    """Renders a pypaimon table's batch read as sorted JSONL lines."""
    read_builder = table.new_read_builder()
    splits = read_builder.new_scan().plan().splits()
    data = read_builder.new_read().to_arrow(splits)
    columns = []
    for field in table.fields:
        column = data.column(field.name)
        renderer = column_renderer(field.type.type)
        values = _raw_values(column)
        columns.append((go_string(field.name), renderer, values))
    lines = []
    for i in range(data.num_rows):
        members = []
        for name, renderer, values in columns:
            v = values[i]
            members.append(name + ":" + ("null" if v is None else renderer(v)))
        lines.append("{" + ",".join(members) + "}")
    lines.sort(key=lambda s: s.encode("utf-8"))
    return lines


def open_table(path):
    """Opens a table by its directory, without a catalog.

    FileStoreTable.from_path does this from pypaimon 2.0 on; in 1.4 it instantiates the abstract
    FileIO, so the table is assembled from the same parts here for every version.
    """
    file_io = FileIO.get(path, Options({}))
    schema = SchemaManager(file_io, path).latest()
    if schema is None:
        raise SystemExit(path + ": not a Paimon table (no schema)")
    return FileStoreTable(file_io, Identifier("default", "table"), path, schema)


def main(argv):
    if len(argv) < 2:
        sys.stderr.write("usage: read_table.py TABLE_DIR...\n")
        return 2
    out = sys.stdout.buffer
    for path in argv[1:]:
        if len(argv) > 2:
            out.write(b"# " + path.encode("utf-8") + b"\n")
        for line in render_rows(open_table(path)):
            out.write(line.encode("utf-8") + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
