package org.lakestate.interop;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.Decimal;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DecimalType;
import org.apache.paimon.types.LocalZonedTimestampType;
import org.apache.paimon.types.RowKind;
import org.apache.paimon.types.RowType;
import org.apache.paimon.types.TimeType;
import org.apache.paimon.types.TimestampType;

import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Converts rows between Paimon's internal representation and the JSONL text shared by every
 * reader in the interop harness.
 *
 * <p>Rendering: one object per row, user columns in schema order, no spaces. Integers and floats
 * are JSON numbers (Go's float formatting), strings are strings, bytes are standard base64,
 * decimals are strings with exactly `scale` fraction digits, DATE is YYYY-MM-DD, TIMESTAMP(p) is
 * YYYY-MM-DDTHH:MM:SS followed by '.' and exactly p fraction digits when p > 0, TIME likewise.
 *
 * <p>Parsing accepts the same text, plus an optional "_kind" member (+I, -U, +U, -D).
 */
final class RowCodec {

    static final String KIND_MEMBER = "_kind";

    private final RowType rowType;
    private final List<DataField> fields;

    RowCodec(RowType rowType) {
        this.rowType = rowType;
        this.fields = rowType.getFields();
    }

    String render(InternalRow row) {
        StringBuilder out = new StringBuilder(64);
        out.append('{');
        for (int i = 0; i < fields.size(); i++) {
            if (i > 0) {
                out.append(',');
            }
            DataField f = fields.get(i);
            JsonText.appendString(out, f.name());
            out.append(':');
            if (row.isNullAt(i)) {
                out.append("null");
            } else {
                renderValue(out, row, i, f.type());
            }
        }
        return out.append('}').toString();
    }

    private static void renderValue(StringBuilder out, InternalRow row, int i, DataType type) {
        switch (type.getTypeRoot()) {
            case BOOLEAN:
                out.append(row.getBoolean(i));
                break;
            case TINYINT:
                out.append(row.getByte(i));
                break;
            case SMALLINT:
                out.append(row.getShort(i));
                break;
            case INTEGER:
                out.append(row.getInt(i));
                break;
            case BIGINT:
                out.append(row.getLong(i));
                break;
            case FLOAT:
                JsonText.appendFloat(out, row.getFloat(i));
                break;
            case DOUBLE:
                JsonText.appendDouble(out, row.getDouble(i));
                break;
            case CHAR:
            case VARCHAR:
                JsonText.appendString(out, row.getString(i).toString());
                break;
            case BINARY:
            case VARBINARY:
                out.append('"').append(Base64.getEncoder().encodeToString(row.getBinary(i))).append('"');
                break;
            case DECIMAL:
                DecimalType dt = (DecimalType) type;
                Decimal dec = row.getDecimal(i, dt.getPrecision(), dt.getScale());
                out.append('"').append(dec.toBigDecimal().setScale(dt.getScale()).toPlainString()).append('"');
                break;
            case DATE:
                out.append('"').append(formatDate(LocalDate.ofEpochDay(row.getInt(i)))).append('"');
                break;
            case TIME_WITHOUT_TIME_ZONE:
                int timePrecision = ((TimeType) type).getPrecision();
                LocalTime t = LocalTime.ofNanoOfDay(row.getInt(i) * 1_000_000L);
                out.append('"').append(formatTime(t, timePrecision)).append('"');
                break;
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                int p = timestampPrecision(type);
                LocalDateTime ts = row.getTimestamp(i, p).toLocalDateTime();
                out.append('"')
                        .append(formatDate(ts.toLocalDate()))
                        .append('T')
                        .append(formatTime(ts.toLocalTime(), p))
                        .append('"');
                break;
            default:
                throw new IllegalArgumentException("type not supported by the interop harness: " + type);
        }
    }

    private static int timestampPrecision(DataType type) {
        if (type instanceof TimestampType) {
            return ((TimestampType) type).getPrecision();
        }
        return ((LocalZonedTimestampType) type).getPrecision();
    }

    private static String formatDate(LocalDate d) {
        return String.format("%04d-%02d-%02d", d.getYear(), d.getMonthValue(), d.getDayOfMonth());
    }

    private static String formatTime(LocalTime t, int precision) {
        String hms = String.format("%02d:%02d:%02d", t.getHour(), t.getMinute(), t.getSecond());
        if (precision == 0) {
            return hms;
        }
        return hms + "." + String.format("%09d", t.getNano()).substring(0, precision);
    }

    /** Builds an internal row from a JSON object; members not in the schema are an error. */
    GenericRow parse(JsonNode obj) {
        if (!obj.isObject()) {
            throw new IllegalArgumentException("row is not a JSON object: " + obj);
        }
        GenericRow row = new GenericRow(fields.size());
        Iterator<Map.Entry<String, JsonNode>> it = obj.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getKey().equals(KIND_MEMBER)) {
                row.setRowKind(RowKind.fromShortString(e.getValue().asText()));
                continue;
            }
            int i = rowType.getFieldIndex(e.getKey());
            if (i < 0) {
                throw new IllegalArgumentException("no column " + e.getKey() + " in " + rowType);
            }
            row.setField(i, parseValue(e.getValue(), fields.get(i).type()));
        }
        return row;
    }

    /**
     * Converts one JSON value to Paimon's internal object for the given type. A string may also be
     * given as {"repeat": TEXT, "times": N}, so that specs can hold large values.
     */
    static Object parseValue(JsonNode v, DataType type) {
        if (v == null || v.isNull()) {
            return null;
        }
        String text = v.isObject() ? v.get("repeat").asText().repeat(v.get("times").asInt()) : v.asText();
        switch (type.getTypeRoot()) {
            case BOOLEAN:
                if (!v.isBoolean()) {
                    throw new IllegalArgumentException("not a boolean: " + v);
                }
                return v.booleanValue();
            case TINYINT:
                return Byte.parseByte(text);
            case SMALLINT:
                return Short.parseShort(text);
            case INTEGER:
                return Integer.parseInt(text);
            case BIGINT:
                return Long.parseLong(text);
            case FLOAT:
                return Float.parseFloat(text);
            case DOUBLE:
                return Double.parseDouble(text);
            case CHAR:
            case VARCHAR:
                return BinaryString.fromString(text);
            case BINARY:
            case VARBINARY:
                return Base64.getDecoder().decode(text);
            case DECIMAL:
                DecimalType dt = (DecimalType) type;
                Decimal d = Decimal.fromBigDecimal(new BigDecimal(text), dt.getPrecision(), dt.getScale());
                if (d == null) {
                    throw new IllegalArgumentException(text + " does not fit " + type);
                }
                return d;
            case DATE:
                return (int) LocalDate.parse(text).toEpochDay();
            case TIME_WITHOUT_TIME_ZONE:
                return (int) (LocalTime.parse(text).toNanoOfDay() / 1_000_000L);
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                return Timestamp.fromLocalDateTime(LocalDateTime.parse(text));
            default:
                throw new IllegalArgumentException("type not supported by the interop harness: " + type);
        }
    }
}
