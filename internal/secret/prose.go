package secret

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/miramem/mira/internal/secret/bip39"
)

// proseKeywords are the words that introduce a password in a sentence. Each
// must stand alone as a word: db_password and 1Password are names, which
// generic-assignment judges.
// Other languages' words for password are here too; a keyword in a
// cased script other than Latin is listed in each of its cases.
var proseKeywords = []string{"password", "passwd", "pwd", "pw", "passphrase", "passcode", "secret",
	"passwort", "kennwort", "mot de passe", "contraseña", "senha", "wachtwoord", "lösenord",
	"adgangskode", "passord", "salasana", "hasło", "heslo", "parola", "jelszó", "mật khẩu", "şifre",
	"пароль", "Пароль", "ПАРОЛЬ", "パスワード", "密码", "密碼", "비밀번호", "口令"}

// proseVerbs join the keyword (or its phrase) to the value, longest first
// so that "is set to" wins over "is". Each is followed by a blank.
var proseVerbs = []string{
	"has been changed to", "has been reset to", "has been set to",
	"was changed to", "was reset to", "was set to", "is set to", "is now",
	"changed to", "reset to", "set to", "became", "becomes", "is", "was",
	// Other languages: "Das Passwort ist …", "le mot de passe est …".
	"lautet", "ist", "est", "es", "é", "är", "er", "jest", "je", "è", "это",
}

// proseVerbsCJK join without a blank: "密码是…", "パスワードは…".
var proseVerbsCJK = []string{"是", "为", "為", "は", "：", "은", "는"}

// proseSymbols are the punctuation that may stand for the verb.
var proseSymbols = []string{":=", "=>", "->", ":", "="}

// prosePrepositions start the phrase that may come between the keyword and
// the verb: "pw for prod db is …", "the password of the admin account is …".
// "to" is left out: "the secret to good code is …" is never a password.
var prosePrepositions = []string{"for", "of", "on",
	"für", "von", "van", "voor", "de", "du", "des", "pour", "para", "do", "da", "del", "för", "для", "от"}

// maxPhraseWords bounds the words of that phrase.
const maxPhraseWords = 6

// proseRule matches a password given in a sentence: one of proseKeywords,
// an optional phrase such as "for prod db", a verb (is, was, is now, set
// to, changed to, …) or : or =, and the value, as in "the password is
// hunter2correcthorse" or "pw for prod db is S3cr3tP4ss!". Only the first
// word after the verb is the value, so "the password is stored hashed"
// yields "stored", which does not look like a password.
func proseRule(text string, p, k int) (hit, bool) {
	if p > 0 && wordByte(text[p-1]) || p+k < len(text) && wordByte(text[p+k]) {
		return hit{}, false
	}
	end := min(len(text), p+maxName)
	i := skipBlanks(text, p+k)
	if i < len(text) && text[i] == ')' {
		i = skipBlanks(text, i+1) // "the password (for prod) is"
	}
	if j, ok := proseVerb(text, i, end); ok {
		i = j
	} else if hi, ok := appPassword(text, i); ok && i > p+k {
		// "the app password abcd efgh ijkl mnop": no verb is needed.
		return hit{lo: i, hi: hi, redacted: mask(text[i:hi])}, true
	} else if i > p+k && netrcPassword(text, p, k) {
		// "machine h login u password v": the blank is the separator.
	} else {
		// A phrase: a preposition and at most maxPhraseWords words, the
		// last of which may carry the colon ("for the NAS: …").
		w := wordAt(text, i, end)
		if !containsFold(prosePrepositions, w) {
			return hit{}, false
		}
		i = skipBlanks(text, i+len(w))
		for n := 0; ; n++ {
			if j, ok := proseVerb(text, i, end); ok {
				i = j
				break
			}
			w := wordAt(text, i, end)
			if n == maxPhraseWords || w == "" {
				return hit{}, false
			}
			i += len(w)
			if i < len(text) && text[i] == ':' {
				continue // the verb: proseVerb finds it next
			}
			if i < len(text) && text[i] != ' ' && text[i] != '\t' {
				return hit{}, false // the sentence or the clause ends
			}
			i = skipBlanks(text, i)
		}
	}
	if i < len(text) && text[i] == ':' {
		i++ // "is: …"
	}
	i = skipBlanks(text, i)
	if hi, ok := appPassword(text, i); ok {
		return hit{lo: i, hi: hi, redacted: mask(text[i:hi])}, true
	}
	lo, hi, quoted := proseValue(text, i)
	if lo == hi {
		return hit{}, false
	}
	v := text[lo:hi]
	if !passwordValue(v, quoted) {
		return hit{}, false
	}
	return hit{lo: lo, hi: hi, redacted: mask(v)}, true
}

