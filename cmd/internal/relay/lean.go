package relay

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The client encodes its request and reads the configuration file by
// hand: encoding/json and a YAML parser cost it a third of a millisecond
// to initialise, a sixth of its whole run.

// appendRequest appends r as one JSON object, as encoding/json would
// write it (the server decodes it with encoding/json).
func appendRequest(b []byte, r Request) []byte {
	b = append(b, `{"command":`...)
	b = appendString(b, r.Command)
	b = append(b, `,"args":`...)
	b = appendStrings(b, r.Args)
	b = append(b, `,"dir":`...)
	b = appendString(b, r.Dir)
	b = append(b, `,"env":`...)
	b = appendStrings(b, r.Env)
	b = append(b, `,"out_tty":`...)
	b = strconv.AppendBool(b, r.OutTTY)
	b = append(b, `,"err_tty":`...)
	b = strconv.AppendBool(b, r.ErrTTY)
	return append(b, '}')
}

func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendString appends s as a JSON string. Bytes that are not UTF-8
// become U+FFFD, as encoding/json makes them.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}

// configServe reads recall.serve from a configuration file: on is false
// only for an explicit `serve: false` among the keys of the top-level
// recall: block. ok is false when the client cannot be sure (flow style,
// anchors, another spelling of a boolean): it then starts no server, and
// leaves the store to the full command.
func configServe(b []byte) (on, ok bool) {
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	on = true
	inRecall, found := false, false
	indent := -1 // of the recall block's keys
	for line := range strings.Lines(string(b)) {
		line = strings.TrimRight(line, "\r\n")
		trimmed := strings.TrimLeft(line, " ")
		ind := len(line) - len(trimmed)
		switch {
		case line == "---" || strings.HasPrefix(line, "%") || strings.HasPrefix(trimmed, "\t"):
			return true, false // documents, directives, tabs: real YAML
		case trimmed == "" || trimmed[0] == '#':
			continue
		case ind == 0: // a top-level key
			rest, isRecall := strings.CutPrefix(line, "recall:")
			inRecall, indent = isRecall, -1
			if rest = strings.TrimLeft(rest, " "); isRecall && rest != "" && rest[0] != '#' {
				return true, false // recall: {…}, an anchor, an alias
			}
			continue
		case !inRecall:
			continue
		case indent < 0:
			indent = ind
		}
		if ind != indent {
			continue // deeper: a value of some other key of recall
		}
		rest, isServe := strings.CutPrefix(trimmed, "serve:")
		if !isServe {
			continue
		}
		if rest == "" || rest[0] != ' ' {
			return true, false // serve:x is another key; serve: alone is null or a block
		}
		if found {
			return true, false // a duplicate key: the command reports it
		}
		found = true
		v := strings.TrimLeft(rest, " ")
		if i := strings.Index(v, " #"); i >= 0 {
			v = v[:i]
		}
		switch strings.TrimRight(v, " ") {
		case "true":
			on = true
		case "false":
			on = false
		default:
			return true, false
		}
	}
	return on, true
}

// configHome returns the top-level home: of a configuration file, "" when
// it has none. It reads the plain forms people write (home: /path, in
// quotes or not, a comment after it); for anything else ok is false and
// the full command, which parses YAML, is left to find the store.
func configHome(b []byte) (home string, ok bool) {
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	found := false
	for line := range strings.Lines(string(b)) {
		line = strings.TrimRight(line, "\r\n")
		rest, isHome := strings.CutPrefix(line, "home:")
		switch {
		case line == "---" || strings.HasPrefix(line, "%") || strings.HasPrefix(line, "\t"):
			return "", false // documents, directives, tabs: real YAML
		case !isHome:
			continue
		case found:
			return "", false // a duplicate key: the command reports it
		}
		found = true
		if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
			return "", false // home:x is a key "home:x", not home
		}
		v := strings.TrimLeft(rest, " \t")
		if v == "" || v[0] == '#' {
			return "", false // null, or a block on the next lines
		}
		var tail string
		switch v[0] {
		case '"', '\'':
			end := strings.IndexByte(v[1:], v[0])
			if end < 0 {
				return "", false
			}
			home, tail = v[1:1+end], v[2+end:]
			if strings.ContainsRune(home, '\\') || (v[0] == '\'' && strings.HasPrefix(tail, "'")) {
				return "", false // escapes
			}
		case '[', '{', '&', '*', '!', '|', '>', '@', '`', '%', '?', '-', ',', ':':
			return "", false // not a plain string
		default:
			home = v
			if i := strings.Index(v, " #"); i >= 0 {
				home = v[:i]
			}
			if j := strings.Index(v, "\t#"); j >= 0 && len(v[:j]) < len(home) {
				home = v[:j]
			}
			home = strings.TrimRight(home, " \t")
			if strings.Contains(home, ": ") || strings.HasSuffix(home, ":") {
				return "", false
			}
		}
		tail = strings.TrimLeft(tail, " \t")
		if tail != "" && tail[0] != '#' {
			return "", false
		}
	}
	return home, true
}
