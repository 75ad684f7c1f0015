package nexmark

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
)

// Output is the final output of a query: the rows its updating result table
// holds after the last event, every retraction applied. Each query has its
// own row type; a backend's test builds the same Output type from its sink's
// rows, sorts it, and compares Digests.
type Output interface {
	// Query is the query's name, e.g. "q9".
	Query() string
	Len() int
	// Sort puts the rows in canonical order: ascending by their columns, in
	// the order the canonical text lists them.
	Sort()
	// AppendRow appends the canonical text of row i: every column preceded
	// by one space, integers in decimal, strings Go-quoted.
	AppendRow(dst []byte, i int) []byte
}

// WriteText writes the canonical text of a sorted output: a header line
// "nexmark <query> rows=<n>", then one line per row, "<query>" followed by
// the row's columns.
func WriteText(w io.Writer, o Output) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "nexmark %s rows=%d\n", o.Query(), o.Len())
	line := make([]byte, 0, 256)
	for i := range o.Len() {
		line = append(line[:0], o.Query()...)
		line = append(o.AppendRow(line, i), '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Digest is the hex SHA-256 of the output's canonical text.
func Digest(o Output) string {
	h := sha256.New()
	if err := WriteText(h, o); err != nil {
		panic(err) // a hash never fails to write
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Diff describes the first difference between two sorted outputs of one
// query, or returns "" when their canonical texts are equal.
func Diff(want, got Output) string {
	if want.Query() != got.Query() {
		return fmt.Sprintf("want %s output, got %s output", want.Query(), got.Query())
	}
	var w, g []byte
	for i := range min(want.Len(), got.Len()) {
		w, g = want.AppendRow(w[:0], i), got.AppendRow(g[:0], i)
		if string(w) != string(g) {
			return fmt.Sprintf("%s row %d:\nwant%s\n got%s", want.Query(), i, w, g)
		}
	}
	switch {
	case want.Len() > got.Len():
		return fmt.Sprintf("%s: %d rows, want %d; first missing:%s",
			want.Query(), got.Len(), want.Len(), want.AppendRow(nil, got.Len()))
	case want.Len() < got.Len():
		return fmt.Sprintf("%s: %d rows, want %d; first extra:%s",
			want.Query(), got.Len(), want.Len(), got.AppendRow(nil, want.Len()))
	}
	return ""
}

func appendInt(dst []byte, v int64) []byte {
	return strconv.AppendInt(append(dst, ' '), v, 10)
}

// appendString appends s as strconv.AppendQuote does. Generated strings are
// printable ASCII without quotes or backslashes, which quote as themselves:
// those skip the rune-by-rune escaping.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, ' ')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			return strconv.AppendQuote(dst, s)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

func appendBid(dst []byte, b *Bid) []byte {
	dst = appendInt(dst, b.Auction)
	dst = appendInt(dst, b.Bidder)
	dst = appendInt(dst, b.Price)
	dst = appendString(dst, b.Channel)
	dst = appendString(dst, b.URL)
	dst = appendInt(dst, b.DateTime)
	return appendString(dst, b.Extra)
}

// compareBids orders bids by their columns in output order.
func compareBids(a, b *Bid) int {
	if c := cmpInts(a.Auction, b.Auction, a.Bidder, b.Bidder, a.Price, b.Price); c != 0 {
		return c
	}
	if c := cmpStrings(a.Channel, b.Channel, a.URL, b.URL); c != 0 {
		return c
	}
	if c := cmpInts(a.DateTime, b.DateTime); c != 0 {
		return c
	}
	return cmpStrings(a.Extra, b.Extra)
}

// compareAuctions orders auctions by their columns in output order.
func compareAuctions(a, b *Auction) int {
	if c := cmpInts(a.ID, b.ID); c != 0 {
		return c
	}
	if c := cmpStrings(a.ItemName, b.ItemName, a.Description, b.Description); c != 0 {
		return c
	}
	if c := cmpInts(a.InitialBid, b.InitialBid, a.Reserve, b.Reserve, a.DateTime, b.DateTime,
		a.Expires, b.Expires, a.Seller, b.Seller, a.Category, b.Category); c != 0 {
		return c
	}
	return cmpStrings(a.Extra, b.Extra)
}

// cmpInts compares pairs (x0, y0), (x1, y1), ... lexicographically.
func cmpInts(pairs ...int64) int {
	for i := 0; i < len(pairs); i += 2 {
		if x, y := pairs[i], pairs[i+1]; x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// cmpStrings compares pairs (x0, y0), (x1, y1), ... lexicographically.
func cmpStrings(pairs ...string) int {
	for i := 0; i < len(pairs); i += 2 {
		if x, y := pairs[i], pairs[i+1]; x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}
