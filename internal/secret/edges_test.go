package secret

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/miramem/mira/internal/secret/bip39"
	"github.com/miramem/mira/internal/secret/secrettest"
)

// rulesFound returns the rule ids of text's findings.
func rulesFound(text string) []string {
	var ids []string
	for _, f := range Scan(text) {
		ids = append(ids, f.Rule)
	}
	return ids
}

// wantRules checks that text gives exactly the findings of the rules named.
func wantRules(t *testing.T, text string, want ...string) {
	t.Helper()
	if got := rulesFound(text); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Scan(%q) found %q, want %q", text, got, want)
	}
}

// Entropy thresholds hold at their exact value: eight characters, each as
// frequent, make exactly 3 bits per byte, which passes a minimum of 3;
// one character fewer does not.
func TestEntropyAtThreshold(t *testing.T) {
	const even = "Kq7Zp2Wx" // eight distinct characters
	if e := entropy(even); e != 3 {
		t.Fatalf("entropy(%q) = %v, want 3", even, e)
	}
	uneven := strings.Replace(even, "x", "K", 1)

	// A format token, checked as a whole.
	gl := "glpat-" + strings.Repeat("xyglpat-", 3) + "xy"
	if e := entropy(gl); e != 3 {
		t.Fatalf("entropy(%q) = %v, want 3", gl, e)
	}
	wantRules(t, "CI pushes with "+gl+" today", "gitlab-token")
	wantRules(t, "CI pushes with "+gl[:len(gl)-1]+"x today")

	// A key block, checked by its body.
	pem := func(body string) string {
		return "key:\n-----BEGIN PRIVATE KEY-----\n" + body + "\n-----END PRIVATE KEY-----\n"
	}
	wantRules(t, pem(strings.Repeat(even, 4)), "private-key")
	wantRules(t, pem(strings.Repeat(uneven, 4)))

	// An AWS secret key, whose shape is otherwise fixed.
	wantRules(t, "aws_secret_access_key = "+strings.Repeat(even, 5), "aws-secret-access-key")
}

// A key block is shown as its header and its masked body; Redact puts
// that in place of the header through the body.
func TestKeyBlockRedaction(t *testing.T) {
	body := strings.Repeat("Kq7Zp2Wx", 8)
	text := "key:\n-----BEGIN RSA PRIVATE KEY-----\n" + body + "\n-----END RSA PRIVATE KEY-----\n"
	fs := Scan(text)
	const red = "-----BEGIN RSA PRIVATE KEY----- Kq7Z****************p2Wx"
	if len(fs) != 1 || fs[0].Redacted != red || fs[0].Line != 2 || fs[0].Column != 1 {
		t.Fatalf("Scan = %+v, want one finding at 2:1 shown as %q", fs, red)
	}
	if got, want := Redact(text), "key:\n"+red+"\n-----END RSA PRIVATE KEY-----\n"; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
}

// A token must stand alone: a letter, digit or underscore on either side,
// including the first and last of each range, makes it part of a longer
// word.
func TestTokenStandsAlone(t *testing.T) {
	akia := "AKIA" + fake(base32, 16, 1)
	for _, c := range "azAZ09_" {
		wantRules(t, "id "+string(c)+akia+" here")
		wantRules(t, "id "+akia+string(c)+" here")
	}
	for _, c := range "-.:/(" {
		wantRules(t, "id "+string(c)+akia+" here", "aws-access-key-id")
	}
}

// An assigned name is read up to maxName bytes either side of its keyword;
// a longer run of name bytes is not taken for a name.
func TestAssignmentNameLength(t *testing.T) {
	const pw = "=Tr0ub4dor&3xK9!"
	before := func(n int) string { return "set " + strings.Repeat("x", n-1) + "_password" + pw }
	wantRules(t, before(maxName), "generic-assignment")
	wantRules(t, before(maxName+1))
	after := func(n int) string { return "set password_" + strings.Repeat("x", n-len("password_")) + pw }
	wantRules(t, after(maxName), "generic-assignment")
	wantRules(t, after(maxName+1))
	// Far into a text, a name still reads past its keyword.
	wantRules(t, strings.Repeat("filler ", 60)+"db_password_prod = Tr0ub4dor&3xK9!", "generic-assignment")
}

