package secret

import (
	"strings"
)

// encodedCredentialsCheck accepts the base64 user:password of a Docker or
// Podman config.json "auth" and an .npmrc _auth, and the base64 password of
// an .npmrc _password, judged as a URL's password is.
func encodedCredentialsCheck(text string, a assignment) (hit, bool) {
	n := normName(a.name)
	if n != "auth" && n != "password" || n == "password" && !strings.HasSuffix(a.name, "_password") {
		return hit{}, false
	}
	v := text[a.lo:a.hi]
	if len(v) < 8 || isPlaceholder(v) {
		return hit{}, false
	}
	dec, ok := decodeBase64(v)
	if !ok {
		return hit{}, false
	}
	user, pass := "", dec
	if n == "auth" {
		var found bool
		if user, pass, found = strings.Cut(dec, ":"); !found {
			return hit{}, false
		}
	}
	if len(pass) < 4 || isPlaceholder(pass) || strings.EqualFold(user, pass) || placeholderPasswords[strings.ToLower(pass)] {
		return hit{}, false
	}
	return hit{lo: a.lo, hi: a.hi, redacted: mask(v)}, true
}

// cliPasswordFlags says, for each command that takes a password on its
// command line, how: "-p+" the value attached to -p (mysql -pS3cret),
// "-p" the next argument, "--password=" the value after the =, "user:" a
// user:password argument, and "htpasswd" the password after the file and
// the user of htpasswd -b.
var cliPasswordFlags = map[string][]string{
	"mysql": {"-p+", "--password="}, "mysqldump": {"-p+", "--password="}, "mysqladmin": {"-p+", "--password="},
	"mariadb": {"-p+", "--password="}, "mariadb-dump": {"-p+", "--password="},
	"sshpass":   {"-p", "-p+"},
	"curl":      {"-u user:", "--user user:", "--proxy-user user:", "-U user:"},
	"redis-cli": {"-a", "--pass", "--pass="},
	"htpasswd":  {"htpasswd"},
	"login":     {"-p", "--password", "--password="}, // docker, podman, helm registry, oras login
	"mongosh":   {"-p", "--password", "--password="}, "mongo": {"-p", "--password", "--password="},
	"sqlcmd":     {"-P"},
	"ldapsearch": {"-w"}, "ldapmodify": {"-w"}, "ldapadd": {"-w"},
	"wget":      {"--password=", "--http-password=", "--ftp-password="},
	"smbclient": {"-U user%"},
}

func cliKeywords() []string {
	var kws []string
	for k := range cliPasswordFlags {
		kws = append(kws, k)
	}
	return kws
}

// cliPasswordRule finds a password given to a command on its command
// line (see cliPasswordFlags); the rest of the line up to | ; & or # is
// read as shell words.
func cliPasswordRule(text string, p, k int) (hit, bool) {
	cmd := text[p : p+k]
	if p > 0 && !(text[p-1] == ' ' || text[p-1] == '\t' || text[p-1] == '\n' || text[p-1] == '(' || text[p-1] == '`' || text[p-1] == '$' || text[p-1] == '/' || text[p-1] == '"' || text[p-1] == '\'') ||
		p+k < len(text) && text[p+k] != ' ' && text[p+k] != '\t' {
		return hit{}, false
	}
	if cmd == "login" && !strings.HasSuffix(strings.TrimRight(text[max(0, p-16):p], " \t"), "docker") &&
		!strings.HasSuffix(strings.TrimRight(text[max(0, p-16):p], " \t"), "podman") &&
		!strings.HasSuffix(strings.TrimRight(text[max(0, p-16):p], " \t"), "registry") &&
		!strings.HasSuffix(strings.TrimRight(text[max(0, p-16):p], " \t"), "oras") {
		return hit{}, false
	}
	args := shellWords(text, p+k)
	flags := cliPasswordFlags[cmd]
	var positional []word
	bflag := false
	for i, a := range args {
		v := a.s
		for _, f := range flags {
			switch {
			case f == "htpasswd":
				if strings.HasPrefix(v, "-") && strings.Contains(v, "b") && !strings.HasPrefix(v, "--") {
					bflag = true
				}
			case strings.HasSuffix(f, " user:") || strings.HasSuffix(f, " user%"):
				flag, sep := f[:strings.IndexByte(f, ' ')], f[len(f)-1:]
				if v == flag && i+1 < len(args) {
					u := args[i+1]
					if user, pass, ok := strings.Cut(u.s, sep); ok && !strings.EqualFold(user, pass) && cliPasswordValue(pass) {
						lo := u.lo + len(user) + 1
						return hit{lo: lo, hi: u.hi, redacted: mask(pass)}, true
					}
				}
			case strings.HasSuffix(f, "="):
				if rest, ok := strings.CutPrefix(v, f); ok && cliPasswordValue(rest) {
					return hit{lo: a.hi - len(rest), hi: a.hi, redacted: mask(rest)}, true
				}
			case strings.HasSuffix(f, "+"):
				if rest, ok := strings.CutPrefix(v, f[:len(f)-1]); ok && rest != "" && cliPasswordValue(rest) {
					return hit{lo: a.hi - len(rest), hi: a.hi, redacted: mask(rest)}, true
				}
			default:
				if v == f && i+1 < len(args) && cliPasswordValue(args[i+1].s) {
					n := args[i+1]
					return hit{lo: n.lo, hi: n.hi, redacted: mask(n.s)}, true
				}
			}
		}
		if !strings.HasPrefix(v, "-") {
			positional = append(positional, a)
		}
	}
	// htpasswd -b FILE USER PASSWORD
	if bflag && len(positional) >= 3 && cliPasswordValue(positional[2].s) {
		n := positional[2]
		return hit{lo: n.lo, hi: n.hi, redacted: mask(n.s)}, true
	}
	return hit{}, false
}

