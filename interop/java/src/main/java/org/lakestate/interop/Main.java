package org.lakestate.interop;

import org.apache.paimon.fs.Path;
import org.apache.paimon.fs.local.LocalFileIO;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.FileStoreTableFactory;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Command-line entry of the Java side of the interop harness. Every command opens a table by its
 * directory, without a catalog, through Paimon's own reader and writer.
 */
public final class Main {

    private static final String USAGE =
            String.join(
                    "\n",
                    "usage: lakestate-interop COMMAND ARGS",
                    "  read DIR...                   all rows of the latest snapshot as sorted JSONL;",
                    "                                with several tables, each one's rows after a line '# DIR'",
                    "  lookup DIR COL=VALUE...       rows matching a primary-key predicate, sorted JSONL",
                    "  lookup-all [--max-keys N] DIR...",
                    "                                every row (or N spread over the key order) read back by",
                    "                                its own primary key",
                    "  append-compact DIR ROWS.jsonl write rows as a new commit user, then fully compact",
                    "  write DIR SPEC.json           create a table and commit the spec's rows",
                    "  describe DIR                  snapshots, file levels and deletion vectors as JSON",
                    "  version                       the Paimon version on the class path");

    private Main() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            fail(USAGE);
        }
        List<String> rest = Arrays.asList(args).subList(1, args.length);
        switch (args[0]) {
            case "read":
                if (rest.isEmpty()) {
                    fail(USAGE);
                }
                for (String dir : rest) {
                    if (rest.size() > 1) {
                        print(List.of("# " + dir));
                    }
                    print(Reads.readAll(open(dir)));
                }
                break;
            case "lookup":
                if (rest.size() < 2) {
                    fail(USAGE);
                }
                print(Reads.lookup(open(rest.get(0)), rest.subList(1, rest.size())));
                break;
            case "lookup-all":
                int maxKeys = Integer.MAX_VALUE;
                if (rest.size() >= 2 && rest.get(0).equals("--max-keys")) {
                    maxKeys = Integer.parseInt(rest.get(1));
                    rest = rest.subList(2, rest.size());
                }
                if (rest.isEmpty() || maxKeys < 1) {
                    fail(USAGE);
                }
                for (String dir : rest) {
                    Reads.lookupAll(open(dir), maxKeys);
                }
                break;
            case "append-compact":
                needArgs(rest, 2);
                Writes.appendAndCompact(open(rest.get(0)), new File(rest.get(1)));
                break;
            case "write":
                needArgs(rest, 2);
                Writes.createAndWrite(rest.get(0), new File(rest.get(1)));
                break;
            case "describe":
                needArgs(rest, 1);
                print(List.of(Reads.describe(open(rest.get(0)))));
                break;
            case "version":
                needArgs(rest, 0);
                print(List.of(paimonVersion()));
                break;
            default:
                fail(USAGE);
        }
        // Paimon leaves non-daemon executor threads behind; the work is done and flushed.
        System.exit(0);
    }

    static FileStoreTable open(String dir) {
        if (!new File(dir, "schema").isDirectory()) {
            fail(dir + ": not a Paimon table (no schema directory)");
        }
        return FileStoreTableFactory.create(LocalFileIO.create(), new Path(new File(dir).getAbsolutePath()));
    }

    static String paimonVersion() {
        String v = FileStoreTable.class.getPackage().getImplementationVersion();
        if (v != null) {
            return v;
        }
        try (var in =
                FileStoreTable.class.getResourceAsStream(
                        "/META-INF/maven/org.apache.paimon/paimon-core/pom.properties")) {
            if (in == null) {
                return "unknown";
            }
            var props = new java.util.Properties();
            props.load(in);
            return props.getProperty("version", "unknown");
        } catch (java.io.IOException e) {
            return "unknown";
        }
    }

    private static void print(List<String> lines) {
        StringBuilder out = new StringBuilder();
        for (String l : lines) {
            out.append(l).append('\n');
        }
        byte[] bytes = out.toString().getBytes(StandardCharsets.UTF_8);
        System.out.write(bytes, 0, bytes.length);
        System.out.flush();
    }

    private static void needArgs(List<String> rest, int n) {
        if (rest.size() != n) {
            fail(USAGE);
        }
    }

    static void fail(String message) {
        System.err.println(message);
        System.exit(2);
    }
}
