// Package bip39 knows the English word list of BIP 39, the standard that
// turns a wallet's seed into a recovery phrase of 12 to 24 words, and
// checks that a phrase is one. The list itself comes from the
// github.com/cosmos/go-bip39 module; this package indexes it and checks
// phrases without that module's allocations.
package bip39

import (
	"crypto/sha256"
	"sync"

	gobip39 "github.com/cosmos/go-bip39"
)

// Words returns the 2048 words in order; a word's index is its place in
// the list.
func Words() []string { return gobip39.EnglishWordList }

// index maps a word to its place in Words.
var index = sync.OnceValue(func() map[string]uint16 {
	ws := Words()
	m := make(map[string]uint16, len(ws))
	for i, w := range ws {
		m[w] = uint16(i)
	}
	return m
})

// Index returns the place of w in the list.
func Index(w string) (int, bool) {
	i, ok := index()[w]
	return int(i), ok
}

// Lengths are the numbers of words a phrase may have.
var Lengths = []int{12, 15, 18, 21, 24}

// Valid reports whether words, all in the list, form a phrase whose
// checksum holds: each word is 11 bits; of 12 words' 132 bits the first
// 128 are the seed's entropy and the last 4 the first bits of its SHA-256
// (and so on up to 24 words: 256 bits and 8). One random sequence of
// words in 16 (in 256 for 24 words) passes.
func Valid(words []string) bool {
	n := len(words)
	if n%3 != 0 || n < 12 || n > 24 {
		return false
	}
	bits := make([]byte, 0, n*11)
	for _, w := range words {
		i, ok := Index(w)
		if !ok {
			return false
		}
		for b := 10; b >= 0; b-- {
			bits = append(bits, byte(i>>b&1))
		}
	}
	cs := n / 3 // checksum bits
	ent := make([]byte, (len(bits)-cs)/8)
	for i := range ent {
		for b := 0; b < 8; b++ {
			ent[i] = ent[i]<<1 | bits[i*8+b]
		}
	}
	sum := sha256.Sum256(ent)
	for b := 0; b < cs; b++ {
		if bits[len(ent)*8+b] != sum[0]>>(7-b)&1 {
			return false
		}
	}
	return true
}

// Phrase returns the phrase of an entropy of 16, 20, 24, 28 or 32 bytes.
func Phrase(entropy []byte) []string {
	sum := sha256.Sum256(entropy)
	cs := len(entropy) * 8 / 32
	var bits []byte
	for _, c := range entropy {
		for b := 7; b >= 0; b-- {
			bits = append(bits, c>>b&1)
		}
	}
	for b := 0; b < cs; b++ {
		bits = append(bits, sum[0]>>(7-b)&1)
	}
	ws := Words()
	out := make([]string, 0, len(bits)/11)
	for i := 0; i+11 <= len(bits); i += 11 {
		v := 0
		for _, b := range bits[i : i+11] {
			v = v<<1 | int(b)
		}
		out = append(out, ws[v])
	}
	return out
}