// cliPasswordValue reports a password given on a command line: any value
// of four bytes or more that is not a placeholder, a variable or a
// command substitution. Such a value is a working credential, as a URL's
// password is, whatever its strength.
func cliPasswordValue(v string) bool {
	return len(v) >= 4 && len(v) <= 256 && !isPlaceholder(v) && !placeholderPasswords[strings.ToLower(v)] &&
		!strings.HasPrefix(v, "-") && !strings.ContainsAny(v, "$`")
}

// word is a shell word: its text without quotes and the span of that text.
type word struct {
	s      string
	lo, hi int
}

// shellWords splits the rest of the line after i into words. A quoted
// part must be the whole of its word's remainder (-p'x' and 'x' but not
// a'b'c), which is how passwords are quoted.
func shellWords(text string, i int) []word {
	var out []word
	end := min(len(text), i+maxName*2)
	for i < end {
		i = skipBlanks(text, i)
		if i >= end {
			break
		}
		c := text[i]
		if c == '\n' || c == '\r' || c == '|' || c == ';' || c == '&' || c == '#' || c == '>' || c == '<' {
			break
		}
		lo := i
		for i < end && text[i] != ' ' && text[i] != '\t' && text[i] != '\n' && text[i] != '\r' && text[i] != '\'' && text[i] != '"' {
			i++
		}
		if i < end && (text[i] == '\'' || text[i] == '"') {
			q := text[i]
			j := strings.IndexByte(text[i+1:end], q)
			if j < 0 || strings.IndexByte(text[i+1:i+1+j], '\n') >= 0 {
				break
			}
			prefix := text[lo:i]
			inner := text[i+1 : i+1+j]
			// lo is where s would start if the quote were not there, so
			// that an offset into the quoted part maps onto the text; a
			// flag before the quote is matched by its text alone.
			out = append(out, word{s: prefix + inner, lo: i + 1 - len(prefix), hi: i + 1 + j})
			i = i + 2 + j
			continue
		}
		out = append(out, word{s: text[lo:i], lo: lo, hi: i})
	}
	return out
}

// pgpassRule finds a ~/.pgpass line, host:port:database:user:password,
// at the colon before its port (keywords ":0" … ":9" and ":*").
func pgpassRule(text string, p, _ int) (hit, bool) {
	lo := p
	for lo > 0 && pgpassField(text[lo-1]) {
		lo--
	}
	if escapedBreak(text, lo) {
		lo++ // a line break escaped as \n
	}
	if lo == p || lo > 0 && !escapedBreak(text, lo-1) && !(text[lo-1] == ' ' || text[lo-1] == '\t' || text[lo-1] == '\n' || text[lo-1] == '\'' || text[lo-1] == '"') {
		return hit{}, false
	}
	hi := p
	for hi < len(text) && hi-p < maxName && text[hi] != ' ' && text[hi] != '\t' && text[hi] != '\n' && text[hi] != '\r' && text[hi] != '\'' && text[hi] != '"' && !escapedBreak(text, hi+1) {
		hi++
	}
	if strings.Count(text[lo:hi], ":") != 4 {
		return hit{}, false
	}
	fields := strings.Split(text[lo:hi], ":")
	if port := fields[1]; port != "*" && (len(port) > 5 || strings.Trim(port, "0123456789") != "") {
		return hit{}, false
	}
	for _, f := range fields[2:4] {
		if f == "" || strings.Trim(f, identChars+".-*") != "" {
			return hit{}, false
		}
	}
	pw := fields[4]
	if isPlaceholder(pw) || isReference(pw) || !(passwordLike(pw) || tokenLike(pw)) {
		return hit{}, false
	}
	return hit{lo: hi - len(pw), hi: hi, redacted: mask(pw)}, true
}

