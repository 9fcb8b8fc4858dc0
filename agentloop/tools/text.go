package tools

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/miramem/mira/internal/text"
)

// sniffLen is how much of a file is looked at to tell binary from text, as
// git does.
const sniffLen = 8000

// isBinary reports whether data, the start of a file, holds a NUL byte.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), sniffLen)], 0) >= 0
}

// clipLine cuts a long line for display and says how much was left out.
func clipLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	c := text.Cut(s, n)
	return fmt.Sprintf("%s… [line clipped: %d more bytes]", c, len(s)-len(c))
}

// splitLines splits text into lines without their line feeds; a final line
// feed does not start another line.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// numbered writes lines as `cat -n` does, the first numbered first.
func numbered(b *strings.Builder, lines []string, first, lineBytes int) {
	for i, l := range lines {
		fmt.Fprintf(b, "%6d\t%s\n", first+i, clipLine(l, lineBytes))
	}
}

// plural returns "1 line", "2 lines".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
