package subtask

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakestate/lakestate/table"
)

// BenchmarkWriteRecord builds the Arrow record of a flush of 64K map rows
// (a join side's shape: a BIGINT key, a BIGINT entry key, four values of
// which one a string), a tenth of them tombstones. In "dense" the rows and
// keys were allocated in key order, so a flush walks memory forward; in
// "scattered" they were allocated in random order among other objects, as
// an operator's writes leave them, so each row costs the flush cache misses.
func BenchmarkWriteRecord(b *testing.B) {
	l, err := newLayout(Layout{Name: "m", Kind: KindMap,
		Key: []Column{{Name: "k", Type: table.BigInt().NotNull()}},
		Sub: []Column{{Name: "e", Type: table.BigInt().NotNull()}},
		Value: []Column{{Name: "price", Type: table.BigInt()}, {Name: "at", Type: table.BigInt()},
			{Name: "url", Type: table.String()}, {Name: "count", Type: table.BigInt()}}})
	if err != nil {
		b.Fatal(err)
	}
	const n = 1 << 16
	mutationAt := func(i int) mutation {
		k := int64(i / 8)
		key := l.appendSub(l.AppendKey(nil, Key{Group: int32(k % 128), Cols: Row{Int(k)}}), Row{Int(int64(i))})
		return mutation{key: string(key), delete: i%10 == 9,
			vals: Row{Int(int64(i) * 7), Int(1_700_000_000_000 + int64(i)), Str(fmt.Sprintf("https://example.com/item/%d", i)), Int(1)}}
	}
	for _, shape := range []string{"dense", "scattered"} {
		rows := make([]mutation, n)
		var keep [][]byte
		if shape == "dense" {
			for i := range rows {
				rows[i] = mutationAt(i)
			}
		} else {
			rng := rand.New(rand.NewPCG(1, 2))
			for _, i := range rng.Perm(n) {
				rows[i] = mutationAt(i)
				keep = append(keep, make([]byte, 64+rng.IntN(1024)))
			}
		}
		sortMutations(rows)
		b.Run(shape, func(b *testing.B) {
			c, err := newPaimonCodec(l)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				rec, _, err := c.writeRecord(rows)
				if err != nil {
					b.Fatal(err)
				}
				rec.Release()
				c.recycle() // as a commit does once the record is written
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
		})
		_ = keep
	}
}

// BenchmarkMapFlushRecord builds the record of a join side's frozen map
// flush: 16K keys that got four new entries each (a BIGINT entry key, four
// values of which one a string, the entry key a slice of its row as a join
// puts it), rows allocated in random order among other objects. "rows"
// builds the rows as mutations and their record (a flush's way), "entries"
// the record straight from the entries (a frozen commit's way), "record"
// that record alone, from rows by reference diffed once.
func BenchmarkMapFlushRecord(b *testing.B) {
	l, err := newLayout(Layout{Name: "m", Kind: KindMap,
		Key: []Column{{Name: "k", Type: table.BigInt().NotNull()}},
		Sub: []Column{{Name: "e", Type: table.BigInt().NotNull()}},
		Value: []Column{{Name: "id", Type: table.BigInt()}, {Name: "price", Type: table.BigInt()},
			{Name: "url", Type: table.String()}, {Name: "at", Type: table.BigInt()}}})
	if err != nil {
		b.Fatal(err)
	}
	const keys, perKey = 1 << 14, 4
	buf := newArena[*MapEntries]()
	rng := rand.New(rand.NewPCG(3, 4))
	var keep [][]byte
	for k := range int64(keys) {
		me := &MapEntries{dirty: true, whole: true}
		for e := range int64(perKey) {
			keep = append(keep, make([]byte, 64+rng.IntN(1024)))
			id := k*perKey + e
			value := Row{Int(id), Int(id * 7), Str(fmt.Sprintf("https://example.com/item/%d", id)), Int(1_700_000_000_000 + id)}
			me.entries = append(me.entries, mapEntry{sub: string(l.appendSub(nil, value[:1])), subRow: value[:1:1], value: value, ts: noWriteTime})
		}
		buf.slots[buf.add(string(l.AppendKey(nil, Key{Group: int32(rng.IntN(128)), Cols: Row{Int(rng.Int64())}})))] = me
	}
	for _, way := range []string{"rows", "entries", "record"} {
		b.Run(way, func(b *testing.B) {
			c, err := newPaimonCodec(l)
			if err != nil {
				b.Fatal(err)
			}
			var f mapFlush
			var refs []mapRow
			if way == "record" {
				refs = f.entryRows(&buf, l)
			}
			for b.Loop() {
				var rec arrow.Record
				switch way {
				case "record":
					rec, _, err = c.writeMapRecord(refs, buf.keys)
				case "rows":
					rec, _, err = c.writeRecord(f.rows(&buf, l))
				default:
					rec, _, err = c.writeMapRecord(f.entryRows(&buf, l), buf.keys)
					f.releaseRefs()
				}
				if err != nil {
					b.Fatal(err)
				}
				if rec.NumRows() != keys*perKey {
					b.Fatalf("%d rows", rec.NumRows())
				}
				rec.Release()
				c.recycle() // as a commit does once the record is written
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*keys*perKey), "ns/row")
		})
	}
	_ = keep
}
