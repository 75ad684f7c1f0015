package org.lakestate.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.TextNode;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.predicate.Predicate;
import org.apache.paimon.predicate.PredicateBuilder;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.DeletionFile;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.RowType;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/** Batch reads of the latest snapshot, exactly as a Paimon batch query sees the table. */
final class Reads {

    private static final ObjectMapper JSON = new ObjectMapper();

    private Reads() {}

    static List<String> readAll(FileStoreTable table) throws Exception {
        return read(table, table.newReadBuilder()).rows;
    }

    /** Reads the rows whose columns equal the given values; the plan prunes buckets by key. */
    static List<String> lookup(FileStoreTable table, List<String> assignments) throws Exception {
        RowType rowType = table.rowType();
        PredicateBuilder pb = new PredicateBuilder(rowType);
        List<Predicate> equals = new ArrayList<>();
        for (String a : assignments) {
            int eq = a.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("expected COL=VALUE, got " + a);
            }
            String name = a.substring(0, eq);
            int i = rowType.getFieldIndex(name);
            if (i < 0) {
                throw new IllegalArgumentException("no column " + name + " in " + rowType);
            }
            DataType type = rowType.getTypeAt(i);
            equals.add(pb.equal(i, RowCodec.parseValue(literal(a.substring(eq + 1), type), type)));
        }
        Result r = read(table, table.newReadBuilder().withFilter(PredicateBuilder.and(equals)));
        System.err.println("buckets read: " + r.buckets);
        return r.rows;
    }

    /**
     * Reads every row of the table back through a predicate on its whole primary key and checks
     * that exactly that row comes back from exactly one bucket. A row stored in a bucket other
     * than the one Paimon computes from its key is not found, so this proves the bucket layout.
     * Each lookup plans and reads anew, so a large table is sampled: at most maxKeys rows, spread
     * evenly over the key order.
     */
    static void lookupAll(FileStoreTable table, int maxKeys) throws Exception {
        RowType rowType = table.rowType();
        List<String> pk = table.primaryKeys();
        if (pk.isEmpty()) {
            Main.fail("lookup-all needs a primary-key table");
        }
        int[] pkIndex = pk.stream().mapToInt(rowType::getFieldIndex).toArray();
        PredicateBuilder pb = new PredicateBuilder(rowType);
        RowCodec codec = new RowCodec(rowType);
        List<InternalRow> rows = new ArrayList<>();
        ReadBuilder all = table.newReadBuilder();
        try (RecordReader<InternalRow> reader = all.newRead().createReader(all.newScan().plan().splits())) {
            reader.forEachRemaining(row -> rows.add(copy(row, rowType)));
        }
        int failures = 0;
        int stride = Math.max(1, (rows.size() + maxKeys - 1) / maxKeys);
        int checked = 0;
        for (int n = 0; n < rows.size(); n += stride) {
            InternalRow row = rows.get(n);
            checked++;
            List<Predicate> equals = new ArrayList<>();
            for (int i : pkIndex) {
                equals.add(pb.equal(i, InternalRow.createFieldGetter(rowType.getTypeAt(i), i).getFieldOrNull(row)));
            }
            Result r = read(table, table.newReadBuilder().withFilter(PredicateBuilder.and(equals)));
            String want = codec.render(row);
            if (r.rows.size() != 1 || !r.rows.get(0).equals(want) || r.buckets.size() != 1) {
                failures++;
                System.err.println("lookup of " + want + " returned " + r.rows + " from buckets " + r.buckets);
            }
        }
        System.out.println(
                "lookup-all " + table.location() + ": " + checked + " of " + rows.size() + " keys, " + failures + " failed");
        if (failures > 0) {
            System.exit(1);
        }
    }

    /** Snapshot range, data files per level and deletion-vector count, for layout assertions. */
    static String describe(FileStoreTable table) throws Exception {
        TreeSet<Long> snapshots = new TreeSet<>();
        File[] files = new File(table.location().toUri().getPath(), "snapshot").listFiles();
        for (File f : files == null ? new File[0] : files) {
            if (f.getName().startsWith("snapshot-")) {
                snapshots.add(Long.parseLong(f.getName().substring("snapshot-".length())));
            }
        }
        SortedMap<Integer, Integer> levels = new TreeMap<>();
        TreeSet<String> buckets = new TreeSet<>();
        int deletionVectors = 0;
        for (DataSplit split : table.newSnapshotReader().read().dataSplits()) {
            buckets.add(Arrays.toString(split.partition().toBytes()) + "/" + split.bucket());
            for (DataFileMeta f : split.dataFiles()) {
                levels.merge(f.level(), 1, Integer::sum);
            }
            Optional<List<DeletionFile>> dv = split.deletionFiles();
            if (dv.isPresent()) {
                deletionVectors += (int) dv.get().stream().filter(d -> d != null).count();
            }
        }
        var out = JSON.createObjectNode();
        out.put("earliestSnapshot", snapshots.isEmpty() ? 0 : snapshots.first());
        out.put("latestSnapshot", snapshots.isEmpty() ? 0 : snapshots.last());
        var lv = out.putObject("filesPerLevel");
        levels.forEach((level, n) -> lv.put(Integer.toString(level), n));
        out.put("buckets", buckets.size());
        out.put("deletionVectors", deletionVectors);
        return JSON.writeValueAsString(out);
    }

    private static final class Result {
        final List<String> rows = new ArrayList<>();
        final TreeSet<Integer> buckets = new TreeSet<>();
    }

    private static Result read(FileStoreTable table, ReadBuilder rb) throws Exception {
        Result r = new Result();
        RowCodec codec = new RowCodec(table.rowType());
        List<Split> splits = rb.newScan().plan().splits();
        for (Split s : splits) {
            if (s instanceof DataSplit) {
                r.buckets.add(((DataSplit) s).bucket());
            }
        }
        try (RecordReader<InternalRow> reader = rb.newRead().executeFilter().createReader(splits)) {
            reader.forEachRemaining(row -> r.rows.add(codec.render(row)));
        }
        r.rows.sort(Reads::compareUtf8);
        return r;
    }

    private static InternalRow copy(InternalRow row, RowType rowType) {
        GenericRow out = new GenericRow(rowType.getFieldCount());
        List<DataField> fields = rowType.getFields();
        for (int i = 0; i < fields.size(); i++) {
            Object v = InternalRow.createFieldGetter(fields.get(i).type(), i).getFieldOrNull(row);
            out.setField(i, v instanceof BinaryString ? ((BinaryString) v).copy() : v);
        }
        return out;
    }

    /** Values on the command line are JSON scalars for booleans and numbers, raw text otherwise. */
    private static JsonNode literal(String text, DataType type) throws Exception {
        switch (type.getTypeRoot()) {
            case BOOLEAN:
            case TINYINT:
            case SMALLINT:
            case INTEGER:
            case BIGINT:
            case FLOAT:
            case DOUBLE:
                return JSON.readTree(text);
            default:
                return TextNode.valueOf(text);
        }
    }

    /** Orders lines by their UTF-8 bytes, as Go's sort.Strings and LC_ALL=C sort do. */
    static int compareUtf8(String a, String b) {
        return Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
    }
}
