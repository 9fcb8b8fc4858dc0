package mem

import (
	"strings"
	"time"
)

// writePlainMeta writes the front matter of a new entry, one read from no file
// (no spelling of the user's to keep, no fields of other tools, nothing
// known from its path), as the YAML encoder writes it, without the
// encoder: for each file the encoder builds a tree of nodes and walks it
// through its emitter, most of a bulk load's CPU after the system calls.
// It declines (ok false) any entry with a value whose form it is not sure
// of, every character of which the encoder might quote, fold or read back
// as another type; the encoder writes those. TestWritePlainMeta holds it to the
// encoder's bytes.
func writePlainMeta(e *Entry) (yml []byte, ok bool) {
	if e.meta != nil || len(e.implicit) > 0 || len(e.Extra) > 0 {
		return nil, false
	}
	b := make([]byte, 0, 256)
	// line writes "key: v" when plain says v is written as it is.
	line := func(key, v string, plain func(string) bool) bool {
		if !plain(v) {
			return false
		}
		b = append(b, key...)
		b = append(b, ": "...)
		b = append(b, v...)
		b = append(b, '\n')
		return true
	}
	str := func(key, v string) bool {
		return v == "" || line(key, v, plainString)
	}
	tm := func(key string, t time.Time) bool {
		return t.IsZero() || line(key, FormatTime(t), plainTime)
	}
	ok = str("id", e.ID) && str("kind", e.Kind) && str("scope", e.Scope) &&
		tm("created_at", e.CreatedAt) && tm("updated_at", e.UpdatedAt) &&
		str("project", e.Project) && str("source", e.Source) && str("role", e.Role) &&
		str("status", e.Status) && str("priority", e.Priority) && str("pin", e.Pin) &&
		tm("pin_until", e.PinUntil) && str("pin_task", e.PinTask) && str("level", e.Level)
	if !ok {
		return nil, false
	}
	if len(e.Tags) > 0 {
		// A flow sequence on one line: the encoder breaks one that runs
		// past 80 columns.
		start := len(b)
		b = append(b, "tags: ["...)
		for i, t := range e.Tags {
			if !plainString(t) {
				return nil, false
			}
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, t...)
		}
		b = append(b, ']')
		if len(b)-start > 72 {
			return nil, false
		}
		b = append(b, '\n')
	}
	ok = str("replaced_by", e.ReplacedBy) && tm("deleted_at", e.DeletedAt) && str("deleted_reason", e.DeletedReason)
	if !ok || len(b) == 0 {
		return nil, false // an empty mapping is written "{}"
	}
	return b, true
}

// plainString reports whether the encoder writes s as it is, unquoted, in
// a block mapping and in a flow sequence alike, and reads it back as a
// string. It says yes only to short words of letters, digits and "_./-"
// beginning with a letter or a digit, none of the words YAML reads as a
// boolean or null, and, beginning with a digit, only those holding a
// letter no number can (not a hexadecimal digit, nor x, o, b, p) and no
// "-" (a date). No such word needs quoting, and none is folded.
func plainString(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	lead := s[0]
	letter := isASCIILetter(lead)
	if !letter && !isASCIIDigit(lead) {
		return false
	}
	strong, dash := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isASCIILetter(c):
			if !strings.ContainsRune("abcdefABCDEFxXoObBpP", rune(c)) {
				strong = true
			}
		case isASCIIDigit(c), c == '_', c == '.', c == '/':
		case c == '-':
			dash = true
		default:
			return false
		}
	}
	if letter {
		switch strings.ToLower(s) {
		case "true", "false", "null", "yes", "no", "on", "off", "y", "n":
			return false
		}
		return true
	}
	return strong && !dash
}

// plainTime reports whether v, made by FormatTime, has the one form the
// encoder writes unquoted as a timestamp: 2006-01-02T15:04:05[.999]Z.
func plainTime(v string) bool {
	if len(v) < 20 || v[len(v)-1] != 'Z' {
		return false
	}
	for i := 0; i < len(v)-1; i++ {
		c := v[i]
		switch i {
		case 4, 7:
			if c != '-' {
				return false
			}
		case 10:
			if c != 'T' {
				return false
			}
		case 13, 16:
			if c != ':' {
				return false
			}
		case 19:
			if c != '.' {
				return false
			}
		default:
			if !isASCIIDigit(c) {
				return false
			}
		}
	}
	return true
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isASCIIDigit(c byte) bool  { return c >= '0' && c <= '9' }
