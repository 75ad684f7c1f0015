package nexmark

import (
	"math"
	"math/bits"
	"strconv"
	"sync"
)

// reusableExtraLen is the length of the shared random string that extra
// fields are cut from, as in the reference.
const reusableExtraLen = 1 << 20

// maxExtraLen bounds the configured average sizes so that every extra field
// (at most 1.2 times the average) is a substring of the shared string.
const maxExtraLen = 1 << 18

// tableSeed seeds the process-wide tables. The reference fills them from an
// unseeded generator once per JVM; a constant keeps every run identical.
const tableSeed = 0x6e65786d61726b // "nexmark"

var hotChannels = [...]string{"Google", "Facebook", "Baidu", "Apple"}

var (
	usStates   = [...]string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	usCities   = [...]string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	firstNames = [...]string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames  = [...]string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
)

// stringTables are the immutable process-wide strings the field generators
// pick from.
type stringTables struct {
	extra       string // reusableExtraLen random characters
	hotURLs     [len(hotChannels)]string
	channels    [numChannels]string
	channelURLs [numChannels]string
}

var sharedTables = sync.OnceValue(func() *stringTables {
	t := &stringTables{}
	r := newSplitRandom(tableSeed)
	t.extra = buildExtraString(&r, reusableExtraLen)
	for i := range t.hotURLs {
		t.hotURLs[i] = baseURL(&r)
	}
	for i := range t.channels {
		url := baseURL(&r)
		if r.nextIntN(10) > 0 {
			// The reference appends |Integer.reverse(i)|; Math.abs leaves
			// Integer.MIN_VALUE (channel 1) negative, and so does this.
			id := int32(bits.Reverse32(uint32(i)))
			if id < 0 {
				id = -id
			}
			url += "&channel_id=" + strconv.Itoa(int(id))
		}
		t.channels[i] = "channel-" + strconv.Itoa(i)
		t.channelURLs[i] = url
	}
	return t
})

// buildExtraString fills the shared string the way the reference does:
// six characters per random int, 'a' + rnd%26 with Java's truncating
// remainder, so negative ints yield characters from 'H' up to 'a'.
func buildExtraString(r *splitRandom, n int) string {
	b := make([]byte, n)
	var rnd, left int32
	for i := range b {
		if left == 0 {
			rnd = r.nextInt()
			left = 6
		}
		b[i] = byte('a' + rnd%26)
		rnd /= 26
		left--
	}
	return string(b)
}

func baseURL(r *splitRandom) string {
	b := []byte("https://www.nexmark.com/")
	for range 3 {
		b = appendRandomString(b, r, 5, '_')
		b = append(b, '/')
	}
	return string(append(b, "item.htm?query=1"...))
}

// appendRandomString appends minRandomStringLen to maxLen-1 characters, each
// a lowercase letter or, with probability 1/13, special. The draws are
// nextIntN(13) and nextIntN(26), inlined: strings take most of an
// auction's draws.
func appendRandomString(dst []byte, r *splitRandom, maxLen int32, special byte) []byte {
	n := minRandomStringLen + r.nextIntN(maxLen-minRandomStringLen)
	for range n {
		v, ok := r.intMod(13)
		if !ok {
			v = r.rejected(13)
		}
		if v == 0 {
			dst = append(dst, special)
			continue
		}
		if v, ok = r.intMod(26); !ok {
			v = r.rejected(26)
		}
		dst = append(dst, byte('a'+v))
	}
	return dst
}

// appendSpacedString appends a random string whose special character is a
// space, trimmed of spaces at both ends as the reference's String.trim does.
func appendSpacedString(dst []byte, r *splitRandom, maxLen int32) []byte {
	start := len(dst)
	dst = appendRandomString(dst, r, maxLen, ' ')
	s := dst[start:]
	i, j := 0, len(s)
	for i < j && s[i] == ' ' {
		i++
	}
	for j > i && s[j-1] == ' ' {
		j--
	}
	return dst[:start+copy(s, s[i:j])]
}

// nextExtra returns padding whose length makes currentSize+len average
// avgSize: uniform on [0.8, 1.2) of the gap, cut from the shared string.
func (t *stringTables) nextExtra(r *splitRandom, currentSize, avgSize int) string {
	if currentSize > avgSize {
		return ""
	}
	gap := avgSize - currentSize
	delta := int(math.Floor(float64(gap)*0.2 + 0.5))
	size := gap - delta
	if delta != 0 {
		size += int(r.nextIntN(int32(2 * delta)))
	}
	off := int(r.nextIntN(int32(len(t.extra) - size)))
	return t.extra[off : off+size]
}
