package tools

import (
	"strings"
	"testing"

	"github.com/miramem/mira/internal/secret"
)

func TestRedact(t *testing.T) {
	aws := fakeAWSKey(1)
	awsSecret := randomish(b64, 40, 2)
	ghp := "ghp_" + randomish(alnum, 36, 3)
	long := randomish(alnum, 60, 4) // capped mask: the length is not in it
	pem := fakePEM(4, 5)
	body2 := randomish(b64, 64, 6) + "\n" + randomish(b64, 64, 7)
	tests := []struct {
		name, in, want string
	}{
		{"nothing", "plain text, a hash 3f786850e387550fdab836ed7e6dc881de23001b\n", "plain text, a hash 3f786850e387550fdab836ed7e6dc881de23001b\n"},
		{"aws key id", "key: " + aws + " (rotated)", "key: [REDACTED:aws-access-key-id] (rotated)"},
		{"aws key at the end", "id=" + aws, "id=[REDACTED:aws-access-key-id]"},
		{"aws secret", "[default]\naws_secret_access_key = " + awsSecret + "\nregion = x\n",
			"[default]\naws_secret_access_key = [REDACTED:aws-secret-access-key]\nregion = x\n"},
		{"github token in a sentence", "use " + ghp + ", then push", "use [REDACTED:github-token], then push"},
		{"two on a line", aws + " " + ghp, "[REDACTED:aws-access-key-id] [REDACTED:github-token]"},
		{"a long token whose last characters occur inside it", "export API_TOKEN=" + randomish(alnum, 30, 8) + "Q7q7" + randomish(alnum, 12, 9) + "Q7q7 && run",
			"export API_TOKEN=[REDACTED:generic-assignment] && run"},
		{"after blank lines", "intro\n\n\ntoken " + ghp + "\n", "intro\n\n\ntoken [REDACTED:github-token]\n"},
		{"quoted long token", `api_token: "` + long + `" # prod`, `api_token: "[REDACTED:generic-assignment]" # prod`},
		{"password with spaces", `password = "Tr0ub4dor&3 horse staple"` + "\n", `password = "[REDACTED:generic-assignment]"` + "\n"},
		{"url password", "postgres://app:" + "S3cr3tPa55w0rd" + "@db:5432/x", "postgres://app:[REDACTED:url-password]@db:5432/x"},
		{"key block keeps its lines", "before\n" + pem + "after\n", "before\n[REDACTED:private-key]\n\n\n\n\n\nafter\n"},
		{"key block without an end", "x\n" + strings.TrimSuffix(pem, "-----END RSA PRIVATE KEY-----\n") + "\nnext paragraph\n",
			"x\n[REDACTED:private-key]\n\n\n\n\n\nnext paragraph\n"},
		{"key block with headers, no end", "x\n-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B\n\n" + body2 + "\n\nnext\n",
			"x\n[REDACTED:private-key]\n\n\n\n\n\n\nnext\n"},
		{"service account key", `{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\n` + strings.ReplaceAll(body2, "\n", `\n`) + `\n-----END PRIVATE KEY-----\n", "client_email": "a@b.iam"}`,
			`{"type": "service_account", "private_key": "[REDACTED:gcp-service-account-key]\n", "client_email": "a@b.iam"}`},
		{"cut service account key", `{"private_key": "-----BEGIN PRIVATE KEY-----\n` + strings.ReplaceAll(body2, "\n", `\n`) + `", "x": 1}`,
			`{"private_key": "[REDACTED:gcp-service-account-key]", "x": 1}`},
		{"putty key", "PuTTY-User-Key-File-2: ssh-rsa\nPrivate-Lines: 2\n" + body2 + "\nPrivate-MAC: 0a1b\n",
			"PuTTY-User-Key-File-2: ssh-rsa\n[REDACTED:putty-private-key]\n\n\nPrivate-MAC: 0a1b\n"},
		{"putty key, a line after its count", "PuTTY-User-Key-File-2: ssh-rsa\nPrivate-Lines: 1\n" + randomish(b64, 64, 10) + "\nQUJD\nPrivate-MAC: 0a1b\n",
			"PuTTY-User-Key-File-2: ssh-rsa\n[REDACTED:putty-private-key]\n\nQUJD\nPrivate-MAC: 0a1b\n"},
		{"key block at the very end", "x\n-----BEGIN RSA PRIVATE KEY-----\n" + randomish(b64, 64, 11), "x\n[REDACTED:private-key]\n"},
		{"service account key cut before its quote", `{"private_key": "-----BEGIN PRIVATE KEY-----\n` + strings.ReplaceAll(body2, "\n", `\n`),
			`{"private_key": "[REDACTED:gcp-service-account-key]`},
		{"non-ASCII around", "clé « " + aws + " » fin", "clé « [REDACTED:aws-access-key-id] » fin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Redact(tt.in)
			if got != tt.want {
				t.Errorf("Redact(%q)\n = %q\nwant %q", tt.in, got, tt.want)
			}
			if again := Redact(got); again != got {
				t.Errorf("Redact is not idempotent: %q then %q", got, again)
			}
			if f := secret.Scan(got); len(f) != 0 {
				t.Errorf("redacted text still has findings: %v", f)
			}
			if strings.Count(got, "\n") != strings.Count(tt.in, "\n") {
				t.Errorf("line count changed from %d to %d", strings.Count(tt.in, "\n"), strings.Count(got, "\n"))
			}
		})
	}
}

