package secret

import (
	"encoding/base64"
	"math"
	"net/url"
	"strings"
)

// Thresholds for values that have no recognisable format (assignments and
// Authorization headers). They are documented in doc.go.
const (
	// minTokenLen and minTokenEntropy describe a machine-made token: long
	// and close to random. Random hex has about 3.7–4 bits per character,
	// base64 about 5–6; English words and identifiers stay under about 3.3
	// at that length, and they are further kept out by needing two of
	// lower case, upper case and digits.
	minTokenLen          = 16
	minTokenEntropy      = 3.0
	minShortTokenEntropy = 2.5 // below 24 bytes; see minEntropy
	// minPasswordLen is the shortest value taken for a chosen password,
	// which must also mix three of lower case, upper case, digits and
	// symbols: "Tr0ub4dor&3xK9!" is refused, "hunter2" and "changeit" are not.
	minPasswordLen = 8
)

// token returns the check for a secret with a distinctive format: the match
// must stand alone (not be part of a longer word) and the secret, submatch
// g, must not be a low-entropy placeholder such as "ghp_xxxx…".
func token(g int, minEntropy float64, needDigit bool) func(string, []int) (hit, bool) {
	return func(text string, m []int) (hit, bool) {
		if !standalone(text, m[0], m[1]) {
			return hit{}, false
		}
		lo, hi := m[2*g], m[2*g+1]
		s := text[lo:hi]
		if entropy(s) < minEntropy || needDigit && !strings.ContainsAny(s, "0123456789") {
			return hit{}, false
		}
		return hit{lo: lo, hi: hi, redacted: mask(s)}, true
	}
}

// pemCheck reports a key block from its header (submatch head) with only
// the body (submatch body) masked; the whole span is submatch all.
func pemCheck(all, head, body int) func(string, []int) (hit, bool) {
	return func(text string, m []int) (hit, bool) {
		b := text[m[2*body]:m[2*body+1]]
		if entropy(b) < 3 {
			return hit{}, false
		}
		red := text[m[2*head]:m[2*head+1]] + " " + mask(b)
		return hit{lo: m[2*all], hi: m[2*all+1], redacted: red}, true
	}
}

// wordByte reports whether c continues a token, so that a match inside a
// longer word is not taken for a token of its own.
func wordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// standalone reports whether text[lo:hi] has a word boundary at each end,
// as \b would (the expressions cannot use \b: they run on slices of the
// text, whose edges are not word boundaries).
func standalone(text string, lo, hi int) bool {
	left := lo == 0 || !wordByte(text[lo]) || !wordByte(text[lo-1])
	right := hi == len(text) || !wordByte(text[hi-1]) || !wordByte(text[hi])
	return left && right
}

// assignment is `name <sep> value` found around a keyword.
type assignment struct {
	name   string
	lo, hi int // span of the value
	quoted bool
}

// maxName and maxValue bound the bytes an assignment may take, so that a
// pathological text costs linear time.
const (
	maxName  = 256
	maxValue = maxSpan
)

// assignmentRule returns a matcher for a keyword that is part of the name in
// an assignment, in the shapes notes and code use: shell and .env
// (`export TOKEN=v`), YAML (`password: v`, `**Password:** v`), JSON
// (`"k": "v"`), Go (`k := v`), Ruby and PHP (`k => v`), TOML and index
// expressions (`s['SECRET_KEY'] = v`).
func assignmentRule(check func(text string, a assignment) (hit, bool)) func(string, int, int) (hit, bool) {
	return func(text string, p, k int) (hit, bool) {
		a, ok := assignmentAt(text, p, k)
		if !ok {
			return hit{}, false
		}
		return check(text, a)
	}
}

// nameByte reports bytes that may appear in an assigned name.
func nameByte(c byte) bool {
	return wordByte(c) || c == '.' || c == '-'
}

