package secret

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/miramem/mira/internal/secret/secrettest"
)

// The alphabets and the generator of fake secrets are secrettest's: test
// secrets are built at run time so that no token-shaped literal sits in
// the source for push protection or other scanners to trip over.
const (
	alnum, b64, b64url = secrettest.Alnum, secrettest.B64, secrettest.B64URL
	hexlc, base32      = secrettest.HexLower, secrettest.Base32
	bech32             = secrettest.Bech32
)

var fake = secrettest.Fake

// pemBody is a plausible base64 key body of the given number of 64-column lines.
func pemBody(lines int, seed uint64, sep string) string {
	var sb strings.Builder
	for i := 0; i < lines; i++ {
		sb.WriteString(fake(b64, 64, seed+uint64(i)))
		sb.WriteString(sep)
	}
	return sb.String()
}

// pos is what the tests compare of a Finding: Redacted is checked separately.
type pos struct {
	Rule         string
	Line, Column int
}

func positions(fs []Finding) []pos {
	var out []pos
	for _, f := range fs {
		out = append(out, pos{f.Rule, f.Line, f.Column})
	}
	return out
}

type secretCase struct {
	name string
	text string
	want []pos
}

func secretCases() []secretCase {
	akia := "AKIA" + fake(base32, 16, 1)
	awsSecret := fake(b64, 40, 2)
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." +
		"eyJzdWIiOiJ1c2VyLTQyIiwiZXhwIjoxOTAwMDAwMDAwfQ." + fake(b64url, 43, 3)
	basic := base64.StdEncoding.EncodeToString([]byte("deploy:Tr0ub4dor&3xK9!"))
	return []secretCase{
		{
			name: "aws access key id in credentials file",
			text: "creds for the staging box:\naws_access_key_id = " + akia + "\n",
			want: []pos{{"aws-access-key-id", 2, 21}},
		},
		{
			name: "aws temporary key id in JSON",
			text: `{"AccessKeyId": "ASIA` + fake(base32, 16, 4) + `", "Expiration": "2025-01-01"}`,
			want: []pos{{"aws-access-key-id", 1, 18}},
		},
		{
			name: "aws credentials file with both keys",
			text: "[default]\naws_access_key_id=" + akia + "\naws_secret_access_key = " + awsSecret + "\nregion = eu-west-1\n",
			want: []pos{{"aws-access-key-id", 2, 19}, {"aws-secret-access-key", 3, 25}},
		},
		{
			name: "aws secret in JSON",
			text: `{"SecretAccessKey": "` + awsSecret + `"}`,
			want: []pos{{"aws-secret-access-key", 1, 22}},
		},
		{
			name: "gcp service account JSON",
			text: "{\n  \"type\": \"service_account\",\n  \"private_key_id\": \"" + fake(hexlc, 40, 5) + "\",\n" +
				`  "private_key": "-----BEGIN PRIVATE KEY-----\n` + pemBody(3, 6, `\n`) + `-----END PRIVATE KEY-----\n",` + "\n" +
				"  \"client_email\": \"svc@proj.iam.gserviceaccount.com\"\n}\n",
			want: []pos{{"gcp-service-account-key", 4, 19}},
		},
		{
			name: "google api key in a URL",
			text: "curl 'https://maps.googleapis.com/maps/api/geocode/json?address=x&key=AIza" + fake(b64url, 35, 7) + "'",
			want: []pos{{"gcp-api-key", 1, 71}},
		},
		{
			name: "google oauth client secret",
			text: `{"installed":{"client_id":"1234-abc.apps.googleusercontent.com","client_secret":"GOCSPX-` + fake(b64url, 28, 8) + `"}}`,
			want: []pos{{"google-oauth-client-secret", 1, 82}},
		},
		{
			name: "google oauth access token beats the header rule",
			text: "Authorization: Bearer ya29." + fake(b64url, 120, 9),
			want: []pos{{"google-oauth-token", 1, 23}},
		},
		{
			name: "azure storage connection string",
			text: "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" +
				fake(b64, 86, 10) + "==;EndpointSuffix=core.windows.net",
			want: []pos{{"azure-storage-key", 1, 92}},
		},
		{
			name: "azure SAS URL",
			text: "https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2030-01-01T00:00:00Z&spr=https&sig=" +
				fake(alnum, 40, 11) + "%3D",
			want: []pos{{"azure-sas-token", 1, 112}},
		},
		{
			name: "azure client secret",
			text: "AZURE_CLIENT_SECRET: " + fake(alnum, 3, 12) + "8Q~" + fake(b64url, 34, 13),
			want: []pos{{"azure-client-secret", 1, 22}},
		},
		{
			name: "github classic token exported",
			text: "export GITHUB_TOKEN=ghp_" + fake(alnum, 36, 14),
			want: []pos{{"github-token", 1, 21}},
		},
		{
			name: "github fine-grained token",
			text: "token: github_pat_" + fake(alnum, 22, 15) + "_" + fake(alnum, 59, 16),
			want: []pos{{"github-token", 1, 8}},
		},
		{
			name: "github installation token in a clone URL",
			text: "git clone https://x-access-token:ghs_" + fake(alnum, 36, 17) + "@github.com/org/repo.git",
			want: []pos{{"github-token", 1, 34}},
		},
		{
			name: "gitlab personal access token",
			text: "Use glpat-" + fake(b64url, 20, 18) + " for the API.",
			want: []pos{{"gitlab-token", 1, 5}},
		},
		{
			name: "gitlab runner token",
			text: "runners:\n  token = \"glrt-" + fake(b64url, 20, 19) + "\"",
			want: []pos{{"gitlab-token", 2, 12}},
		},
		{
			name: "slack bot token",
			text: "SLACK_BOT_TOKEN=xoxb-1234567890123-1234567890123-" + fake(alnum, 24, 20),
			want: []pos{{"slack-token", 1, 17}},
		},
		{
			name: "slack user token",
			text: "the old one was xoxp-1234567890-1234567890-1234567890123-" + fake(hexlc, 32, 21),
			want: []pos{{"slack-token", 1, 17}},
		},
		{
			name: "slack app token",
			text: "app token xapp-1-A0" + fake("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 9, 22) + "-1234567890123-" + fake(hexlc, 64, 23),
			want: []pos{{"slack-token", 1, 11}},
		},
		{
			name: "slack webhook",
			text: "post alerts to https://hooks.slack.com/services/T0" + fake("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 8, 24) +
				"/B0" + fake("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 8, 25) + "/" + fake(alnum, 24, 26),
			want: []pos{{"slack-webhook-url", 1, 49}},
		},
		{
			name: "discord webhook",
			text: "https://discord.com/api/webhooks/123456789012345678/" + fake(b64url, 68, 27),
			want: []pos{{"discord-webhook-url", 1, 34}},
		},
		{
			name: "openai project key",
			text: "OPENAI_API_KEY=\"sk-proj-" + fake(b64url, 120, 28) + "\"",
			want: []pos{{"openai-api-key", 1, 17}},
		},
		{
			name: "openai legacy key",
			text: "client = OpenAI(api_key='sk-" + fake(alnum, 20, 29) + "T3BlbkFJ" + fake(alnum, 20, 30) + "')",
			want: []pos{{"openai-api-key", 1, 26}},
		},
		{
			name: "anthropic key",
			text: "ANTHROPIC_API_KEY=sk-ant-api03-" + fake(b64url, 93, 31) + "AA",
			want: []pos{{"anthropic-api-key", 1, 19}},
		},
		{
			name: "stripe live secret key",
			text: "Stripe.api_key = \"sk_live_" + fake(alnum, 99, 32) + "\"",
			want: []pos{{"stripe-secret-key", 1, 19}},
		},
		{
			name: "stripe restricted key",
			text: "* rk_live_" + fake(alnum, 24, 33),
			want: []pos{{"stripe-secret-key", 1, 3}},
		},
		{
			name: "stripe webhook secret",
			text: "STRIPE_WEBHOOK_SECRET=whsec_" + fake(alnum, 32, 34),
			want: []pos{{"stripe-webhook-secret", 1, 23}},
		},
		{
			name: "twilio api key",
			text: "twilio key SK" + fake(hexlc, 32, 35) + " (sid)",
			want: []pos{{"twilio-api-key", 1, 12}},
		},
		{
			name: "sendgrid key",
			text: "SENDGRID_API_KEY='SG." + fake(b64url, 22, 36) + "." + fake(b64url, 43, 37) + "'",
			want: []pos{{"sendgrid-api-key", 1, 19}},
		},
		{
			name: "npm token in .npmrc",
			text: "//registry.npmjs.org/:_authToken=npm_" + fake(alnum, 36, 38),
			want: []pos{{"npm-token", 1, 34}},
		},
		{
			name: "pypi token in .pypirc",
			text: "[pypi]\n  username = __token__\n  password = pypi-AgEIcHlwaS5vcmc" + fake(b64url, 120, 39) + "\n",
			want: []pos{{"pypi-token", 3, 14}},
		},
		{
			name: "hugging face token",
			text: "huggingface-cli login --token hf_" + fake("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", 34, 40),
			want: []pos{{"huggingface-token", 1, 31}},
		},
		{
			name: "digitalocean token",
			text: "doctl auth init -t dop_v1_" + fake(hexlc, 64, 41),
			want: []pos{{"digitalocean-token", 1, 20}},
		},
		{
			name: "shopify admin token",
			text: "X-Shopify-Access-Token: shpat_" + fake(hexlc, 32, 42),
			want: []pos{{"shopify-token", 1, 25}},
		},
		{
			name: "age key file",
			text: "# created: 2024-01-01T00:00:00Z\n# public key: age1" + strings.ToLower(fake(bech32, 58, 43)) +
				"\nAGE-SECRET-KEY-1" + fake(bech32, 58, 44) + "\n",
			want: []pos{{"age-secret-key", 3, 1}},
		},
		{
			name: "JWT beats the header rule",
			text: "curl -H 'Authorization: Bearer " + jwt + "' https://api.example.com/me",
			want: []pos{{"jwt", 1, 32}},
		},
		{
			name: "RSA private key",
			text: "key for the box:\n-----BEGIN RSA PRIVATE KEY-----\n" + pemBody(4, 45, "\n") + "-----END RSA PRIVATE KEY-----\n",
			want: []pos{{"private-key", 2, 1}},
		},
		{
			name: "OpenSSH private key in a Markdown code block",
			text: "Deploy key:\n\n    -----BEGIN OPENSSH PRIVATE KEY-----\n    " + fake(b64, 70, 46) + "\n    " + fake(b64, 70, 47) +
				"\n    -----END OPENSSH PRIVATE KEY-----\n",
			want: []pos{{"private-key", 3, 5}},
		},
		{
			name: "encrypted PEM with headers",
			text: "-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0123456789ABCDEF\n\n" +
				pemBody(2, 48, "\n") + "-----END EC PRIVATE KEY-----",
			want: []pos{{"private-key", 1, 1}},
		},
		{
			name: "PKCS#8 encrypted key",
			text: "-----BEGIN ENCRYPTED PRIVATE KEY-----\r\n" + pemBody(2, 49, "\r\n") + "-----END ENCRYPTED PRIVATE KEY-----\r\n",
			want: []pos{{"private-key", 1, 1}},
		},
		{
			name: "PGP private key block",
			text: "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n" + pemBody(3, 50, "\n") + "=abcd\n-----END PGP PRIVATE KEY BLOCK-----\n",
			want: []pos{{"private-key", 1, 1}},
		},
		{
			name: "DSA private key",
			text: "-----BEGIN DSA PRIVATE KEY-----\n" + pemBody(2, 51, "\n") + "-----END DSA PRIVATE KEY-----\n",
			want: []pos{{"private-key", 1, 1}},
		},
		{
			name: "SSH2 key with a comment header",
			text: "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: \"rsa-key-20240101\"\n" + pemBody(2, 64, "\n") +
				"---- END SSH2 ENCRYPTED PRIVATE KEY ----\n",
			want: []pos{{"private-key", 1, 1}},
		},
		{
			name: "private key escaped in JSON",
			text: `{"tls": {"key": "-----BEGIN EC PRIVATE KEY-----\n` + pemBody(2, 65, `\n`) + `-----END EC PRIVATE KEY-----\n"}}`,
			want: []pos{{"private-key", 1, 18}},
		},
		{
			name: "PuTTY key",
			text: "PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nComment: rsa-key\nPublic-Lines: 1\n" + fake(b64, 64, 52) +
				"\nPrivate-Lines: 2\n" + fake(b64, 64, 53) + "\n" + fake(b64, 20, 54) + "\n",
			want: []pos{{"putty-private-key", 6, 1}},
		},
		{
			name: "postgres URL with password",
			text: "DATABASE_URL=postgres://app:Xk9mQ2pL7vR4@db.internal:5432/app?sslmode=require",
			want: []pos{{"url-password", 1, 29}},
		},
		{
			name: "mongodb+srv URL with a short real password",
			text: "connect to mongodb+srv://admin:hunter2@cluster0.abcde.mongodb.net/test",
			want: []pos{{"url-password", 1, 32}},
		},
		{
			name: "redis URL with password only",
			text: "REDIS_URL: redis://:s3cr3tP4ss@cache:6379/0",
			want: []pos{{"url-password", 1, 21}},
		},
		{
			name: "exported token",
			text: "export TOKEN=" + fake(hexlc, 40, 63),
			want: []pos{{"generic-assignment", 1, 14}},
		},
		{
			name: "generic api key exported",
			text: "export ACME_API_KEY=" + fake(alnum, 32, 55),
			want: []pos{{"generic-assignment", 1, 21}},
		},
		{
			name: "password in YAML",
			text: "database:\n  host: db\n  password: Tr0ub4dor&3xK9!\n",
			want: []pos{{"generic-assignment", 3, 13}},
		},
		{
			name: "client_secret in JSON",
			text: `{"client_id": "my-app", "client_secret": "` + fake(b64url, 24, 56) + `"}`,
			want: []pos{{"generic-assignment", 1, 43}},
		},
		{
			name: "opaque bearer token",
			text: "GET /v1/items HTTP/1.1\nAuthorization: Bearer " + fake(alnum, 40, 57) + "\n",
			want: []pos{{"authorization-header", 2, 23}},
		},
		{
			name: "basic auth header",
			text: `"Authorization": "Basic ` + basic + `"`,
			want: []pos{{"authorization-header", 1, 25}},
		},
		{
			name: "dotenv password",
			text: "# local\nDB_USER=app\nDB_PASSWORD=Summer2024\n",
			want: []pos{{"generic-assignment", 3, 13}},
		},
		{
			name: "django secret key",
			text: "SECRET_KEY = 'django-insecure-" + fake(alnum, 40, 58) + "'",
			want: []pos{{"generic-assignment", 1, 15}},
		},
		{
			name: "Go struct literal",
			text: "cfg := Config{\n\tUser:     \"svc\",\n\tPassword: \"Tr0ub4dor&3xK9!\",\n}",
			want: []pos{{"generic-assignment", 3, 13}},
		},
		{
			name: "kubernetes secret data",
			text: "kind: Secret\ndata:\n  password: " + base64.StdEncoding.EncodeToString([]byte("Pr0d-db-2024!")) + "\n",
			want: []pos{{"generic-assignment", 3, 13}},
		},
		{
			name: "Markdown bold label",
			text: "**Password:** Tr0ub4dor&3xK9!",
			want: []pos{{"generic-assignment", 1, 15}},
		},
		{
			name: "label before the assignment",
			text: "Note: password: Tr0ub4dor&3xK9!",
			want: []pos{{"generic-assignment", 1, 17}},
		},
		{
			name: "index assignment",
			text: "config['password'] = 'Tr0ub4dor&3xK9!'",
			want: []pos{{"generic-assignment", 1, 23}},
		},
		{
			name: "API key header",
			text: "curl -H \"x-api-key: " + fake(hexlc, 32, 59) + "\" https://api.example.com",
			want: []pos{{"generic-assignment", 1, 21}},
		},
		{
			name: "several findings in order",
			text: "token=" + fake(alnum, 30, 60) + " and AKIA" + fake(base32, 16, 61) + "\nthen ghp_" + fake(alnum, 36, 62),
			want: []pos{{"generic-assignment", 1, 7}, {"aws-access-key-id", 1, 42}, {"github-token", 2, 6}},
		},
		{
			name: "discord bot token of a 2018 bot",
			text: "DISCORD_TOKEN: " + base64.RawStdEncoding.EncodeToString([]byte("45"+fake("0123456789", 16, 66))) +
				"." + fake(b64url, 6, 67) + "." + fake(b64url, 38, 68),
			want: []pos{{"discord-bot-token", 1, 16}},
		},
		{
			name: "telegram bot token",
			text: "bot: 5" + fake("0123456789", 9, 69) + ":AA" + fake(b64url, 33, 70),
			want: []pos{{"telegram-bot-token", 1, 6}},
		},
		{
			name: "netrc password on its own line",
			text: "machine api.example.com\n  login ada\n  password " + fake(alnum, 16, 71) + "\n",
			want: []pos{{"prose-password", 3, 12}},
		},
		{
			name: "password in a sentence",
			text: "fyi the password is hunter2correcthorse",
			want: []pos{{"prose-password", 1, 21}},
		},
		{
			name: "password for something in a sentence",
			text: "pw for prod db is S3cr3tP4ss!",
			want: []pos{{"prose-password", 1, 19}},
		},
		{
			name: "password after a colon and a phrase",
			text: "The root password for the NAS: Lx9#vQ2!pw",
			want: []pos{{"prose-password", 1, 32}},
		},
		{
			name: "password changed to",
			text: "Wi-Fi passphrase was changed to \"Blue-Otter-42\".",
			want: []pos{{"prose-password", 1, 34}},
		},
		{
			name: "pw with a colon",
			text: "jenkins pw: Xq7-rT2k-Lm9",
			want: []pos{{"prose-password", 1, 13}},
		},
		{
			name: "label before a password",
			text: "my password: Tr0ub4dor&3",
			want: []pos{{"generic-assignment", 1, 14}},
		},
		{
			name: "passwd assignment",
			text: "passwd=letmein2024!",
			want: []pos{{"generic-assignment", 1, 8}},
		},
		{
			name: "AWS documentation example key is still refused",
			text: "aws_access_key_id=AKIAIOSFODNN7EXAMPLE",
			want: []pos{{"aws-access-key-id", 1, 19}},
		},
	}
}

func TestScanFindsSecrets(t *testing.T) {
	for _, tc := range secretCases() {
		t.Run(tc.name, func(t *testing.T) {
			got := Scan(tc.text)
			if diff := cmp.Diff(tc.want, positions(got)); diff != "" {
				t.Errorf("Scan(%q) diff (-want +got):\n%s", tc.text, diff)
			}
			for _, f := range got {
				if f.Desc == "" || f.Redacted == "" {
					t.Errorf("finding %+v lacks a description or redaction", f)
				}
			}
		})
	}
}

// ordinaryTexts must produce no finding: notes, code, hashes, identifiers
// and URLs that a memory store is full of.
var ordinaryTexts = []string{
	"We chose PostgreSQL for JSONB",
	"Prefer table-driven tests with t.Run; use go-cmp for diffs.",
	"The user prefers tabs over spaces and dark mode in every editor.",
	`token := r.Header.Get("X-Request-Token")`,
	`password := os.Getenv("DB_PASSWORD")`,
	`api_key = config["api_key"]`,
	`secret = secrets.token_hex(32)`,
	`SECRET_KEY = env("SECRET_KEY")`,
	`client = OpenAI(api_key=os.environ["OPENAI_API_KEY"])`,
	`export GITHUB_TOKEN=$(gh auth token)`,
	`export DB_PASSWORD="${DB_PASSWORD:-}"`,
	"env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n  NPM_TOKEN: ${{ secrets.NPM_TOKEN }}",
	"def login(username: str, password: str) -> bool:\n    return check(username, password=password)",
	"type Config struct {\n\tPassword string `json:\"password\"`\n\tToken    string `yaml:\"token\"`\n}",
	"if password == \"\" {\n\treturn errors.New(\"empty password\")\n}",
	"password = hunter2",
	"password: changeme",
	"DB_PASSWORD=<password>",
	"API_KEY=your-api-key-here",
	"OPENAI_API_KEY=sk-...",
	"token: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
	"GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
	"max_tokens: 4096\ntoken_budget: 8000\ntokenizer: cl100k_base",
	"secret_name: prod-db-credentials\npassword_file: /run/secrets/db_password",
	"token_url: https://oauth2.googleapis.com/token",
	"next_page_token: CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA0OTZhY2s4EAA",
	"commit 3f786850e387550fdab836ed7e6dc881de23001b\nAuthor: Ada <ada@example.com>",
	"sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	"request id 123e4567-e89b-12d3-a456-426614174000 failed twice",
	"ids: 01ARZ3NDEKTSV4RRFFQ69G5FAV, 01HGW2N7EXAMPLE0000000000",
	"aGVsbG8gd29ybGQ= is base64 for hello world; so is dGhlIHF1aWNrIGJyb3duIGZveA==",
	"https://www.google.com/search?q=token+bucket+algorithm&hl=en&page=2",
	"https://user@github.com/x",
	"postgres://localhost:5432/db",
	"postgres://postgres:postgres@localhost:5432/app_test",
	"mysql://root:${MYSQL_PASSWORD}@db:3306/app",
	"amqp://guest:guest@localhost:5672/",
	"https://user:password@example.com/path",
	"Write to ada.lovelace@example.com or ops+alerts@example.org.",
	"/home/ada/.config/mira/config.yaml and C:\\Users\\ada\\secrets.txt",
	"Upgraded to v1.17.0; v2.0.0-rc.1+build.5 is next.",
	"# Design\n\n- **Goal:** fast recall\n- [link](https://example.com/docs#auth)\n\n| key | value |\n|-----|-------|\n| a | b |",
	"Fix: refresh the OAuth token before it expires (#123)\n\nThe token was read once at start-up and never renewed.",
	"image: ghcr.io/acme/api@sha256:9b2a3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809",
	"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7vbqajDhA5sbuQHHkHJmo8sOk2y0ZB4vdVzqMWbi0nO2VTBdtmV0b8C3Y1JbrB7OyPqM0EZ0bTBtn0KBK ada@laptop",
	"The docs mention -----BEGIN RSA PRIVATE KEY----- headers; never paste those here.",
	"-----BEGIN OPENSSH PRIVATE KEY-----\n...\n-----END OPENSSH PRIVATE KEY-----",
	"-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJRTESMBAGA1UEChMJ\n-----END CERTIFICATE-----",
	"STRIPE_PUBLISHABLE_KEY=pk_live_51H8example",
	"key: value\nprimary_key: id\npublic_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
	"Authorization: Bearer $TOKEN",
	`req.Header.Set("Authorization", "Bearer "+tok)`,
	"Authorization: Basic dXNlcjpwYXNz",
	"We use scikit-learn; sk-learn-compatible-preprocessing-pipeline is the module name.",
	"Tasks: ASK the DISK team about RISK before Friday.",
	"Asia and Akia are names; ASIA is uppercase; AKIA alone is a prefix.",
	"password_hash: bcrypt\npassword_min_length: 12\ntoken_ttl: 3600",
	"The secret: we index everything in one pass.",
	"Password: see 1Password, vault item \"prod db\".",
	"settings.SECRET_KEY = settings.get('SECRET_KEY')",
	"self.password = password\nself.api_key = api_key",
	"const apiKey = process.env.OPENAI_API_KEY;",
	"curl -H \"Authorization: token $GITHUB_TOKEN\" https://api.github.com/user",
	"PGPASSWORD=$PGPASSWORD psql -h localhost",
	"Use the `credentials` helper: git config credential.helper store",
	"Release v2.3.1 (2024-05-01): faster index rebuilds, fewer allocations in recall.",
	// Shapes that tripped earlier versions of the rules on real Go code.
	"--- PASS: TestScan (0.00s)\n    --- PASS: TestScan/aws_key (0.00s)",
	`{"Action":"output","Test":"TestAscii","Output":"--- PASS: TestAscii\n"}`,
	`"compass": "\U0001f9ed",`,
	"const onePassSignatureDataHex = `c40d03000201ab105c91af38fb1501`",
	`cmd.Env = append(os.Environ(), "PWD="+cmd.Dir, "GOROOT="+root)`,
	"token.style = yaml_FOLDED_SCALAR_STYLE",
	"type ResponseInputTokensRequest = CreateResponseRequest",
	`tokenValue := "Issue149"`,
	"decryptedSecret := privKey.PrivateKey.(*eddsa.PrivateKey).D",
	"PrivateKey: &brokenKey,\nCredentials: socks5.StaticCredentials{",
	"SIOCGLIFTOKEN                 = -0x3f879678",
	"Token: `urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6`,",
	`"encryptionKey": "encryptionKey1024",`,
	`const keyPassphrase = "abcdef0123456789"`,
	"badge.svg?token=bCbIfHLIsW",
	"aws_secret_access_key = ${AWS_SECRET_ACCESS_KEY}",
	"password: Option<String>,\ntoken: z.string().min(16),",
	"    :param passphrase: (Optional) The password to decrypt the PKCS12 lump",
	"const myURL = new URL('https://abc:xyz@example.com');",
	// Passwords and secrets talked about rather than given.
	"password policy requires 12 characters",
	"reset the password via the admin page",
	"key decision: use Postgres",
	"the secret to good code is tests",
	"postgres://USER:PASSWORD@HOST",
	"password is stored hashed with argon2",
	"The password is in 1Password under prod-db; the secret is rotated monthly.",
	"the password for staging is the same as for dev",
	"Our secret is called db-creds-2024 in the prod namespace.",
	"The secret for the webhook is read from $WEBHOOK_SECRET.",
	"pwd is /home/ada/src/mira when the tests run",
	"pw: see the team vault",
	"The passphrase is four random words; the password was reset on 2024-05-01.",
	"the password was 3 characters too short for the policy",
	"secret of the release is v2.3.1-rc.1",
	"if password == \"hunter2correcthorse\" {",
	// A Discord token's shape whose first part is not a user id.
	"ODk4NzY1NDMyMWFiY2RlZmdo.abcdef.ghijklmnopqrstuvwxyzABCDEFGHIJKL",
	// Bot-token-like text that is a time and a word.
	"standup at 12:30:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQrr",
}

// longProse is a paragraph of ordinary writing that mentions secrets
// without containing any.
const longProse = `Mira keeps memories as plain Markdown files so that a person can read and
edit every byte. We decided early that tokens counted for the context budget come from a
real tokenizer, not a guess, because an agent that overflows its window loses the very
facts it needed. Passwords, API keys and other credentials never belong in the store: it is
committed to git and pasted into prompts, so mira-remember refuses text that looks like a
secret. The key insight from the first month of use was that recall quality depends more
on good kinds and scopes than on the embedding model; the secret to fast recall is a small
index that is rebuilt when it is stale rather than patched. Access tokens for providers live
in the environment, never in config files that are checked in.`

func TestScanIgnoresOrdinaryText(t *testing.T) {
	texts := append([]string{longProse}, ordinaryTexts...)
	for _, text := range texts {
		if got := Scan(text); len(got) != 0 {
			t.Errorf("Scan(%q) = %v, want no findings", text, got)
		}
	}
}

func TestRedacted(t *testing.T) {
	for _, tc := range secretCases() {
		for _, h := range scan(tc.text) {
			s := tc.text[h.lo:h.hi]
			if strings.Contains(h.redacted, s) {
				t.Errorf("%s: redacted %q contains the secret %q", tc.name, h.redacted, s)
			}
		}
	}
	tests := []struct{ in, want string }{
		{"AKIAIOSFODNN7EXAMPLE", "AKIA************MPLE"},
		{"hunter2", "*******"},
		{"Tr0ub4dor&3xK9!", "Tr0*********K9!"},
		{"abcdefgh", "a******h"},
		{"********", "*******"},
		{"a******h", "*******"},
		{strings.Repeat("ab", 100), "abab****************abab"},
		{"pässwörd-ünïcode", "päs**********ode"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := mask(tc.in); got != tc.want {
			t.Errorf("mask(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFindingString(t *testing.T) {
	got := Scan("key id:\n  AKIAIOSFODNN7EXAMPLE")
	want := []string{"line 2, column 3: AWS access key ID (aws-access-key-id): AKIA************MPLE"}
	var strs []string
	for _, f := range got {
		strs = append(strs, f.String())
	}
	if diff := cmp.Diff(want, strs); diff != "" {
		t.Errorf("Finding.String() diff (-want +got):\n%s", diff)
	}
}

func TestEntropy(t *testing.T) {
	tests := []struct {
		in   string
		want float64
	}{
		{"", 0},
		{"aaaa", 0},
		{"abab", 1},
		{"abcd", 2},
		{"0123456789abcdef", 4},
	}
	for _, tc := range tests {
		if got := entropy(tc.in); got != tc.want {
			t.Errorf("entropy(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestClassifyName(t *testing.T) {
	tests := []struct {
		name string
		want nameKind
	}{
		{"password", passwordName},
		{"DB_PASSWORD", passwordName},
		{"dbPassword", passwordName},
		{"PGPASSWORD", passwordName},
		{"spring.datasource.password", passwordName},
		{"PGPASS", passwordName},
		{"smtp_pass", passwordName},
		{"pwd", passwordName},
		{"DB_PWD", passwordName},
		{"passphrase", passwordName},
		{"client_secret", tokenName},
		{"SECRET_KEY", tokenName},
		{"api_key", tokenName},
		{"x-api-key", tokenName},
		{"apiKey", tokenName},
		{"AWS_ACCESS_KEY", tokenName},
		{"signing_key", tokenName},
		{"auth_token", tokenName},
		{"access_token", tokenName},
		{"credentials", tokenName},
		{"webhook_secret", tokenName},
		{"key", notSecret},
		{"primary_key", notSecret},
		{"public_key", notSecret},
		{"sort_key", notSecret},
		{"monkey", notSecret},
		{"token_url", notSecret},
		{"password_file", notSecret},
		{"secret_name", notSecret},
		{"max_tokens", notSecret},
		{"key_id", notSecret},
		{"next_page_token", notSecret},
		{"tokenizer", notSecret},
		{"token.style", notSecret},
		{"compass", notSecret},
		{"bypass", notSecret},
		{"passport", notSecret},
		{"PWD", notSecret},
		{"PASS", notSecret},
		{"onePassSignatureDataHex", notSecret},
		{"DBPASS", passwordName},
		{"db.Pass", passwordName},
		{"env.PWD", notSecret},
		{".PWD", notSecret},
	}
	for _, tc := range tests {
		if got, _ := classifyName(tc.name); got != tc.want {
			t.Errorf("classifyName(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestWordy(t *testing.T) {
	for _, v := range []string{"CreateResponseRequest", "yaml_DOUBLE_QUOTED_SCALAR_STYLE", "GID:user_list", "HTTPServerConfig"} {
		if !wordy(v) {
			t.Errorf("wordy(%q) = false, want true", v)
		}
	}
	for _, v := range []string{"bCbIfHLIsWqXvTz", "Tr0ub4dor&3xK9!", fake(b64, 24, 1)} {
		if wordy(v) {
			t.Errorf("wordy(%q) = true, want false", v)
		}
	}
	// Random mixed-case letters are seldom taken for words.
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	n := 0
	for seed := uint64(0); seed < 1000; seed++ {
		if wordy(fake(letters, 24, seed)) {
			n++
		}
	}
	if n > 10 {
		t.Errorf("wordy took %d of 1000 random 24-letter strings for words, want at most 10", n)
	}
}

func TestScanManyFindings(t *testing.T) {
	var sb strings.Builder
	const n = 2000
	for i := range n {
		sb.WriteString("x-api-key: " + fake(alnum, 32, uint64(i)) + "\n")
	}
	got := Scan(sb.String())
	if len(got) != n {
		t.Fatalf("Scan found %d secrets, want %d", len(got), n)
	}
	for i, f := range got {
		if want := (pos{"generic-assignment", i + 1, 12}); (pos{f.Rule, f.Line, f.Column}) != want {
			t.Fatalf("finding %d = %+v, want %+v", i, f, want)
		}
	}
}

// TestRandomSecretsFound guards recall against rules tuned for precision:
// random values of the shapes real keys and passwords have must almost all
// be found, whatever letters they happen to contain.
func TestRandomSecretsFound(t *testing.T) {
	const n = 2000
	tests := []struct {
		name           string
		prefix, suffix string
		alphabet       string
		length         int
		maxMiss        int
	}{
		{"hex 16", "x-api-key: ", "", hexlc, 16, n / 200},
		{"hex 32", "API_KEY=", "\n", hexlc, 32, n / 500},
		{"alnum 16", "token: ", "", alnum, 16, n / 200},
		{"alnum 32", `{"client_secret": "`, `"}`, alnum, 32, n / 500},
		{"base64 40", "SECRET=", "", b64, 40, n / 500},
		{"base64url 24", "auth_token = '", "'", b64url, 24, n / 500},
		{"password 12", "password: ", "", alnum + "!@#$%^&*-_.?+=", 12, n / 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var missed []string
			for i := range n {
				v := fake(tc.alphabet, tc.length, uint64(i)+1e6)
				if tc.name == "password 12" && !passwordLike(v) {
					continue // letters only: not taken for a password by design
				}
				if len(Scan(tc.prefix+v+tc.suffix)) == 0 {
					missed = append(missed, v)
				}
			}
			if len(missed) > tc.maxMiss {
				t.Errorf("missed %d of %d, want at most %d; first: %q", len(missed), n, tc.maxMiss, missed[:min(5, len(missed))])
			}
		})
	}
}

func TestIsPlaceholder(t *testing.T) {
	yes := []string{"", "x", "xxxxxxxx", "********", "abababab", "<password>", "${DB_PASSWORD}", "$(pass show db)",
		"$TOKEN", "$password", "$1", "%API_KEY%", "{token}", "{{", "[REDACTED]", "(optional)", "your-api-key-here",
		"changeme", "example-key-123", "sk-...", "PLACEHOLDER", "abc12345", "insert_token", "$DB_PASS", "$api_key"}
	no := []string{"Tr0ub4dor&3xK9!", "$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW", "$H5mFi8DNx8h",
		"hunter2", fake(alnum, 32, 1), "xoxb-123",
		// A bracket, brace, parenthesis or percent sign at one end only.
		"Tr0ub4dor&3}", "{Tr0ub4dor&3", "Tr0ub4dor&3]", "[Tr0ub4dor&3", "Tr0ub4dor&3)", "(Tr0ub4dor&3",
		"Tr0ub4dor&3%", "%Tr0ub4dor&3"}
	for _, v := range yes {
		if !isPlaceholder(v) {
			t.Errorf("isPlaceholder(%q) = false, want true", v)
		}
	}
	for _, v := range no {
		if isPlaceholder(v) {
			t.Errorf("isPlaceholder(%q) = true, want false", v)
		}
	}
}

func TestIsCode(t *testing.T) {
	tests := []struct {
		v      string
		quoted bool
		want   bool
	}{
		{`os.Getenv(`, false, true},
		{`config[`, false, true},
		{`&Config{`, false, true},
		{`&brokenKey`, false, true},
		{`*params.EncryptionTime`, false, true},
		{`settings.SECRET_KEY`, false, true},
		{`process.env.OPENAI_API_KEY`, false, true},
		{`a.Package.Dir`, false, true},
		{`cfg.MaxSize`, false, true},
		{`myAPIKEY`, false, true},
		{`db_password`, false, true},
		{`newPassword2`, false, true},
		{`GITHUB_TOKEN`, false, true},
		{`testECDSAP256Key`, false, true},
		{`0x3f879678`, false, true},
		{`-0x7f`, false, true},
		{`0x7`, false, true},
		{`0xffffffffffffffff`, false, true},
		{`0x1ffffffffffffffff`, false, false},
		{`+cmd.Dir, `, true, true},
		{`Tr0ub4dor&3xK9!`, false, false},
		{`EYtN7.jYduRk`, false, false},
		{`jYduRk.pQmxTv`, false, false},
		{`*F7tts3KwKSd`, false, false},
		{`pwdoO7ECNADQfcgM`, false, false},
		{`FiKEy3ikHE8bYhNe`, false, false},
		{`Summer2024`, false, false},
		{`0x4c0883a69102937d6231471b5dbb6204fe512961708279f8b1a3a1b8f2b1e7c1`, false, false},
		{`os.Getenv(`, true, false},
	}
	for _, tc := range tests {
		if got := isCode(tc.v, tc.quoted); got != tc.want {
			t.Errorf("isCode(%q, %v) = %v, want %v", tc.v, tc.quoted, got, tc.want)
		}
	}
}

// TestRedact: every secret in a message is masked where it stands, and
// the text around it is kept.
func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain words stay", "plain words stay"},
		{`unknown kind "AKIAZ7QW3ERTYUIOP4AB" (want one of fact)`, `unknown kind "AKIA************P4AB" (want one of fact)`},
		{"a ghp_R7uKq2ZxT9vLm4NcW8aYp3BdHs6FjE1oQi5G and AKIAZ7QW3ERTYUIOP4AB", "a ghp_****************Qi5G and AKIA************P4AB"},
	} {
		got := Redact(tc.in)
		if got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if Scan(got) != nil {
			t.Errorf("Redact(%q) still holds a secret: %v", tc.in, Scan(got))
		}
	}
}