// maskEnd must find the exact end of secrets of every length, on either
// side of the length where the scanner's mask stops growing.
func TestRedactEveryLength(t *testing.T) {
	// Short secrets too, where the mask keeps no character or one: a
	// URL's password of 6 to 15 characters.
	short := 0
	for n := 6; n < 16; n++ {
		pw := randomish(alnum, n, uint64(100+n))
		in := "postgres://app:" + pw + "@db:5432/x"
		if len(secret.Scan(in)) == 0 {
			continue
		}
		short++
		if got, want := Redact(in), "postgres://app:[REDACTED:url-password]@db:5432/x"; got != want {
			t.Errorf("password of %d: Redact = %q, want %q", n, got, want)
		}
	}
	if short < 5 {
		t.Errorf("only %d short passwords were found by the scanner; the cases miss the short masks", short)
	}

	for n := 16; n <= 80; n++ {
		tok := randomish(alnum, n, uint64(n))
		in := "export API_TOKEN=" + tok + " && run"
		want := "export API_TOKEN=[REDACTED:generic-assignment] && run"
		if len(secret.Scan(in)) == 0 {
			continue // too regular to count as a token
		}
		if got := Redact(in); got != want {
			t.Errorf("length %d: Redact = %q, want %q", n, got, want)
		}
	}
}

func TestRedactedToolResults(t *testing.T) {
	f := newFixture(t)
	aws := fakeAWSKey(21)
	res := f.call(t, "bash", obj{"command": "echo AWS_ACCESS_KEY_ID=" + aws})
	if strings.Contains(res.Content, aws) {
		t.Errorf("bash result shows the key: %s", res.Content)
	}
	if res.Content != "AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key-id]\n[exit code 0]" {
		t.Errorf("bash result = %q", res.Content)
	}
	// A key block read from the middle is still hidden.
	f.write(t, "key.pem", "# deploy key\n"+fakePEM(6, 8))
	res = f.call(t, "read_file", obj{"path": "key.pem", "offset": 4, "limit": 2})
	want := "     4\t\n     5\t\n[Lines 4-5 of 9. To read on, call read_file with offset 6.]"
	if res.Content != want {
		t.Errorf("read_file in a key block = %q, want %q", res.Content, want)
	}
}

// When the mask gives no end, the secret ends with its token.
func TestSecretEndFallback(t *testing.T) {
	s := "token=abc123def456 rest"
	if got := secretEnd(s, 6, secret.Finding{Rule: "x", Redacted: "does not fit"}); s[6:got] != "abc123def456" {
		t.Errorf("secretEnd fallback = %q", s[6:got])
	}
	// A token that runs to the end of the text ends there; one that
	// starts on a delimiter still covers that character.
	for _, tc := range []struct {
		s      string
		lo, hi int
	}{{"token=abc123", 6, 12}, {`x "y`, 2, 3}, {"a b", 1, 2}} {
		if got := tokenEnd(tc.s, tc.lo); got != tc.hi {
			t.Errorf("tokenEnd(%q, %d) = %d, want %d", tc.s, tc.lo, got, tc.hi)
		}
	}
}
