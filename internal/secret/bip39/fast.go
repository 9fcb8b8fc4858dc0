package bip39

import "sync"

// A word of the list packs into 40 bits (eight letters of five bits), and
// the packed words go into an open-addressing table twice the list's size,
// which answers Contains far faster than a map: the secret scanner asks it
// of every lower-case word of every text.
const tableBits = 12

var table = sync.OnceValue(func() *[1 << tableBits]uint64 {
	var t [1 << tableBits]uint64
	for _, w := range Words() {
		k, _ := pack(w)
		for h := slot(k); ; h = (h + 1) & (1<<tableBits - 1) {
			if t[h] == 0 {
				t[h] = k
				break
			}
		}
	}
	return &t
})

// pack returns w's letters as five-bit numbers (a is 1), or false when w
// is not three to eight lower-case letters.
func pack(w string) (uint64, bool) {
	if len(w) < 3 || len(w) > 8 {
		return 0, false
	}
	var k uint64
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c < 'a' || c > 'z' {
			return 0, false
		}
		k = k<<5 | uint64(c-'a'+1)
	}
	return k, true
}

func slot(k uint64) uint64 {
	return (k * 0x9E3779B97F4A7C15) >> (64 - tableBits)
}

// Contains reports whether w is a word of the list.
func Contains(w string) bool {
	return List().Contains(w)
}

// Set is the list as a set of words.
type Set struct{ t *[1 << tableBits]uint64 }

// List returns the list as a Set: a caller that asks of many words keeps
// it rather than call Contains, which fetches it for each word.
func List() Set { return Set{table()} }

// Contains reports whether w is a word of the list.
func (s Set) Contains(w string) bool {
	k, ok := pack(w)
	if !ok {
		return false
	}
	t := s.t
	for h := slot(k); t[h] != 0; h = (h + 1) & (1<<tableBits - 1) {
		if t[h] == k {
			return true
		}
	}
	return false
}
