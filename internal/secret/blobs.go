package secret

import (
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/miramem/mira/internal/secret/bip39"
)

// A blob is a long run of base64 (or base58) characters, possibly wrapped
// over several lines as key bodies and base64 output are: it may be a key
// without its header, a wallet key, or a file in base64.
//
// blobRule is one pass over the text that finds blobs and judges each:
//
//   - private-key-body: DER that starts as a private key does (a SEQUENCE
//     whose first element is a small version number: PKCS#1, PKCS#8, SEC 1
//     and PKCS#12 keys; certificates and public keys start otherwise);
//   - wallet-private-key: a Bitcoin WIF key or BIP 32 extended private key,
//     whose base58 checksum must hold;
//   - encoded-secret: base64 that decodes to text in which Scan finds a
//     secret (a kubeconfig's client-key-data, an env file piped through
//     base64).
//
// The same pass finds recovery phrases (see phraseScan).
func blobRule(text string, depth int, add func(hit)) {
	ps := phraseScan{text: text, add: add, list: bip39.List()}
	for i := 0; i < len(text); {
		c := text[i]
		if byteClass[c]&classB64 == 0 {
			if c != ' ' || ps.n == 0 {
				ps.gap(c, i)
			}
			i++
			continue
		}
		lo := i
		all := uint8(classLower)
		for i < len(text) {
			c := byteClass[text[i]]
			if c&classB64 == 0 {
				break
			}
			all &= c
			i++
		}
		lower := all != 0
		if escapedBreak(text, lo) {
			lo++ // the n of a \n that escapes a line break, as in JSON
		}
		switch n := i - lo; {
		case n == 0:
			// A line break escaped as \n.
		case n >= 3 && n <= 8 && lower:
			ps.run(lo, i)
		case n > 0 && n <= 2 || ps.n > 0:
			ps.run(lo, i) // a list number, or the end of a run of words
		}
		if i-lo < minBlob || lo > 0 && !blobEdge(text[lo-1]) && !escapedBreak(text, lo-1) || i < len(text) && !blobEdge(text[i]) && !escapedBreak(text, i+1) {
			continue
		}
		if strings.Trim(text[lo:i], "0123456789abcdefABCDEF") == "" && (i == len(text) || text[i] != '=') {
			continue // hex: a hash, which decodes to nothing
		}
		hi, body := blobExtent(text, lo, i)
		if hi > i {
			i = hi
		}
		judgeBlob(text, lo, hi, body, depth, add)
	}
	ps.end()
}

// minBlob is the shortest run looked at: 30 bytes once decoded.
const minBlob = 40

// maxBlob bounds the bytes of a blob that are decoded.
const maxBlob = 1 << 20

// byteClass says of each byte whether it may be part of a blob and
// whether it is a lower-case letter.
var byteClass = func() (t [256]uint8) {
	for _, c := range base64Std + "-_" {
		t[c] |= classB64
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] |= classLower
	}
	return
}()

const (
	classB64 = 1 << iota
	classLower
)

func b64Byte(c byte) bool { return byteClass[c]&classB64 != 0 }

// blobEdge reports the bytes that may stand before or after a blob: not a
// word character nor a path's punctuation, so that a run inside a URL path
// or a longer word is not taken for one.
func blobEdge(c byte) bool {
	return !wordByte(c) && c != '.' && c != '%' && c != '\\' && c != '&' && c != '?'
}

// blobExtent returns the end of the blob whose first line is text[lo:i]
// (with its = padding) and its characters: lines of the same width wrapped
// below it are part of it.
func blobExtent(text string, lo, i int) (int, string) {
	for n := 0; i < len(text) && text[i] == '=' && n < 2; n++ {
		i++
	}
	width := i - lo
	if width < 60 || i >= len(text) || text[i] != '\n' && text[i] != '\r' && !escapedBreak(text, i+1) {
		return i, text[lo:i]
	}
	var sb strings.Builder
	end := i
	for end < len(text) && sb.Len() < maxBlob {
		j := end
		if j < len(text) && text[j] == '\r' {
			j++
		}
		switch {
		case j < len(text) && text[j] == '\n':
			j++
		case escapedBreak(text, j+1):
			j += 2
		default:
			return end, cmp.Or(sb.String(), text[lo:end])
		}
		j = skipBlanks(text, j)
		k := j
		for k < len(text) && b64Byte(text[k]) {
			k++
		}
		for n := 0; k < len(text) && text[k] == '=' && n < 2; n++ {
			k++
		}
		if k == j || k-j > width || k < len(text) && !blobEdge(text[k]) && !escapedBreak(text, k+1) {
			break
		}
		if sb.Len() == 0 {
			sb.WriteString(text[lo:i])
		}
		sb.WriteString(text[j:k])
		end = k
		if k-j < width {
			break // the last line
		}
	}
	return end, cmp.Or(sb.String(), text[lo:end])
}

