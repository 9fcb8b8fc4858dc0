package tools

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/miramem/mira/internal/secret"
)

// redactedPrefix starts every redaction mark. Text already redacted is not
// redacted again: a mark assigned to a secret-looking name could otherwise
// look like a password itself.
const redactedPrefix = "[REDACTED:"

// Redact returns s with every secret that internal/secret finds replaced by
// [REDACTED:<rule>], such as [REDACTED:aws-access-key-id]. A private key
// block is replaced from its BEGIN line to its END line, and a mark keeps
// the line breaks of what it replaces, so line numbers computed before and
// after redaction agree.
func Redact(s string) string {
	findings := secret.Scan(s)
	if len(findings) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	done := 0 // s[:done] has been written
	line, lineStart := 1, 0
	for _, f := range findings {
		// Findings come in order of position, so lines are counted in one
		// pass.
		for line < f.Line {
			i := strings.IndexByte(s[lineStart:], '\n')
			if i < 0 {
				break
			}
			lineStart += i + 1
			line++
		}
		lo := lineStart + f.Column - 1
		if line != f.Line || lo < done || lo >= len(s) || strings.HasPrefix(s[lo:], redactedPrefix) {
			continue // inside the span of an earlier finding
		}
		hi := secretEnd(s, lo, f)
		b.WriteString(s[done:lo])
		b.WriteString(redactedPrefix + f.Rule + "]")
		b.WriteString(strings.Repeat("\n", strings.Count(s[lo:hi], "\n")))
		done = hi
	}
	b.WriteString(s[done:])
	return b.String()
}

// secretEnd returns where the secret found at s[lo:] ends. Findings give
// only the start of a secret and a masked copy of it, so the end is worked
// out from the mask, or from the shape of a key block.
func secretEnd(s string, lo int, f secret.Finding) int {
	switch f.Rule {
	case "private-key", "gcp-service-account-key", "putty-private-key":
		return blockEnd(s, lo, f.Rule)
	}
	if hi, ok := maskEnd(s, lo, f.Redacted); ok {
		return hi
	}
	return tokenEnd(s, lo)
}

// maskLimit is how far a secret of one line is looked for past its start,
// the scanner's own limit.
const maskLimit = 4096

// maskStars is the most asterisks the scanner puts in a mask.
const maskStars = 16

// maskEnd finds the end hi for which the scanner's mask of s[lo:hi] is
// red. The scanner keeps min(4, n/5) characters at each end of a secret of
// n characters (none below 8) and puts up to 16 asterisks between them, so
// a mask with fewer than 16 asterisks gives the length exactly; for longer
// secrets the last end on the line whose kept characters agree is taken,
// hiding too much rather than too little.
func maskEnd(s string, lo int, red string) (int, bool) {
	r := []rune(red)
	limit := min(len(s), lo+maskLimit)
	best, n := -1, 0
	for hi := lo; hi < limit; {
		c, size := utf8.DecodeRuneInString(s[hi:])
		if c == '\n' {
			break
		}
		hi += size
		n++
		keep := 0
		if n >= 8 {
			keep = min(4, n/5)
		}
		stars := min(n-2*keep, maskStars)
		if len(r) != 2*keep+stars || !maskAgrees(s[lo:hi], r, keep) {
			continue
		}
		if stars < maskStars {
			return hi, true // exact length
		}
		best = hi
	}
	return best, best >= 0
}

// maskAgrees reports whether sec, masked keeping keep runes at each end,
// gives r.
func maskAgrees(sec string, r []rune, keep int) bool {
	head := sec
	for i := 0; i < keep; i++ {
		c, size := utf8.DecodeRuneInString(head)
		if c != r[i] {
			return false
		}
		head = head[size:]
	}
	tail := sec
	for i := 0; i < keep; i++ {
		c, size := utf8.DecodeLastRuneInString(tail)
		if c != r[len(r)-1-i] {
			return false
		}
		tail = tail[:len(tail)-size]
	}
	for _, c := range r[keep : len(r)-keep] {
		if c != '*' {
			return false
		}
	}
	return true
}

// tokenEnd is the fallback end of a secret: the end of the run of
// characters that could belong to a token.
func tokenEnd(s string, lo int) int {
	hi := lo
	for hi < len(s) {
		c, size := utf8.DecodeRuneInString(s[hi:])
		if unicode.IsSpace(c) || strings.ContainsRune("\"'`,;", c) {
			break
		}
		hi += size
	}
	return max(hi, lo+1)
}

// pemEnd matches the END line of a key block.
var pemEnd = regexp.MustCompile(`-{4,5} ?END [A-Z0-9 ]*-{4,5}`)

// blockEnd returns the end of a key block starting at lo: through its END
// line when there is one, else through the lines of key data after the
// header (or, inside a JSON string, to the closing quote).
func blockEnd(s string, lo int, rule string) int {
	window := s[lo:min(len(s), lo+64<<10)]
	if rule != "putty-private-key" {
		if m := pemEnd.FindStringIndex(window); m != nil {
			return lo + m[1]
		}
	}
	if rule == "gcp-service-account-key" {
		for i := 0; i < len(window); i++ {
			if window[i] == '\\' {
				i++
			} else if window[i] == '"' {
				return lo + i
			}
		}
		return lo + len(window)
	}
	// The header line, then every line of base64 or "Name: value" headers.
	end := len(window)
	if i := strings.IndexByte(window, '\n'); i >= 0 {
		end = i
	}
	lines := 0
	if rule == "putty-private-key" {
		_, n, _ := strings.Cut(window[:end], ":")
		lines, _ = strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(n, "\r")))
	}
	body := 0 // lines of key data taken
	for end < len(window) {
		next := strings.IndexByte(window[end+1:], '\n')
		lineEnd := len(window)
		if next >= 0 {
			lineEnd = end + 1 + next
		}
		l := strings.TrimSpace(window[end+1 : lineEnd])
		switch {
		case lines > 0 && body >= lines:
		case l == "" && body == 0 && rule == "private-key":
			// The blank line between PEM headers and the data.
			end = lineEnd
			continue
		case l != "" && isBase64(l):
			body++
			end = lineEnd
			continue
		case body == 0 && rule == "private-key" && isHeaderLine(l):
			end = lineEnd
			continue
		}
		break
	}
	return lo + end
}

func isBase64(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '=') {
			return false
		}
	}
	return true
}

// isHeaderLine reports a PEM header such as "Proc-Type: 4,ENCRYPTED".
func isHeaderLine(s string) bool {
	name, _, ok := strings.Cut(s, ":")
	return ok && name != "" && strings.IndexFunc(name, func(c rune) bool {
		return !(c == '-' || unicode.IsLetter(c) || unicode.IsDigit(c))
	}) < 0
}