// A name starts like an identifier: leading dashes and dots are not part
// of it, as in command-line flags.
func TestAssignmentFlagName(t *testing.T) {
	fs := Scan("myapp --password=Tr0ub4dor&3xK9 -h db")
	if len(fs) != 1 || fs[0].Rule != "generic-assignment" || fs[0].Column != 18 {
		t.Errorf("Scan = %+v, want generic-assignment at column 18", fs)
	}
	wantRules(t, "cfg .token = "+fake(alnum, 32, 3), "generic-assignment")
	wantRules(t, "--password=Tr0ub4dor&3xK9", "generic-assignment")
}

// A double-quoted value may hold escaped quotes; a backslash does not
// carry a value past the end of its line or of the text.
func TestQuotedValueEscapes(t *testing.T) {
	text := `{"password": "Tr0ub\"4dor&3xK9"}`
	if got, want := Redact(text), `{"password": "Tr0**********xK9"}`; got != want {
		t.Errorf("Redact(%q) = %q, want %q", text, got, want)
	}
	wantRules(t, "{\"password\": \"Tr0ub4dor&3xK9\\\nmore\"}")
	wantRules(t, `password: "Tr0ub4dor&3xK9\`)
	wantRules(t, `password: 'Tr0ub\'4dor&3xK9'`)
}

// A value that repeats its name, down to three letters, is a stand-in.
func TestValueRepeatsShortName(t *testing.T) {
	wantRules(t, `{"pwd": "pwd#Tr0ub4dor"}`)
	wantRules(t, `{"pwd": "Tr0ub4dor#xK9"}`, "generic-assignment")
}

// Basic credentials are judged by their decoded password, however short,
// as long as they decode to printable text; space and tilde are printable.
func TestBasicCredentials(t *testing.T) {
	basic := func(s string) string {
		return "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(s))
	}
	wantRules(t, basic("ab:Xy 9~"), "authorization-header")
	wantRules(t, basic("ab:Xy\x7f9~"))
	wantRules(t, basic("ab:Xy\x1f9~"))
	wantRules(t, basic("ab:ab"))
}

// A URL's user and password are compared and judged once unescaped.
func TestURLPasswordUnescaped(t *testing.T) {
	wantRules(t, "postgres://app:%24%7BDB_PASS%7D@db:5432/app")
	wantRules(t, "ftp://anonymous%40mira.dev:anonymous%40mira.dev@ftp.mira.dev/pub")
	wantRules(t, "postgres://app:Tr0ub%264dor@db:5432/app", "url-password")
	// In Markdown italics the scheme still starts at a letter.
	wantRules(t, "_postgres://admin:Tr0ub4dor&3@db.internal/app_", "url-password")
}

// wordy judges a value by where its capitals, lower-case letters and
// digits fall, not by which they are: the letters at the ends of the
// alphabet and the digits 0 and 9 count like any other.
func TestWordyIgnoresWhichLetters(t *testing.T) {
	variants := []*strings.Replacer{
		strings.NewReplacer("M", "A"), strings.NewReplacer("M", "Z"),
		strings.NewReplacer("m", "a"), strings.NewReplacer("m", "z"),
		strings.NewReplacer("5", "0"), strings.NewReplacer("5", "9"),
	}
	for seed := uint64(0); seed < 400; seed++ {
		alphabet := "MMMmmm5-"
		if seed%2 == 0 {
			alphabet = "MMmmmm--" // no digits: the case pattern decides
		}
		v := fake(alphabet, 8+int(seed%17), seed)
		want := wordy(v)
		for _, r := range variants {
			if w := r.Replace(v); wordy(w) != want {
				t.Fatalf("wordy(%q) = %v but wordy(%q) = %v", v, want, w, !want)
			}
		}
	}
}

// wordy's thresholds hold at their exact values: a fifth of the letters
// in capitals, 85% in capitals, and case changing at a quarter of the
// pairs are all still random enough.
func TestWordyAtThresholds(t *testing.T) {
	for _, v := range []string{
		"AbcdeFghij",           // 2 capitals of 10 letters
		"ABCDEaFGHIJbKLMNOcPQ", // 17 of 20
		"abcdEFghi",            // 2 changes of case in 8 pairs
	} {
		if wordy(v) {
			t.Errorf("wordy(%q) = true, want false", v)
		}
	}
	for _, v := range []string{"AbcdefGhijk", "ABCDEaFGHIJKLMNOPQRSbT", "abcdeFGhij"} {
		if !wordy(v) {
			t.Errorf("wordy(%q) = false, want true", v)
		}
	}
}

// Values with no recognisable format must be long and random enough: the
// minimum entropy is 2.5 bits below 24 bytes and 3 from 24 on, and is
// reached at its exact value; a chosen password needs 8 bytes.
func TestTokenAndPasswordEdges(t *testing.T) {
	six := "Kq7Zp2" // log2(6) = 2.58 bits when evenly used
	tests := []struct {
		v         string
		token, pw bool
	}{
		{strings.Repeat(six, 4)[:23], true, true},   // 23 bytes: 2.5 is enough
		{strings.Repeat(six, 4), false, true},       // 24 bytes: 3 is needed
		{strings.Repeat("Kq7Zp2Wx", 3), true, true}, // 24 bytes of exactly 3 bits
		{"Tr0u&4d!", false, true},
		{"Tr0u&4d", false, false},
	}
	for _, tc := range tests {
		if got := tokenLike(tc.v); got != tc.token {
			t.Errorf("tokenLike(%q) = %v, want %v", tc.v, got, tc.token)
		}
		if got := passwordLike(tc.v); got != tc.pw {
			t.Errorf("passwordLike(%q) = %v, want %v", tc.v, got, tc.pw)
		}
	}
}

func TestIdentStart(t *testing.T) {
	for _, c := range []byte("azAZ_") {
		if !identStart(c) {
			t.Errorf("identStart(%q) = false", c)
		}
	}
	for _, c := range []byte("09@[`{-.$") {
		if identStart(c) {
			t.Errorf("identStart(%q) = true", c)
		}
	}
}

func TestIsReference(t *testing.T) {
	yes := []string{"/run/secrets/db", "/home/me/token", "/etc/ssl/key.pem", "/keys/api.txt", "~/.netrc", "./token.txt",
		"../token", "op://vault/item/password", "arn:aws:secretsmanager:eu-west-1:1:secret:db", "vault:secret/data/db",
		`C:\keys\api.txt`, "C:/keys/api.txt"}
	no := []string{"Tr0ub4dor&3", "/F7tts3KwKSdQpL2", "/abc$def.txt", "C:", "C:x", "x:", fake(alnum, 32, 1)}
	for _, v := range yes {
		if !isReference(v) {
			t.Errorf("isReference(%q) = false, want true", v)
		}
	}
	for _, v := range no {
		if isReference(v) {
			t.Errorf("isReference(%q) = true, want false", v)
		}
	}
}

// A Discord bot token's first part must decode to a user id: cut short
// of valid base64, it is not one, even if most of it decodes to digits.
func TestDiscordIDMustDecode(t *testing.T) {
	id := base64.RawStdEncoding.EncodeToString([]byte("45" + fake("0123456789", 16, 66)))
	rest := "." + fake(b64url, 6, 67) + "." + fake(b64url, 38, 68)
	wantRules(t, "bot "+id+rest, "discord-bot-token")
	wantRules(t, "bot "+id+"M"+rest)
}

// A Telegram bot id has at least 5 digits.
func TestTelegramIDLength(t *testing.T) {
	secret := ":AA" + fake(b64url, 33, 70)
	wantRules(t, "bot: 51234"+secret, "telegram-bot-token")
	wantRules(t, "bot: 5123"+secret)
}

// identWord and eachWord, like wordy, go by case and not by which letter:
// A, Z, a and z split and count like M and m.
func TestIdentWordsIgnoreWhichLetters(t *testing.T) {
	words := func(s string) []int {
		var lens []int
		eachWord(s, true, func(w string) bool {
			lens = append(lens, len(w))
			return true
		})
		return lens
	}
	for seed := uint64(0); seed < 400; seed++ {
		v := "M" + fake("MMmmmmm5_", 4+int(seed%12), seed)
		for _, r := range []*strings.Replacer{
			strings.NewReplacer("M", "A"), strings.NewReplacer("M", "Z"),
			strings.NewReplacer("m", "a"), strings.NewReplacer("m", "z"),
		} {
			w := r.Replace(v)
			if identWord(w) != identWord(v) {
				t.Fatalf("identWord(%q) = %v but identWord(%q) = %v", v, identWord(v), w, identWord(w))
			}
			if a, b := words(v), words(w); !slices.Equal(a, b) {
				t.Fatalf("eachWord splits %q into words of %v letters but %q into %v", v, a, w, b)
			}
		}
	}
}

// Passwords in sentences: the words and punctuation around the keyword at
// the edges of what the rule reads.
func TestProseEdges(t *testing.T) {
	const pw = "Tr0ub4dor&3xK9"
	tests := []struct {
		text  string
		found bool
	}{
		{"(the prod password) is " + pw, true},
		{"the password for a b c d e f is " + pw, true}, // six words of phrase
		{"the password for a b c d e f g is " + pw, false},
		{"the password for prod-db is " + pw, true},
		{"the password for prod\tis " + pw, true},
		{"the password for prod", false},
		{"Fields (user:, password:)", false},
		{"the password was: " + pw, true},
		{"the password is\t" + pw, true},
		{"if pw==" + pw, false}, // comparisons
		{"if pw=~" + pw, false},
		{"Set a password for the app. Is " + pw + " the one we shared?", false},
		{"machine api.mira.dev login ada password " + pw, true},
		{"machine api.mira.dev login ada password\"" + pw + "\"", false},
		// A .netrc entry over several lines, and one that only looks like it.
		{"machine api.mira.dev\nlogin ada\npassword " + pw, true},
		{"default settings below\nproxy password " + pw, false},
		// The shortest values taken: a chosen password of 8 bytes, and 12
		// letters and digits with 3 bits of entropy or more.
		{"the password is Tr0u&4d!", true},
		{"the password is Tr0u&4d", false},
		{"the password is hunter2horse", true},
		{"the password is hunter2hors", false},
		{"the password is hunter2hhhhh", false},
	}
	for _, tc := range tests {
		want := []string{}
		if tc.found {
			want = append(want, "prose-password")
		}
		wantRules(t, tc.text, want...)
	}
	// The punctuation that ends a sentence or clause is not part of the
	// value.
	for _, end := range []string{".", ",", ";", ":", ")", ".)"} {
		text := "the password is " + pw + end
		if got, want := Redact(text), "the password is Tr**********K9"+end; got != want {
			t.Errorf("Redact(%q) = %q, want %q", text, got, want)
		}
	}
}

// A URL's scheme starts at its first letter: a diff's "+" or "-" or a
// list's "1." before it does not hide the password.
func TestURLSchemeStartsAtLetter(t *testing.T) {
	for _, before := range []string{"", "+", "-", "1.", "2+", "x-", "see:", "_"} {
		wantRules(t, before+"postgres://admin:Tr0ub4dor&3@db.internal/app", "url-password")
	}
	for _, text := range []string{"://admin:Tr0ub4dor&3@db.internal/app", "12://admin:Tr0ub4dor&3@db.internal/app", "+-.://admin:Tr0ub4dor&3@db",
		"see 12://admin:Tr0ub4dor&3@db.internal/app"} {
		wantRules(t, text)
	}
}

// A secret that directly follows another, with nothing between, is found
// and redacted too.
func TestAdjacentSecrets(t *testing.T) {
	akia := "AKIA" + fake(base32, 16, 1)
	key := fake(b64, 86, 10) + "=="
	text := "AccountKey=" + key + akia
	wantRules(t, text, "azure-storage-key", "aws-access-key-id")
	got := Redact(text)
	if strings.Contains(got, key[4:82]) || strings.Contains(got, akia[4:16]) {
		t.Errorf("Redact(%q) = %q, keeps a secret", text, got)
	}
	// The other way round: the rule checked first finds the first secret.
	gcp := "AIza" + fake(b64url, 34, 7) + "-"
	ghp := "ghp_" + fake(alnum, 36, 62)
	text = gcp + ghp
	wantRules(t, text, "gcp-api-key", "github-token")
	if got := Redact(text); strings.Contains(got, gcp[4:30]) || strings.Contains(got, ghp[4:30]) {
		t.Errorf("Redact(%q) = %q, keeps a secret", text, got)
	}
}

// Keywords in other scripts are looked for apart from the others, in
// text that is not ASCII, with a capital where a sentence starts one.
func TestNonASCIIKeywords(t *testing.T) {
	const pw = "Tr0ub4dor&3xK9"
	for _, text := range []string{
		"contraseña: " + pw, "Contraseña: " + pw, "la contraseña es " + pw, "пароль: " + pw, "Пароль: " + pw,
		"密码：" + pw, "密码是" + pw, "パスワード: " + pw, "パスワードは " + pw, "Lösenord: " + pw, "— hasło: " + pw,
	} {
		wantRules(t, text, "prose-password")
	}
	for _, text := range []string{"la contraseña es segura", "пароль должен содержать цифры", "密码长度至少12位"} {
		wantRules(t, text)
	}
}

// Wallet keys and recovery phrases are recognised by their checksums: the
// same shapes with one character or word changed are not keys.
func TestWalletChecksums(t *testing.T) {
	var phrase, wif string
	for _, s := range secrettest.Secrets() {
		switch s.Name {
		case "BIP39 phrase of 12 words":
			phrase = strings.TrimPrefix(s.Text, "seed: ")
		case "WIF private key, compressed":
			wif = s.Text
		}
	}
	wantRules(t, phrase, "seed-phrase")
	words := strings.Fields(phrase)
	for _, w := range bip39.Words()[:64] {
		changed := append(append([]string{}, words[:11]...), w)
		if !bip39.Valid(changed) {
			wantRules(t, strings.Join(changed, " "))
			break
		}
	}
	wantRules(t, strings.Join(words[:11], " ")) // eleven words
	wantRules(t, wif, "wallet-private-key")
	c := byte('A')
	if wif[20] == 'A' {
		c = 'B'
	}
	wantRules(t, wif[:20]+string(c)+wif[21:])
}

// A line break escaped as \n, alone or at the end of the text, is not a
// word: phrases and blobs around it are read as around a newline.
func TestEscapedBreakAlone(t *testing.T) {
	for _, text := range []string{`\n`, `a \n`, `abandon \n`, `x\n\n`, `\n\n\n`} {
		wantRules(t, text)
	}
}

// A phrase escaped as JSON escapes its line breaks: \n is not a word.
func TestSeedPhraseEscaped(t *testing.T) {
	var words []string
	for _, s := range secrettest.Secrets() {
		if s.Name == "BIP39 phrase of 12 words" {
			words = strings.Fields(strings.TrimPrefix(s.Text, "seed: "))
		}
	}
	var numbered []string
	for i, w := range words {
		numbered = append(numbered, strconv.Itoa(i+1)+". "+w)
	}
	for _, sep := range []string{`\n`, "\\n ", " \\n"} {
		wantRules(t, strings.Join(words, sep), "seed-phrase")
		wantRules(t, strings.Join(numbered, sep)+sep, "seed-phrase")
	}
}