// proseVerb returns the position after the verb or symbol at i.
func proseVerb(text string, i, end int) (int, bool) {
	rest := text[i:end]
	for _, s := range proseSymbols {
		if strings.HasPrefix(rest, s) {
			if s == "=" && strings.HasPrefix(rest, "==") || s == "=" && strings.HasPrefix(rest, "=~") {
				return 0, false // a comparison
			}
			return i + len(s), true
		}
	}
	if rest == "" {
		return 0, false
	}
	for _, v := range verbsByByte[foldByte(rest[0])] {
		if len(rest) > len(v) && strings.EqualFold(rest[:len(v)], v) && (rest[len(v)] == ' ' || rest[len(v)] == '\t' || rest[len(v)] == ':') {
			return i + len(v), true
		}
	}
	if rest[0] >= utf8.RuneSelf {
		for _, v := range proseVerbsCJK {
			if strings.HasPrefix(rest, v) {
				return i + len(v), true
			}
		}
	}
	return 0, false
}

// verbsByByte lists proseVerbs by their first byte, lower-cased, in their
// order: most words of a phrase start no verb, and this says so at once.
var verbsByByte = func() (t [256][]string) {
	for _, v := range proseVerbs {
		c := foldByte(v[0])
		t[c] = append(t[c], v)
	}
	return
}()

// wordAt returns the word of a phrase at i: letters, digits and the
// punctuation of names and host names (prod-db, db.internal, ada@host).
func wordAt(text string, i, end int) string {
	j := i
	for j < end && (wordByte(text[j]) || strings.IndexByte("-./@'", text[j]) >= 0) {
		j++
	}
	// A dot that ends the word ends the sentence.
	if j > i && text[j-1] == '.' {
		return ""
	}
	return text[i:j]
}

func containsFold(list []string, w string) bool {
	for _, s := range list {
		if strings.EqualFold(s, w) {
			return true
		}
	}
	return false
}

// proseValue returns the span of the value at i: the inside of a quoted
// string on one line, or the run of bytes up to a blank or quote without
// the punctuation that ends a sentence or clause.
func proseValue(text string, i int) (lo, hi int, quoted bool) {
	if i >= len(text) {
		return i, i, false
	}
	end := min(len(text), i+maxValue)
	if q := text[i]; q == '"' || q == '\'' || q == '`' {
		j := i + 1
		for j < end && text[j] != q && text[j] != '\n' && text[j] != '\r' {
			j++
		}
		if j >= end || text[j] != q {
			return i, i, false
		}
		return i + 1, j, true
	}
	j := i
	for j < end && !unquotedEnd(text[j]) {
		j++
	}
	for j > i && strings.IndexByte(".,;:)", text[j-1]) >= 0 {
		if text[j-1] == ')' && strings.IndexByte(text[i:j], '(') >= 0 {
			break // (optional)
		}
		j--
	}
	return i, j, false
}

// passwordValue reports whether a value given in prose looks like a
// password: not code, a reference, a placeholder, a version, a digest or a
// name (db-creds-2024 names a secret, AES-256-GCM a cipher; see nameLike),
// and either shaped like a chosen password (see passwordLike), random-
// looking (see tokenLike), or at least minProseLen bytes of letters and
// digits with some entropy, as passphrases run together are
// (hunter2correcthorse).
func passwordValue(v string, quoted bool) bool {
	if len(v) < minPasswordLen || isCode(v, quoted) || isPlaceholder(v) || isReference(v) ||
		strings.Contains(v, "://") || versionRE.MatchString(v) || digestRE.MatchString(v) || nameLike(v) {
		return false
	}
	if passwordLike(v) || tokenLike(v) {
		return true
	}
	lower, upper, digit, _ := classes(v)
	return len(v) >= minProseLen && (lower || upper) && digit && entropy(v) >= minTokenEntropy
}

