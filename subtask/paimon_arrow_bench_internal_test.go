package subtask

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"syscall"
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
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := threadCPU()
			b.ReportAllocs()
			for b.Loop() {
				rec, _, err := c.writeRecord(rows)
				if err != nil {
					b.Fatal(err)
				}
				rec.Release()
				c.recycle() // as a commit does once the record is written
			}
			b.ReportMetric(float64(threadCPU()-cpu0)/float64(b.N*n), "cpu-ns/row")
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
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := threadCPU()
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
			b.ReportMetric(float64(threadCPU()-cpu0)/float64(b.N*keys*perKey), "cpu-ns/row")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*keys*perKey), "ns/row")
		})
	}
	_ = keep
}

// BenchmarkJoinFlushRecord builds the record of a frozen map flush shaped
// as a join's bid side in Nexmark q20: 32K bids an interval, keyed by
// auction (half of them the hot auction of their stretch of the interval,
// the others one of 10,000), each an entry keyed by its event id whose
// value is the bid's eight columns and a count, the entry key a slice of
// it. Rows come from 512-datum chunks in arrival order, between the chunks
// of the rows joined downstream, as the runtime's row arenas leave them;
// strings are cut from shared tables as the generator cuts them. Rows
// arrive in time order and flush in key order, so the flush visits each
// row's memory out of order. cpu-ns/row is the thread's CPU time per row.
func BenchmarkJoinFlushRecord(b *testing.B) {
	bid := []Column{{Name: "event", Type: table.BigInt().NotNull()}, {Name: "auction", Type: table.BigInt()},
		{Name: "bidder", Type: table.BigInt()}, {Name: "price", Type: table.BigInt()}, {Name: "channel", Type: table.String()},
		{Name: "url", Type: table.String()}, {Name: "at", Type: table.Timestamp(3)}, {Name: "extra", Type: table.String()}}
	l, err := newLayout(Layout{Name: "left", Kind: KindMap,
		Key:   []Column{{Name: "k", Type: table.BigInt().NotNull()}},
		Sub:   []Column{{Name: "u", Type: table.BigInt().NotNull()}},
		Value: append(slices.Clone(bid), Column{Name: "count", Type: table.BigInt()})})
	if err != nil {
		b.Fatal(err)
	}
	const n = 32 << 10
	rng := rand.New(rand.NewPCG(5, 6))
	extra := make([]byte, 1<<20)
	for i := range extra {
		extra[i] = byte('a' + rng.IntN(26))
	}
	extraTable := string(extra)
	channels, urls := make([]string, 10000), make([]string, 10000)
	for i := range channels {
		channels[i] = fmt.Sprintf("channel-%d", i)
		urls[i] = fmt.Sprintf("https://www.nexmark.com/%s/item.htm?query=1&channel_id=%d", channels[i][:4], rng.Int32())
	}
	var stored, joined []Datum
	take := func(free *[]Datum, k int) Row {
		if len(*free) < k {
			*free = make([]Datum, 512)
		}
		r := (*free)[:k:k]
		*free = (*free)[k:]
		return r
	}
	buf := newArena[*MapEntries]()
	for i := range int64(n) {
		auction := 1000 + i/(n/8)*100 // hot: the newest block's first
		if rng.IntN(2) == 0 {
			auction = 1000 + rng.Int64N(10000)
		}
		ch := rng.IntN(len(channels))
		size := 54 + rng.IntN(28)
		off := rng.IntN(len(extraTable) - size)
		value := take(&stored, 9)
		copy(value, Row{Int(i), Int(auction), Int(rng.Int64N(1 << 20)), Int(rng.Int64N(1 << 24)), Str(channels[ch]),
			Str(urls[ch]), Int(1_700_000_000_000 + i), Str(extraTable[off : off+size]), Int(1)})
		copy(take(&joined, 17), value) // a joined output row
		key := string(l.AppendKey(nil, Key{Group: int32(auction % 128), Cols: Row{Int(auction)}}))
		at, ok := buf.index[key]
		if !ok {
			at = buf.add(key)
			buf.slots[at] = &MapEntries{dirty: true, whole: true}
		}
		me := buf.slots[at]
		me.entries = append(me.entries, mapEntry{sub: string(l.appendSub(nil, value[:1])), subRow: value[:1:1], value: value, ts: noWriteTime})
	}
	stored, joined = nil, nil
	for _, way := range []string{"key-order", "memory-order"} {
		b.Run(way, func(b *testing.B) {
			c, err := newPaimonCodec(l)
			if err != nil {
				b.Fatal(err)
			}
			build := c.writeMapRecord
			if way == "key-order" {
				build = c.writeMapRecordKeyOrder
			}
			var f mapFlush
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := threadCPU()
			b.ReportAllocs()
			for b.Loop() {
				rec, _, err := build(f.entryRows(&buf, l), buf.keys)
				f.releaseRefs()
				if err != nil {
					b.Fatal(err)
				}
				if rec.NumRows() != n {
					b.Fatalf("%d rows", rec.NumRows())
				}
				rec.Release()
				c.recycle()
			}
			b.ReportMetric(float64(threadCPU()-cpu0)/float64(b.N*n), "cpu-ns/row")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
		})
	}
}

// threadCPU is the CPU time of the calling thread, in nanoseconds.
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		panic(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
