package secret

import (
	"strings"
	"testing"
)

// ordinaryCorpus returns about size bytes of ordinary notes, code, hashes and
// URLs: the negative corpus with fresh hashes and ids mixed in, so the keyword
// search and the expressions see realistic text rather than one repeated line.
func ordinaryCorpus(size int) string {
	var sb strings.Builder
	for i := uint64(0); sb.Len() < size; i++ {
		sb.WriteString(ordinaryTexts[i%uint64(len(ordinaryTexts))])
		sb.WriteString("\n")
		switch i % 4 {
		case 0:
			sb.WriteString("commit " + fake(hexlc, 40, i) + "\n")
		case 1:
			sb.WriteString("digest: sha256:" + fake(hexlc, 64, i) + "\n")
		case 2:
			sb.WriteString(longProse + "\n\n")
		case 3:
			sb.WriteString("see https://example.com/issues/" + fake("0123456789", 5, i) + "?tab=comments#c" + fake(hexlc, 8, i) + "\n")
		}
	}
	return sb.String()
}

func BenchmarkScan(b *testing.B) {
	text := ordinaryCorpus(100 << 10)
	if got := Scan(text); len(got) != 0 {
		b.Fatalf("ordinary corpus has findings: %v", got)
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Scan(text)
	}
}