func assignmentAt(text string, p, k int) (assignment, bool) {
	lo := p
	for lo > 0 && p-lo < maxName && nameByte(text[lo-1]) {
		lo--
	}
	if lo > 0 && nameByte(text[lo-1]) {
		return assignment{}, false
	}
	if escapedBreak(text, lo) {
		lo++ // the n of a line break escaped as \n
	}
	for lo < p && !identStart(text[lo]) {
		lo++ // a name starts like an identifier: --password, .token
	}
	hi := p + k
	for hi < len(text) && hi-p < maxName && nameByte(text[hi]) {
		hi++
	}
	if hi < len(text) && nameByte(text[hi]) || !identStart(text[lo]) {
		return assignment{}, false
	}
	a := assignment{name: text[lo:hi]}
	if lo > 0 && text[lo-1] == '<' && hi < len(text) && text[hi] == '>' {
		return xmlElement(text, a, hi+1)
	}

	i := hi
	if i < len(text) && strings.IndexByte("\"'`", text[i]) >= 0 {
		i++ // the closing quote of "password":
	}
	if i < len(text) && text[i] == ']' {
		i++ // s['password'] =
	}
	i = skipBlanks(text, i)
	switch rest := text[i:]; {
	case strings.HasPrefix(rest, ":="), strings.HasPrefix(rest, "=>"):
		i += 2
	case strings.HasPrefix(rest, "=="):
		return assignment{}, false // a comparison
	case strings.HasPrefix(rest, "="), strings.HasPrefix(rest, ":"):
		i++
	default:
		return assignment{}, false
	}
	for i < len(text) && text[i] == '*' {
		i++ // **Password:** in Markdown
	}
	i = skipBlanks(text, i)
	if i >= len(text) {
		return assignment{}, false
	}
	end := min(len(text), i+maxValue)
	switch q := text[i]; q {
	case '"', '\'', '`':
		j := i + 1
		for ; j < end && text[j] != q && text[j] != '\n' && text[j] != '\r'; j++ {
			if q == '"' && text[j] == '\\' && j+1 < end && text[j+1] != '\n' {
				j++
			}
		}
		if j >= end || text[j] != q {
			return assignment{}, false
		}
		a.lo, a.hi, a.quoted = i+1, j, true
	default:
		j := i
		for j < end && !unquotedEnd(text[j]) && !escapedBreak(text, j+1) {
			j++
		}
		if j == i || j == end && end < len(text) {
			return assignment{}, false
		}
		a.lo, a.hi = i, j
	}
	return a, true
}

// xmlElement reads the value of <name>value</name>, as Maven's
// settings.xml and other XML configuration hold passwords, from i, just
// after the opening tag. The value is on one line and the closing tag
// must follow it.
func xmlElement(text string, a assignment, i int) (assignment, bool) {
	end := min(len(text), i+maxValue)
	j := i
	for j < end && text[j] != '<' && text[j] != '\n' {
		j++
	}
	if j == i || !strings.HasPrefix(text[j:], "</"+a.name+">") {
		return assignment{}, false
	}
	a.lo, a.hi, a.quoted = i, j, true
	return a, true
}

func skipBlanks(text string, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	return i
}

// unquotedEnd reports bytes that end an unquoted value. Passwords may hold
// almost anything, so only white space, quotes and the punctuation that
// closes a list or an entry end one.
func unquotedEnd(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f', '"', '\'', '`', ',', ';', '}', ']':
		return true
	}
	return false
}

// awsSecretCheck accepts a 40-character key assigned to a name such as
// aws_secret_access_key or SecretAccessKey.
func awsSecretCheck(text string, a assignment) (hit, bool) {
	n := normName(a.name)
	if !(strings.Contains(n, "secretaccesskey") || strings.Contains(n, "aws") && strings.Contains(n, "secret")) {
		return hit{}, false
	}
	v := text[a.lo:a.hi]
	if len(v) != 40 || strings.Trim(v, base64Std) != "" || entropy(v) < minTokenEntropy {
		return hit{}, false
	}
	return hit{lo: a.lo, hi: a.hi, redacted: mask(v)}, true
}

const base64Std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// genericCheck accepts a value assigned to a secret-looking name when it is
// a literal (not code, a reference or a placeholder) that looks like a
// machine-made token or, for password names, like a chosen password.
func genericCheck(text string, a assignment) (hit, bool) {
	kind, word := classifyName(a.name)
	if kind == notSecret {
		return hit{}, false
	}
	v := text[a.lo:a.hi]
	if isCode(v, a.quoted) || isPlaceholder(v) || isReference(v) {
		return hit{}, false
	}
	// A value that repeats its name ("encryptionKey": "encryptionKey1024",
	// FILTER_PASS = C.FILTER_PASS) is a stand-in or a constant.
	if len(word) >= 3 && strings.Contains(normName(v), word) {
		return hit{}, false
	}
	if !tokenLike(v) && !(kind == passwordName && passwordLike(v)) {
		return hit{}, false
	}
	return hit{lo: a.lo, hi: a.hi, redacted: mask(v)}, true
}

