// Package interop proves that lakestate's tables are Apache Paimon tables. Its
// tests drive real Paimon implementations, Java Paimon and pypaimon, which
// interop/setup.sh installs: Paimon reads what lakestate writes, Paimon
// continues a lakestate table and lakestate reads the result, and lakestate
// reads what Paimon writes. Every reader prints a table as sorted JSONL in the
// rendering of `lakestate inspect table --format jsonl`, so results compare as
// text.
//
// The tests run only when LAKESTATE_INTEROP=1; see interop/README.md.
package interop