func pgpassField(c byte) bool {
	return wordByte(c) || c == '.' || c == '-' || c == '*'
}

func pgpassKeywords() []string {
	kws := []string{":*"}
	for c := '0'; c <= '9'; c++ {
		kws = append(kws, ":"+string(c))
	}
	return kws
}

// loginNames are user names that, before " / ", make a login pair of
// what follows: "admin / Qx7vR2mK9pL4".
var loginNames = map[string]bool{
	"admin": true, "administrator": true, "root": true, "sa": true, "postgres": true, "ubuntu": true,
	"pi": true, "elastic": true, "user": true, "operator": true, "superuser": true, "sysadmin": true,
	"deploy": true, "ci": true, "test": true, "demo": true, "guest": true, "manager": true, "owner": true,
}

// loginWords are the words that, earlier on the line, make any name
// before " / " a user name.
var loginWords = []string{"login", "user", "creds", "credentials", "account", "sign in", "signin", "logon"}

// loginPairRule finds "user / password" written as people share logins:
// the keyword is " / ", the user a known login name (or any name when the
// line speaks of a login), and the password a chosen password or token.
func loginPairRule(text string, p, k int) (hit, bool) {
	ulo := p
	for ulo > 0 && p-ulo < 64 && (wordByte(text[ulo-1]) || strings.IndexByte(".-@+", text[ulo-1]) >= 0) {
		ulo--
	}
	user := text[ulo:p]
	if len(user) < 2 || ulo > 0 && !(text[ulo-1] == ' ' || text[ulo-1] == '\t' || text[ulo-1] == '\n' || text[ulo-1] == ':' || text[ulo-1] == '(') {
		return hit{}, false
	}
	if !loginNames[strings.ToLower(user)] && !strings.Contains(user, "@") {
		ls := strings.LastIndexByte(text[:ulo], '\n') + 1
		line := strings.ToLower(text[ls:ulo])
		found := false
		for _, w := range loginWords {
			if strings.Contains(line, w) {
				found = true
				break
			}
		}
		if !found {
			return hit{}, false
		}
	}
	lo, hi, quoted := proseValue(text, p+k)
	if lo == hi {
		return hit{}, false
	}
	v := text[lo:hi]
	if isCode(v, quoted) || isPlaceholder(v) || isReference(v) || versionRE.MatchString(v) || nameLike(v) ||
		strings.ContainsRune(v, '/') || !(passwordLike(v) || tokenLike(v)) {
		return hit{}, false
	}
	return hit{lo: lo, hi: hi, redacted: mask(v)}, true
}

// serviceKeyWords end the words that introduce an untagged key: "stripe
// key 4f3a…", "sentry auth token …", "pusher secret …".
var serviceKeyWords = []string{"key", "token", "secret"}

// serviceModifiers may stand between the service's name and the keyword:
// "Algolia admin API key".
var serviceModifiers = map[string]bool{
	"api": true, "admin": true, "auth": true, "access": true, "secret": true, "app": true,
	"application": true, "client": true, "server": true, "write": true, "read": true, "rest": true,
	"private": true, "personal": true, "live": true, "prod": true, "production": true,
}

