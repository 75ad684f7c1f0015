package org.lakestate.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.fs.Path;
import org.apache.paimon.fs.local.LocalFileIO;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.schema.SchemaManager;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.FileStoreTableFactory;
import org.apache.paimon.table.sink.StreamTableCommit;
import org.apache.paimon.table.sink.StreamTableWrite;
import org.apache.paimon.table.sink.StreamWriteBuilder;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.types.DataTypeJsonParser;

import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/** Writes through Paimon's own writer: new tables from a spec, and appends to existing tables. */
final class Writes {

    private static final ObjectMapper JSON = new ObjectMapper();

    private Writes() {}

    /**
     * Creates the table a spec describes and commits each of its commits in order, as one commit
     * user. A spec is a JSON object:
     *
     * <pre>
     * {"fields": [{"name": "id", "type": "BIGINT NOT NULL"}, ...],
     *  "primaryKeys": ["id"], "partitionKeys": [], "options": {"bucket": "2"},
     *  "commits": [{"rows": [{"id": 1, ...}, {"_kind": "-D", "id": 2, ...}],
     *               "fullCompaction": false}]}
     * </pre>
     */
    static void createAndWrite(String dir, File specFile) throws Exception {
        JsonNode spec = JSON.readTree(specFile);
        Schema.Builder schema = Schema.newBuilder();
        for (JsonNode f : spec.path("fields")) {
            schema.column(f.get("name").asText(), DataTypeJsonParser.parseAtomicTypeSQLString(f.get("type").asText()));
        }
        schema.primaryKey(strings(spec.path("primaryKeys")));
        schema.partitionKeys(strings(spec.path("partitionKeys")));
        spec.path("options").fields().forEachRemaining(e -> schema.option(e.getKey(), e.getValue().asText()));

        Path path = new Path(new File(dir).getAbsolutePath());
        LocalFileIO fileIO = LocalFileIO.create();
        new SchemaManager(fileIO, path).createTable(schema.build());
        FileStoreTable table = FileStoreTableFactory.create(fileIO, path);

        RowCodec codec = new RowCodec(table.rowType());
        List<Commit> commits = new ArrayList<>();
        for (JsonNode c : spec.path("commits")) {
            List<GenericRow> rows = new ArrayList<>();
            for (JsonNode r : c.path("rows")) {
                rows.add(codec.parse(r));
            }
            commits.add(new Commit(rows, c.path("fullCompaction").asBoolean(false)));
        }
        commit(table, commits);
    }

    /**
     * Continues a table written by someone else: commits the rows as a fresh commit user (so the
     * writer restores every touched bucket from the table's files), then fully compacts every
     * bucket in a second commit.
     */
    static void appendAndCompact(FileStoreTable table, File rowsFile) throws Exception {
        RowCodec codec = new RowCodec(table.rowType());
        List<GenericRow> rows = new ArrayList<>();
        for (String line : Files.readAllLines(rowsFile.toPath())) {
            if (!line.isBlank()) {
                rows.add(codec.parse(JSON.readTree(line)));
            }
        }
        commit(table, List.of(new Commit(rows, false), new Commit(List.of(), true)));
    }

    private static final class Commit {
        final List<GenericRow> rows;
        final boolean fullCompaction;

        Commit(List<GenericRow> rows, boolean fullCompaction) {
            this.rows = rows;
            this.fullCompaction = fullCompaction;
        }
    }

    private static void commit(FileStoreTable table, List<Commit> commits) throws Exception {
        File spill = Files.createTempDirectory("lakestate-interop-io").toFile();
        StreamWriteBuilder builder = table.newStreamWriteBuilder().withCommitUser(UUID.randomUUID().toString());
        try (IOManager io = IOManager.create(spill.getAbsolutePath());
                StreamTableWrite write = builder.newWrite();
                StreamTableCommit commit = builder.newCommit()) {
            write.withIOManager(io);
            long identifier = 0;
            for (Commit c : commits) {
                Set<List<Object>> touched = new LinkedHashSet<>();
                for (GenericRow row : c.rows) {
                    write.write(row);
                    touched.add(List.of(write.getPartition(row).copy(), write.getBucket(row)));
                }
                if (c.fullCompaction) {
                    for (DataSplit split : table.newSnapshotReader().read().dataSplits()) {
                        touched.add(List.of(split.partition(), split.bucket()));
                    }
                    for (List<Object> pb : touched) {
                        write.compact((BinaryRow) pb.get(0), (Integer) pb.get(1), true);
                    }
                }
                commit.commit(identifier, write.prepareCommit(true, identifier));
                identifier++;
            }
        }
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }
}
