package parse

import "strings"

// tok is one token of the hand-written scanners.
type tok struct {
	kind  byte // tName, tString, tNumber, tOp, tNewline
	s, e  int  // byte span in the source
	line  int  // line of the first byte
	eline int  // line of the last byte
}

const (
	tName    = 'n'
	tString  = 's'
	tNumber  = '0'
	tOp      = 'o'
	tNewline = ';' // end of a logical line (Python)
)

// comment is one comment of the source, markers included.
type comment struct {
	line, eline int
	text        string
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// text is the source of a token.
func (t tok) text(src []byte) string { return string(src[t.s:t.e]) }

// is reports whether the token is the operator or name s.
func (t tok) is(src []byte, s string) bool {
	return t.e-t.s == len(s) && string(src[t.s:t.e]) == s
}

// countLines counts the newlines in src[i:j].
func countLines(src []byte, i, j int) int {
	n := 0
	for ; i < j; i++ {
		if src[i] == '\n' {
			n++
		}
	}
	return n
}

// commentDoc joins the comment block that ends on the line before line, markers
// stripped by strip, or "" when there is none.
func commentDoc(cs []comment, byEnd map[int]int, line int, strip func(string) (string, bool)) string {
	var parts []string
	for l := line - 1; l > 0; {
		i, ok := byEnd[l]
		if !ok {
			break
		}
		t, ok := strip(cs[i].text)
		if !ok {
			break
		}
		parts = append(parts, t)
		l = cs[i].line - 1
	}
	if len(parts) == 0 {
		return ""
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.TrimSpace(strings.Join(parts, "\n"))
}

// dedent removes the indentation common to the lines after the first (as Python's
// inspect.cleandoc does) and trims the result.
func dedent(s string) string {
	lines := strings.Split(s, "\n")
	margin := -1
	for _, l := range lines[1:] {
		t := strings.TrimLeft(l, " \t")
		if t == "" {
			continue
		}
		if n := len(l) - len(t); margin < 0 || n < margin {
			margin = n
		}
	}
	for i := 1; i < len(lines); i++ {
		if margin > 0 && len(lines[i]) >= margin {
			lines[i] = lines[i][margin:]
		} else {
			lines[i] = strings.TrimLeft(lines[i], " \t")
		}
		lines[i] = strings.TrimRight(lines[i], " \t\r")
	}
	lines[0] = strings.TrimSpace(lines[0])
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