func judgeBlob(text string, lo, hi int, body string, depth int, add func(hit)) {
	if strings.Trim(body, "0123456789abcdefABCDEF") == "" {
		return // hex: a hash, which decodes to nothing
	}
	if n := len(body); (n == 51 || n == 52 || n == 111) && walletKey(body) {
		add(hit{rule: ruleIndex["wallet-private-key"], lo: lo, hi: hi, redacted: mask(body)})
		return
	}
	var buf [18]byte
	head := decodePrefix(body, 24, buf[:])
	if len(head) >= 8 && privateDER(head) {
		add(hit{rule: ruleIndex["private-key-body"], lo: lo, hi: hi, redacted: mask(text[lo:min(hi, lo+64)])})
		return
	}
	if depth >= maxDepth || !printable(head) {
		return
	}
	dec, ok := decodeAny(body)
	if !ok || !printable(dec) {
		return
	}
	if hs := rescan(string(dec), depth+1); len(hs) > 0 {
		add(hit{rule: ruleIndex["encoded-secret"], lo: lo, hi: hi, redacted: mask(text[lo:min(hi, lo+64)])})
	}
}

// decodePrefix decodes the first n characters (a multiple of four) of a
// base64 body, in either alphabet.
func decodePrefix(body string, n int, buf []byte) []byte {
	s := body[:min(n, len(body))]
	if k := strings.IndexByte(s, '='); k >= 0 {
		s = s[:k]
	}
	s = s[:len(s)/4*4]
	enc := base64.RawStdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.RawURLEncoding
	}
	m, err := enc.Decode(buf, []byte(s))
	if err != nil {
		return nil
	}
	return buf[:m]
}

func decodeAny(body string) ([]byte, bool) {
	body = strings.TrimRight(body, "=")
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(body); err == nil {
			return b, true
		}
	}
	return nil, false
}

// printable reports bytes that read as text: UTF-8 without control
// characters other than tab, newline and carriage return. A prefix may
// end inside a character.
func printable(b []byte) bool {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return len(b)-i < 4 && utf8.RuneStart(c) // cut short
		}
		i += n
	}
	return true
}

// privateDER reports DER that begins as a private key: a SEQUENCE whose
// first element is INTEGER 0 or 1 (PKCS#1 and PKCS#8 version 0, SEC 1 EC
// keys version 1) followed by a SEQUENCE, INTEGER or OCTET STRING, or
// INTEGER 3 followed by a SEQUENCE (a PKCS#12 key store). Certificates and
// public keys begin with a SEQUENCE inside the SEQUENCE.
func privateDER(b []byte) bool {
	if b[0] != 0x30 {
		return false
	}
	i := 2
	switch {
	case b[1] < 0x80:
	case b[1] == 0x81:
		i = 3
	case b[1] == 0x82:
		i = 4
	default:
		return false
	}
	if len(b) < i+4 || b[i] != 0x02 || b[i+1] != 0x01 {
		return false
	}
	switch v, next := b[i+2], b[i+3]; v {
	case 0, 1:
		return next == 0x30 || next == 0x02 || next == 0x04
	case 3:
		return next == 0x30
	}
	return false
}

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// walletKey reports a Bitcoin private key in base58 with a valid
// checksum: a WIF key (version 0x80, or 0xef on testnet) or a BIP 32
// extended private key (xprv, tprv and the like, whose key data starts
// with a zero byte). Addresses and extended public keys are not keys.
func walletKey(s string) bool {
	switch len(s) {
	case 51, 52:
		if strings.IndexByte("5KL9c", s[0]) < 0 {
			return false
		}
	case 111:
		if !strings.HasSuffix(s[:4], "prv") {
			return false
		}
	}
	b, ok := base58Check(s)
	if !ok {
		return false
	}
	switch len(b) {
	case 33, 34:
		return (b[0] == 0x80 || b[0] == 0xef) && (len(b) == 33 || b[33] == 1)
	case 78:
		return b[45] == 0
	}
	return false
}

// base58Check decodes s and checks its four-byte double SHA-256 checksum,
// returning the payload.
func base58Check(s string) ([]byte, bool) {
	n := new(big.Int)
	base := big.NewInt(58)
	for i := 0; i < len(s); i++ {
		d := strings.IndexByte(base58Alphabet, s[i])
		if d < 0 {
			return nil, false
		}
		n.Mul(n, base)
		n.Add(n, big.NewInt(int64(d)))
	}
	b := n.Bytes()
	for i := 0; i < len(s) && s[i] == '1'; i++ {
		b = append([]byte{0}, b...)
	}
	if len(b) < 5 {
		return nil, false
	}
	payload, sum := b[:len(b)-4], b[len(b)-4:]
	h1 := sha256.Sum256(payload)
	h2 := sha256.Sum256(h1[:])
	if string(h2[:4]) != string(sum) {
		return nil, false
	}
	return payload, true
}

// escapedBreak reports whether text[i] is the n or r of a line break
// escaped as in JSON (\n, \r).
func escapedBreak(text string, i int) bool {
	return i > 0 && i < len(text) && (text[i] == 'n' || text[i] == 'r') && text[i-1] == '\\'
}