// urlPasswordCheck accepts scheme://user:password@host unless the password
// is a placeholder or equals the user name (postgres:postgres, guest:guest:
// well-known local defaults rather than secrets).
func urlPasswordCheck(text string, m []int) (hit, bool) {
	// The expression starts at "://": a scheme made of letters, digits and
	// + . - must come before it, beginning with a letter.
	lo := m[0]
	for lo > 0 && (wordByte(text[lo-1]) && text[lo-1] != '_' || strings.IndexByte("+.-", text[lo-1]) >= 0) {
		lo--
	}
	// What comes before the first letter is not part of the scheme: the
	// "+" of a line a diff adds, the "1." of a list.
	for lo < m[0] && !identStart(text[lo]) {
		lo++
	}
	if lo == m[0] {
		return hit{}, false
	}
	user, pass := text[m[2]:m[3]], text[m[4]:m[5]]
	if u, err := url.PathUnescape(user); err == nil {
		user = u
	}
	if p, err := url.PathUnescape(pass); err == nil {
		pass = p
	}
	if isPlaceholder(pass) || strings.EqualFold(user, pass) || placeholderPasswords[strings.ToLower(pass)] {
		return hit{}, false
	}
	return hit{lo: m[4], hi: m[5], redacted: mask(text[m[4]:m[5]])}, true
}

// hasUserinfo reports whether the URL whose authority starts at i has an
// @ before its path, query or fragment: most URLs have none.
func hasUserinfo(text string, i int) bool {
	for end := min(len(text), i+maxName); i < end; i++ {
		switch text[i] {
		case '@':
			return true
		case '/', '?', '#', ' ', '\t', '\n', '\r', '"', '\'', '<', '>':
			return false
		}
	}
	return false
}

// placeholderPasswords are stand-ins too short or too plain for the word
// list in isPlaceholder.
var placeholderPasswords = map[string]bool{
	"pass": true, "pw": true, "pwd": true, "user": true, "username": true, "admin": true,
	"root": true, "guest": true, "test": true, "foo": true, "bar": true, "mypass": true,
	"abc": true, "xyz": true, "pass123": true,
}

// authorizationCheck accepts an Authorization header value. Basic
// credentials are decoded and judged by their password; any other value
// must look like a token.
func authorizationCheck(text string, m []int) (hit, bool) {
	if m[0] > 0 && wordByte(text[m[0]-1]) {
		return hit{}, false
	}
	lo, hi := m[4], m[5]
	v := text[lo:hi]
	if isPlaceholder(v) || isCode(v, false) {
		return hit{}, false
	}
	if m[2] >= 0 && strings.EqualFold(text[m[2]:m[3]], "basic") {
		if dec, ok := decodeBase64(v); ok {
			user, pass, found := strings.Cut(dec, ":")
			if !found || pass == "" || isPlaceholder(pass) || strings.EqualFold(user, pass) ||
				placeholderPasswords[strings.ToLower(pass)] {
				return hit{}, false
			}
			return hit{lo: lo, hi: hi, redacted: mask(v)}, true
		}
	}
	if !tokenLike(v) {
		return hit{}, false
	}
	return hit{lo: lo, hi: hi, redacted: mask(v)}, true
}

func decodeBase64(s string) (string, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			for _, c := range b {
				if c < 0x20 || c > 0x7e {
					return "", false
				}
			}
			return string(b), true
		}
	}
	return "", false
}

// normName lower-cases a name and drops everything but letters and digits,
// so that DB_PASSWORD, db-password, dbPassword and spring.datasource.password
// compare alike.
func normName(name string) string {
	b := make([]byte, 0, len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'A' <= c && c <= 'Z':
			b = append(b, c+'a'-'A')
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			b = append(b, c)
		}
	}
	return string(b)
}