// minProseLen is the shortest value of letters and digits alone taken for
// a password in prose.
const minProseLen = 12

var versionRE = regexp.MustCompile(`^[vV]?[0-9]+(?:\.[0-9]+)+(?:[-+][0-9A-Za-z.\-+]*)?$`)

// nameLike reports names such as db-creds-2024, etcd3-cluster, AES-256-GCM,
// HMAC-SHA256 or 2FA-protected: parts joined by - _ or ., each with its
// letters in one case. Chosen passwords with separators mix case within a
// part (Blue-Otter-42, Xq7-rT2k).
func nameLike(v string) bool {
	if strings.Trim(v, identChars+"-.") != "" || !strings.ContainsAny(v, "-_.") {
		return false
	}
	for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		if !oneCase(part) {
			return false
		}
	}
	return true
}

// digestRE matches a digest named by its algorithm (sha256:e3b0…), which
// identifies content rather than unlocking anything.
var digestRE = regexp.MustCompile(`^(?i:sha(?:1|224|256|384|512)|sha3-[0-9]+|md5|blake2[bs]?|blake3):[0-9a-fA-F]+$`)

// netrcPassword reports whether the keyword at p is the password token of a
// .netrc entry: "machine api.example.com login ada password …", on one line
// or with login on the line before.
func netrcPassword(text string, p, k int) bool {
	if !strings.EqualFold(text[p:p+k], "password") {
		return false
	}
	ls := max(0, p-maxName)
	if i := strings.LastIndexByte(text[ls:p], '\n'); i >= 0 {
		ls += i + 1
	}
	fields := strings.Fields(text[ls:p])
	if len(fields) == 0 && ls > 0 {
		// The password on a line of its own: look at the line before.
		prev := strings.LastIndexByte(text[:ls-1], '\n') + 1
		fields = strings.Fields(text[prev : ls-1])
	}
	n := len(fields)
	return n >= 2 && fields[n-2] == "login" || n >= 2 && (fields[0] == "machine" || fields[0] == "default")
}

// appPassword reports an app password at i, as Google and Apple show
// them: four groups of four random lower-case letters, joined by blanks or
// hyphens, and returns its end. Groups that are words ("must have more
// than") make a sentence, not a password: two are enough to say so.
func appPassword(text string, i int) (int, bool) {
	if i+19 > len(text) {
		return 0, false
	}
	sep := text[i+4]
	if sep != ' ' && sep != '-' {
		return 0, false
	}
	words := 0
	for g := 0; g < 4; g++ {
		s := text[i+5*g : i+5*g+4]
		for j := 0; j < 4; j++ {
			if s[j] < 'a' || s[j] > 'z' {
				return 0, false
			}
		}
		if g < 3 && text[i+5*g+4] != sep {
			return 0, false
		}
		if commonWord(s) {
			words++
		}
	}
	if i+19 < len(text) && (wordByte(text[i+19]) || text[i+19] == '-') || words >= 2 || isPlaceholder(text[i:i+19]) {
		return 0, false
	}
	return i + 19, true
}

// commonWord reports a four-letter English word: one of the BIP 39 list
// or of commonWords4.
func commonWord(s string) bool {
	if bip39.Contains(s) {
		return true
	}
	return strings.Contains(commonWords4, " "+s+" ")
}

// commonWords4 are frequent four-letter words that the BIP 39 list lacks.
const commonWords4 = " that with have from they been were what when your them than then some only into must more most much such many also very just like make made need know here well will each does done both back down even over same sure used uses user work year gets goes went came come took take said says seen show tell told want wait keep kept give gave find feel felt left last long look less mean next once part plan read real rest role runs sent sets side stop stay team test text till turn type unit upon view week word auth code data file host item link mail node port root sign site sync task days ones into only this your yours ours hers mine whom whose which where there these those their about would could should shall might ever else away onto "
