package bip39

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// TestList checks the embedded list against the SHA-256 that BIP 39
// publishes for its English list (the words joined by newlines).
func TestList(t *testing.T) {
	ws := Words()
	if len(ws) != 2048 {
		t.Fatalf("%d words, want 2048", len(ws))
	}
	sum := sha256.Sum256([]byte(strings.Join(ws, "\n") + "\n"))
	if got := hex.EncodeToString(sum[:]); got != "2f5eed53a4727b4bf8880d8f3f199efc90e58503646d9ff8eff3a2ed3b24dbda" {
		t.Errorf("list hash %s", got)
	}
}

func TestValid(t *testing.T) {
	// The first test vector of BIP 39: 16 zero bytes.
	zero := strings.Fields(strings.Repeat("abandon ", 11) + "about")
	if !Valid(zero) {
		t.Error("the all-zero phrase is not valid")
	}
	if got := strings.Join(Phrase(make([]byte, 16)), " "); got != strings.Join(zero, " ") {
		t.Errorf("Phrase(zero) = %q", got)
	}
	bad := append(zero[:11:11], "abandon")
	if Valid(bad) {
		t.Error("a phrase with a wrong checksum is valid")
	}
	for _, n := range []int{16, 20, 24, 28, 32} {
		e := make([]byte, n)
		for i := range e {
			e[i] = byte(i*37 + n)
		}
		p := Phrase(e)
		if len(p) != n*3/4 || !Valid(p) {
			t.Errorf("Phrase of %d bytes: %d words, valid %v", n, len(p), Valid(p))
		}
	}
	if Valid(zero[:11]) || Valid(append(zero, "zoo")) {
		t.Error("a phrase of 11 or 13 words is valid")
	}
}

func TestContains(t *testing.T) {
	for _, w := range Words() {
		if !Contains(w) {
			t.Errorf("Contains(%q) = false", w)
		}
	}
	for _, w := range []string{"", "ab", "abandons", "abando", "zoos", "Abandon", "the", "and", "abandonx", "zzzzzzzz"} {
		if Contains(w) {
			t.Errorf("Contains(%q) = true", w)
		}
	}
}