// nonSecretSuffixes end names that hold something about a secret rather
// than the secret: token_url, password_file, secret_name, max_tokens, ….
var nonSecretSuffixes = []string{
	"file", "path", "url", "uri", "endpoint", "dir", "name", "id", "ids", "type", "len",
	"length", "count", "size", "ttl", "expiry", "expires", "expiresin", "expiresat", "env",
	"var", "field", "header", "prefix", "suffix", "policy", "hint", "regex", "pattern",
	"format", "label", "placeholder", "version", "kind", "mode", "limit", "timeout",
	"lifetime", "age", "ref", "arn", "sha", "sha1", "sha256", "sha512", "md5", "digest",
	"checksum", "fingerprint", "enabled", "required", "provider", "manager", "store",
	"location", "method", "scheme", "algorithm", "alg", "rotation", "strength", "tokens",
	"izer", "budget", "usage", "style",
}

// secretKeyStems precede "key" in names of keys that are secret (api_key,
// SIGNING_KEY); bare "key" and keys such as primary_key or public_key are
// not.
var secretKeyStems = []string{
	"api", "access", "private", "signing", "sign", "encrypt", "encryption", "master", "auth",
	"app", "client", "session", "license", "licence", "server", "admin", "hmac", "shared",
	"webhook", "deploy", "consumer", "account", "storage", "subscription", "crypto",
	"cipher", "aes", "jwt", "root", "service", "write", "secret", "cookie", "csrf", "db",
	"database",
}

// nameKind says what a name suggests its value is.
type nameKind int

const (
	notSecret    nameKind = iota
	tokenName             // an API key, token, secret or credential: machine-made
	passwordName          // a password or passphrase: possibly chosen by a person
)

// notSecretNames are exact names that look like credentials but are not:
// the shell's working directory and the "--- PASS:" lines of go test.
var notSecretNames = map[string]bool{"PWD": true, "OLDPWD": true, "PASS": true}

// classifyName says whether an assigned name suggests a credential, and
// returns the normalised last segment of the name. Only that segment counts:
// token.style and f.pass are fields of something else, while
// spring.datasource.password is a password.
func classifyName(name string) (nameKind, string) {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	if notSecretNames[name] {
		return notSecret, ""
	}
	n := normName(name)
	kind := notSecret
	last := lastWord(name)
	switch {
	case strings.Contains(n, "password"), strings.Contains(n, "passwd"), strings.Contains(n, "passphrase"),
		strings.EqualFold(last, "pass"), strings.EqualFold(last, "pwd"),
		// PGPASS, SMTPPASS; but not compass or bypass.
		strings.HasSuffix(last, "PASS") && strings.ToUpper(last) == last:
		kind = passwordName
	case strings.Contains(n, "secret"), strings.Contains(n, "token"), strings.Contains(n, "credential"),
		strings.Contains(n, "apikey"), secretKeyName(n):
		kind = tokenName
	default:
		return notSecret, n
	}
	for _, s := range nonSecretSuffixes {
		if strings.HasSuffix(n, s) {
			return notSecret, n
		}
	}
	// Pagination tokens and cursors are opaque but not credentials.
	if strings.Contains(n, "page") || strings.Contains(n, "cursor") {
		return notSecret, n
	}
	return kind, n
}

// secretKeyName reports a normalised name ending in key or keys after a
// stem from secretKeyStems.
func secretKeyName(n string) bool {
	stem, ok := strings.CutSuffix(n, "key")
	if !ok {
		if stem, ok = strings.CutSuffix(n, "keys"); !ok {
			return false
		}
	}
	for _, s := range secretKeyStems {
		if strings.HasSuffix(stem, s) {
			return true
		}
	}
	return false
}

// lastWord returns the last word of a name (see eachWord): "dbPass" and
// "DB_PASS" end in a word "pass", "onePassSignature" does not.
func lastWord(name string) string {
	last := ""
	eachWord(name, false, func(w string) bool {
		last = w
		return true
	})
	return last
}

// placeholderWords mark values that stand in for a secret in examples and
// templates. "example" is here but not in the format rules, so AWS's own
// documented example key is still refused: it has a real key's shape and a
// user pasting it may have pasted a real one just as easily.
var placeholderWords = []string{
	"xxxx", "***", "...", "changeme", "change_me", "change-me", "changeit", "placeholder",
	"redacted", "your", "example", "dummy", "sample", "insert", "replace", "todo", "fixme",
	"password", "passwd", "secret", "token", "<", ">", "{{", "${", "$(", "%(",
	// Keyboard runs: made-up values often hold them, random ones seldom
	// (five characters, so that one random hex key in thousands does).
	"01234", "12345", "abcde", "qwerty",
}