// notServices name keys and tokens that are not credentials, or whose
// value is a hash or an identifier: "primary key 4f3a…", "cache key …".
var notServices = map[string]bool{
	"primary": true, "foreign": true, "sort": true, "partition": true, "shard": true, "routing": true,
	"cache": true, "idempotency": true, "dedup": true, "dedupe": true, "lookup": true, "map": true,
	"hash": true, "object": true, "commit": true, "row": true, "index": true, "composite": true,
	"unique": true, "natural": true, "surrogate": true, "public": true, "ssh": true, "gpg": true,
	"pgp": true, "host": true, "signing": true, "the": true, "a": true, "an": true, "this": true,
	"that": true, "new": true, "old": true, "my": true, "our": true, "your": true, "same": true,
	"page": true, "next": true, "continuation": true, "sync": true, "resume": true, "cursor": true,
	"request": true, "trace": true, "correlation": true, "etag": true, "license": true, "product": true,
	"registry": true, "publishable": true, "anon": true, "anonymous": true, "item": true, "record": true, "file": true, "s3": true, "bucket": true, "db": true,
	"storage": true, "redis": true, "memcached": true, "kv": true, "dynamodb": true, "json": true,
	"yaml": true, "config": true, "dict": true, "column": true, "field": true, "key": true, "csrf": true, "xsrf": true, "nonce": true, "jwt": true, "id": true,
}

// serviceKeyRule finds a key with no format of its own given after a
// service's name: the word key, token or secret after a name (and
// optionally after modifiers such as api or admin), then optionally "is",
// : or =, then a random-looking value. The name must not be one that
// makes a key a hash or an identifier (primary key, cache key, …) nor a
// function word.
func serviceKeyRule(text string, p, k int) (hit, bool) {
	if p > 0 && wordByte(text[p-1]) || p+k < len(text) && (wordByte(text[p+k]) || text[p+k] == '-') {
		return hit{}, false
	}
	// The words before: modifiers, then the service's name.
	i := p
	name := ""
	for n := 0; n < 4; n++ {
		j := i
		for j > 0 && (text[j-1] == ' ' || text[j-1] == '\t') {
			j--
		}
		if j == i || j == 0 {
			return hit{}, false
		}
		w := j
		for w > 0 && (wordByte(text[w-1]) || text[w-1] == '-' || text[w-1] == '.') {
			w--
		}
		if w == j {
			return hit{}, false
		}
		word := strings.ToLower(text[w:j])
		i = w
		if serviceModifiers[word] {
			name = word
			continue
		}
		name = word
		break
	}
	if serviceModifiers[name] || notServices[name] || len(name) < 3 || !identStart(name[0]) {
		return hit{}, false
	}
	j := skipBlanks(text, p+k)
	if v, ok := proseVerb(text, j, min(len(text), j+maxName)); ok {
		j = skipBlanks(text, v)
	}
	lo, hi, quoted := proseValue(text, j)
	if hi-lo < 16 {
		return hit{}, false
	}
	v := text[lo:hi]
	// Publishable keys (Stripe's pk_…, Mapbox's pk.…) are public.
	// A value with : or / is a name in a namespace (session:4f3a…) or a
	// path, not a key.
	if strings.HasPrefix(v, "pk_") || strings.HasPrefix(v, "pk.") || strings.ContainsAny(v, ":/") ||
		isCode(v, quoted) || isPlaceholder(v) || isReference(v) || versionRE.MatchString(v) || digestRE.MatchString(v) ||
		!tokenLike(v) {
		return hit{}, false
	}
	return hit{lo: lo, hi: hi, redacted: mask(v)}, true
}

// walletKeyWords introduce a private key in hex: "metamask private key:
// 4c08…", "deployer privkey 0x…".
var walletKeyWords = []string{"private key", "privkey", "priv key", "privatekey", "signer key", "signing key", "wallet key", "secret key", "eth key"}

// walletHexRule finds 64 hex digits (a secp256k1 or ed25519 private key,
// with or without 0x) on the line after one of walletKeyWords. A key is
// never named by its hash, so digests named as such (sha256:…) are left
// alone by the format: they follow no such words.
func walletHexRule(text string, p, k int) (hit, bool) {
	if p > 0 && wordByte(text[p-1]) {
		return hit{}, false
	}
	end := min(len(text), p+k+96)
	if nl := strings.IndexByte(text[p:end], '\n'); nl >= 0 {
		end = p + nl
	}
	for i := p + k; i < end; i++ {
		if !isHex(text[i]) || wordByte(text[i-1]) && !(text[i-1] == 'x' && i >= 2 && text[i-2] == '0' && (i < 3 || !wordByte(text[i-3]))) {
			continue
		}
		j := i
		for j < len(text) && isHex(text[j]) {
			j++
		}
		if j-i == 64 && (j == len(text) || !wordByte(text[j])) && entropy(text[i:j]) >= 3 {
			lo := i
			if lo >= 2 && text[lo-2:lo] == "0x" {
				lo -= 2
			}
			return hit{lo: lo, hi: j, redacted: mask(text[lo:j])}, true
		}
		i = j
	}
	return hit{}, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
