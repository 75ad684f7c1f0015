package org.lakestate.interop;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * Writes JSON scalars byte for byte as `lakestate inspect table --format jsonl` does
 * (cmd/lakestate/inspect_render.go), so that the outputs compare as plain text: strings as Go's
 * json.Marshal writes them, floats as Go's strconv.FormatFloat(f, 'g', -1, bits).
 */
final class JsonText {

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private JsonText() {}

    /** Appends a JSON string: Go escapes <, > and & and the line separators U+2028/U+2029. */
    static void appendString(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"':
                    out.append("\\\"");
                    break;
                case '\\':
                    out.append("\\\\");
                    break;
                case '\b':
                    out.append("\\b");
                    break;
                case '\f':
                    out.append("\\f");
                    break;
                case '\n':
                    out.append("\\n");
                    break;
                case '\r':
                    out.append("\\r");
                    break;
                case '\t':
                    out.append("\\t");
                    break;
                case '<':
                case '>':
                case '&':
                case '\u2028':
                case '\u2029':
                    appendUnicodeEscape(out, c);
                    break;
                default:
                    if (c < 0x20) {
                        appendUnicodeEscape(out, c);
                    } else if (Character.isSurrogate(c) && !isPairAt(s, i)) {
                        // A lone surrogate is not valid UTF-8; Go writes the replacement character.
                        out.append("\\ufffd");
                    } else {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }

    private static boolean isPairAt(String s, int i) {
        char c = s.charAt(i);
        if (Character.isHighSurrogate(c)) {
            return i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
        }
        return i > 0 && Character.isHighSurrogate(s.charAt(i - 1));
    }

    private static void appendUnicodeEscape(StringBuilder out, char c) {
        out.append("\\u")
                .append(HEX[(c >> 12) & 0xF])
                .append(HEX[(c >> 8) & 0xF])
                .append(HEX[(c >> 4) & 0xF])
                .append(HEX[c & 0xF]);
    }

    /** Appends a float64 as Go's FormatFloat(d, 'g', -1, 64): shortest round-trip digits. */
    static void appendDouble(StringBuilder out, double d) {
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            appendNonFinite(out, d);
            return;
        }
        if (d == 0) {
            out.append(Double.doubleToRawLongBits(d) < 0 ? "-0" : "0");
            return;
        }
        BigDecimal exact = new BigDecimal(d);
        BigDecimal shortest = null;
        for (int digits = 1; digits <= 17; digits++) {
            BigDecimal candidate = exact.round(new MathContext(digits, RoundingMode.HALF_EVEN));
            if (candidate.doubleValue() == d) {
                shortest = candidate;
                break;
            }
        }
        appendShortest(out, shortest);
    }

    /** Appends a float32 as Go's FormatFloat(f, 'g', -1, 32): shortest digits for a float32. */
    static void appendFloat(StringBuilder out, float f) {
        if (Float.isNaN(f) || Float.isInfinite(f)) {
            appendNonFinite(out, f);
            return;
        }
        if (f == 0) {
            out.append(Float.floatToRawIntBits(f) < 0 ? "-0" : "0");
            return;
        }
        BigDecimal exact = new BigDecimal(f);
        BigDecimal shortest = null;
        for (int digits = 1; digits <= 9; digits++) {
            BigDecimal candidate = exact.round(new MathContext(digits, RoundingMode.HALF_EVEN));
            if (candidate.floatValue() == f) {
                shortest = candidate;
                break;
            }
        }
        appendShortest(out, shortest);
    }

    /**
     * JSON has no NaN or infinity and Go's Marshal refuses them; the inspect CLI writes them as
     * the strings "NaN", "Infinity" and "-Infinity".
     */
    private static void appendNonFinite(StringBuilder out, double d) {
        if (Double.isNaN(d)) {
            out.append("\"NaN\"");
        } else {
            out.append(d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
        }
    }

    /**
     * Lays out shortest digits as Go's %g does for the shortest precision: exponent form when the
     * decimal exponent is below -4 or at least 6, with a sign and at least two exponent digits.
     */
    private static void appendShortest(StringBuilder out, BigDecimal value) {
        BigDecimal v = value.stripTrailingZeros();
        String digits = v.unscaledValue().abs().toString();
        int exp = digits.length() - 1 - v.scale();
        if (exp >= -4 && exp < 6) {
            out.append(v.toPlainString());
            return;
        }
        if (v.signum() < 0) {
            out.append('-');
        }
        out.append(digits.charAt(0));
        if (digits.length() > 1) {
            out.append('.').append(digits, 1, digits.length());
        }
        out.append('e').append(exp < 0 ? '-' : '+');
        int absExp = Math.abs(exp);
        if (absExp < 10) {
            out.append('0');
        }
        out.append(absExp);
    }
}