// isPlaceholder reports values such as "", "xxxx", "<password>", "${PASS}",
// "$TOKEN", "%API_KEY%", "{token}", "[REDACTED]", "(optional)" or
// "your-api-key".
func isPlaceholder(v string) bool {
	if distinctBytes(v) <= 2 {
		return true
	}
	if v[0] == '$' && len(v) > 1 {
		// ${PASS}, $(pass show db), $1, $TOKEN, $password; but not a
		// password that merely starts with $, nor a bcrypt hash ($2b$12$…).
		rest := v[1:]
		if rest[0] == '{' || rest[0] == '(' || len(rest) == 1 ||
			identStart(rest[0]) && strings.Trim(rest, identChars) == "" && oneCase(rest) {
			return true
		}
	}
	if len(v) > 2 {
		first, last := v[0], v[len(v)-1]
		if first == '%' && last == '%' || first == '{' && last == '}' || first == '[' && last == ']' ||
			first == '(' && last == ')' {
			return true
		}
	}
	l := strings.ToLower(v)
	for _, w := range placeholderWords {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

func distinctBytes(s string) int {
	var seen [256]bool
	n := 0
	for i := 0; i < len(s); i++ {
		if !seen[s[i]] {
			seen[s[i]] = true
			n++
		}
	}
	return n
}

// isCode reports values that are code rather than literals. Unquoted:
// calls, index expressions and composite literals (os.Getenv("X"),
// config["k"], &Config{}), dotted references (settings.SECRET_KEY,
// process.env.TOKEN), small hex numbers, and variables whose name says what
// they hold (db_password, GITHUB_TOKEN, apiKey). Quoted: the inside of a
// concatenation such as "PWD="+dir+"…", which the expression reads from one
// quote to the next.
func isCode(v string, quoted bool) bool {
	if v == "" {
		return false
	}
	if quoted {
		t := strings.TrimSpace(v)
		return strings.HasPrefix(t, "+") || strings.HasSuffix(t, "+")
	}
	if hexNumber(v) {
		return true
	}
	// Taking an address or dereferencing (&cfg, *params.Key, &T{…}) is
	// code when what follows is.
	addr := v[0] == '&' || v[0] == '*'
	if addr {
		v = v[1:]
	}
	if v == "" || !identStart(v[0]) {
		return false
	}
	i := 0
	for i < len(v) && (wordByte(v[i]) || v[i] == '.') {
		i++
	}
	if i < len(v) {
		// A call, index or composite literal: os.Getenv(, config[, T{.
		// (A password such as "Tr0ub(4dor" is taken for one too.)
		return strings.IndexByte("([{", v[i]) >= 0
	}
	if addr || strings.Contains(v, ".") {
		return identPath(v)
	}
	// A variable: one of its words is a secret word in one case
	// (db_password, apiKey, GITHUB_TOKEN, newPassword2, testP256Key).
	// Random tokens hold such letters too, but seldom as a whole word.
	found := false
	eachWord(v, true, func(w string) bool {
		found = variableWords[strings.ToLower(w)] && oneCase(w[1:])
		return !found
	})
	return found
}

// variableWords are the words that name a variable holding a secret.
var variableWords = map[string]bool{
	"pass": true, "password": true, "passwd": true, "passphrase": true, "pwd": true,
	"secret": true, "secrets": true, "token": true, "tokens": true, "key": true, "keys": true,
	"cred": true, "creds": true, "credential": true, "credentials": true, "apikey": true,
}

// identPath reports whether s reads as a dotted path of identifiers, such
// as settings.SECRET_KEY, r.Header.Get or socks5.Dialer: a random password
// such as "EYtN7.jYduRk" has the characters of one but not its look.
func identPath(s string) bool {
	for _, seg := range strings.Split(s, ".") {
		if seg == "" {
			continue // privKey.(*T): a type assertion follows the dot
		}
		if !identWord(seg) {
			return false
		}
	}
	return true
}

// identWord reports whether s looks like an identifier a person wrote: in
// one case (os, SECRET_KEY, db_password), or in CamelCase whose lower-case
// runs are words rather than the one- and two-letter runs of random text
// (NewProc and HTTPServer, not jYduRk). Digits may only end a CamelCase
// one.
func identWord(s string) bool {
	if s == "" || !identStart(s[0]) {
		return false
	}
	if oneCase(s) {
		return true // digits too: ICMPV6_FILTER, sha256sum
	}
	if s = strings.TrimRight(s, "0123456789"); strings.ContainsAny(s, "0123456789") {
		return false
	}
	runs, letters := 0, 0
	for i := 0; i < len(s); {
		if s[i] < 'a' || s[i] > 'z' {
			i++
			continue
		}
		j := i
		for j < len(s) && 'a' <= s[j] && s[j] <= 'z' {
			j++
		}
		runs++
		letters += j - i
		i = j
	}
	return letters >= 5*runs/2
}

// oneCase reports whether the letters of s are all lower or all upper case.
func oneCase(s string) bool {
	return strings.ToLower(s) == s || strings.ToUpper(s) == s
}

// eachWord calls fn for each word of a name, split at punctuation and at
// lower-to-upper case changes ("dbPassword" and "DB_PASSWORD" both hold a
// word "password") and, if digits is set, where digits start or end
// ("p256Key" holds "Key"), until fn returns false.
func eachWord(name string, digits bool, fn func(w string) bool) {
	start := -1
	for i := 0; i <= len(name); i++ {
		alnum := i < len(name) && wordByte(name[i]) && name[i] != '_'
		camel := alnum && i > 0 && 'A' <= name[i] && name[i] <= 'Z' && 'a' <= name[i-1] && name[i-1] <= 'z'
		if digits && alnum && i > 0 && isDigit(name[i]) != isDigit(name[i-1]) {
			camel = true
		}
		if start >= 0 && (!alnum || camel) {
			if !fn(name[start:i]) {
				return
			}
			start = -1
		}
		if alnum && start < 0 {
			start = i
		}
	}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

const identChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"

func identStart(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
}

// hexNumber reports a literal such as 0x3f879678 or -0x7f: a constant, not
// a key (a 64-digit 0x… private key is too long to be one).
func hexNumber(v string) bool {
	v = strings.TrimPrefix(v, "-")
	digits, ok := strings.CutPrefix(strings.ToLower(v), "0x")
	return ok && len(digits) >= 1 && len(digits) <= 16 && strings.Trim(digits, "0123456789abcdef_") == ""
}

// referencePrefixes begin values that point at a secret kept elsewhere.
var referencePrefixes = []string{
	"urn:", "arn:", "vault:", "env:", "file:", "ref:", "secretref:", "keyring:",
	"awssm:", "gcpsm:", "azkv:", "sops:", "op:",
}

// isReference reports values that name where a secret is kept rather than
// being one: /run/secrets/db, ~/.netrc, ./token.txt, op://vault/item,
// C:\keys, arn:aws:secretsmanager:….
func isReference(v string) bool {
	if strings.Contains(v, "://") {
		return true
	}
	l := strings.ToLower(v)
	for _, p := range referencePrefixes {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	if len(v) > 2 && v[1] == ':' && (v[2] == '\\' || v[2] == '/') {
		return true
	}
	if strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || strings.HasPrefix(v, "~/") {
		return true
	}
	if !strings.HasPrefix(v, "/") || strings.Trim(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._~-") != "" {
		return false
	}
	// A base64 token may begin with "/" too. It never holds a dot, which
	// file names mostly do, nor starts with a common root directory.
	if strings.Contains(v, ".") {
		return true
	}
	for _, root := range pathRoots {
		if strings.HasPrefix(v, root) {
			return true
		}
	}
	return false
}

// pathRoots begin absolute paths.
var pathRoots = []string{
	"/home/", "/Users/", "/root/", "/etc/", "/var/", "/run/", "/tmp/", "/opt/", "/usr/",
	"/srv/", "/mnt/", "/media/", "/data/", "/app/", "/secrets/", "/vault/", "/proc/", "/dev/",
	"/workspace/", "/workspaces/",
}

// tokenLike reports a long, random-looking value.
func tokenLike(v string) bool {
	if len(v) < minTokenLen || entropy(v) < minEntropy(len(v)) || wordy(v) {
		return false
	}
	lower, upper, digit, _ := classes(v)
	n := 0
	for _, b := range []bool{lower, upper, digit} {
		if b {
			n++
		}
	}
	return n >= 2
}

// wordy reports identifiers and words such as CreateResponseRequest or
// yaml_DOUBLE_QUOTED_STYLE: no digits, and either mostly one case or
// letters that seldom change case from one to the next. Random mixed-case
// letters are about half upper case and change case at about every second
// pair of neighbours; CamelCase has one capital and two changes per word.
func wordy(v string) bool {
	letters, uppers, pairs, flips := 0, 0, 0, 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		if '0' <= c && c <= '9' {
			return false
		}
		cu, cl := 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z'
		if !cu && !cl {
			continue
		}
		letters++
		if cu {
			uppers++
		}
		if i > 0 {
			p := v[i-1]
			pu, pl := 'A' <= p && p <= 'Z', 'a' <= p && p <= 'z'
			if pu || pl {
				pairs++
				if pu != cu {
					flips++
				}
			}
		}
	}
	if letters == 0 {
		return true
	}
	u := float64(uppers) / float64(letters)
	return u < 0.2 || u > 0.85 || float64(flips) < 0.25*float64(pairs)
}

// minEntropy is the entropy a random-looking value of n bytes must reach.
// Short random strings repeat characters by chance: one random hex value of
// 16 digits in seven has less than 3 bits per byte, while only one in
// thousands has less than 2.5.
func minEntropy(n int) float64 {
	if n < 24 {
		return minShortTokenEntropy
	}
	return minTokenEntropy
}

// passwordLike reports a value shaped like a chosen password: at least
// minPasswordLen bytes mixing three kinds of character.
func passwordLike(v string) bool {
	if len(v) < minPasswordLen {
		return false
	}
	n := 0
	lower, upper, digit, other := classes(v)
	for _, b := range []bool{lower, upper, digit, other} {
		if b {
			n++
		}
	}
	return n >= 3
}

func classes(v string) (lower, upper, digit, other bool) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z':
			lower = true
		case 'A' <= c && c <= 'Z':
			upper = true
		case '0' <= c && c <= '9':
			digit = true
		default:
			other = true
		}
	}
	return
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	n := float64(len(s))
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// maxStars caps the mask so that a long key block does not print as a wall
// of asterisks.
const maxStars = 16

// mask keeps up to four characters at each end of s (fewer for short
// values, none below eight) and replaces the rest with asterisks:
// "AKIAIOSFODNN7EXAMPLE" becomes "AKIA************MPLE".
func mask(s string) string {
	rs := []rune(s)
	n := len(rs)
	keep := 0
	if n >= 8 {
		keep = min(4, n/5)
	}
	stars := min(n-2*keep, maxStars)
	out := string(rs[:keep]) + strings.Repeat("*", stars) + string(rs[n-keep:])
	if n > 0 && strings.Contains(out, s) {
		// Only a secret made mostly of asterisks can survive masking;
		// print fewer characters than it has.
		out = strings.Repeat("*", min(n-1, maxStars))
	}
	return out
}

// discordCheck accepts a Discord bot token whose first part, submatch 1,
// decodes to a user id: digits only.
func discordCheck(text string, m []int) (hit, bool) {
	h, ok := token(0, 3, false)(text, m)
	if !ok {
		return hit{}, false
	}
	id := text[m[2]:m[3]]
	dec, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(id, "="))
	if err != nil {
		if dec, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(id, "=")); err != nil {
			return hit{}, false
		}
	}
	if len(dec) < 15 || strings.Trim(string(dec), "0123456789") != "" {
		return hit{}, false
	}
	return h, true
}

// telegramRule matches a Telegram bot token, <bot id>:A<about 34 characters>,
// at the keyword ":A" found at p.
func telegramRule(text string, p, _ int) (hit, bool) {
	lo := p
	for lo > 0 && p-lo <= 16 && isDigit(text[lo-1]) {
		lo--
	}
	if p-lo < 5 || p-lo > 16 || lo > 0 && wordByte(text[lo-1]) {
		return hit{}, false
	}
	hi := p + 1
	for hi < len(text) && hi-p <= 37 && (wordByte(text[hi]) || text[hi] == '-') {
		hi++
	}
	if n := hi - p - 1; n < 33 || n > 36 || hi < len(text) && (wordByte(text[hi]) || text[hi] == '-') {
		return hit{}, false
	}
	if entropy(text[p+1:hi]) < 3 {
		return hit{}, false
	}
	return hit{lo: lo, hi: hi, redacted: mask(text[lo:hi])}, true
}
