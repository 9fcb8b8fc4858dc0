// Package secrettest holds the corpora the secret scanner is measured
// against: realistic secrets that must be refused wherever they appear, and
// ordinary developer notes that must not be. Tests of the scanner and of
// everything that screens input with it share them.
//
// Secrets are built at run time from a seeded generator, so that no
// token-shaped literal sits in the source for push protection or other
// scanners to trip over; the same seed always gives the same value.
package secrettest

import (
	"encoding/base64"
	"strings"
)

// Secret is one realistic secret in the context a note would give it.
type Secret struct {
	// Name describes the shape, such as "Stripe live secret key".
	Name string
	// Rule is the id of the rule expected to find it.
	Rule string
	// Text is the note holding it; it may span several lines.
	Text string
}

// Alphabets for fake secrets.
const (
	Alnum      = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	UpperAlnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	Letters    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	B64        = Alnum + "+/"
	B64URL     = Alnum + "-_"
	HexLower   = "0123456789abcdef"
	Base32     = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	Bech32     = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
)

// Fake returns n pseudo-random characters from alphabet.
func Fake(alphabet string, n int, seed uint64) string {
	x := seed*0x9E3779B97F4A7C15 + 1
	b := make([]byte, n)
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = alphabet[x%uint64(len(alphabet))]
	}
	return string(b)
}

// pem is a key block of the given type with a body of lines 64-column lines.
func pem(kind string, lines int, seed uint64) string {
	var sb strings.Builder
	sb.WriteString("-----BEGIN " + kind + "-----\n")
	for i := range lines {
		sb.WriteString(Fake(B64, 64, seed+uint64(i)) + "\n")
	}
	sb.WriteString("-----END " + kind + "-----\n")
	return sb.String()
}

// Secrets returns the secret corpus: at least one of every kind of
// credential the scanner knows, as people paste them into notes.
func Secrets() []Secret {
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." +
		"eyJzdWIiOiJ1c2VyLTQyIiwiZXhwIjoxOTAwMDAwMDAwfQ." + Fake(B64URL, 43, 101)
	basic := base64.StdEncoding.EncodeToString([]byte("deploy:" + Fake(Alnum, 14, 102) + "!"))
	discordID := base64.RawStdEncoding.EncodeToString([]byte("1" + Fake("0123456789", 17, 103)))
	return append([]Secret{
		{"AWS access key ID", "aws-access-key-id", "aws_access_key_id = AKIA" + Fake(Base32, 16, 1)},
		{"AWS temporary access key ID", "aws-access-key-id", "temporary creds from sts: ASIA" + Fake(Base32, 16, 2)},
		{"AWS secret access key", "aws-secret-access-key", "aws_secret_access_key=" + Fake(B64, 40, 3)},
		{"GitHub classic token", "github-token", "GITHUB_TOKEN ghp_" + Fake(Alnum, 36, 4) + " expires in May"},
		{"GitHub fine-grained token", "github-token", "new PAT github_pat_" + Fake(Alnum, 22, 5) + "_" + Fake(Alnum, 59, 6)},
		{"GitHub OAuth token", "github-token", "gh auth token printed gho_" + Fake(Alnum, 36, 7)},
		{"GitLab personal access token", "gitlab-token", "gitlab: glpat-" + Fake(B64URL, 20, 8)},
		{"Slack bot token", "slack-token", "bot token xoxb-1234567890123-1234567890123-" + Fake(Alnum, 24, 9)},
		{"Slack user token", "slack-token", "xoxp-1234567890-1234567890-1234567890123-" + Fake(HexLower, 32, 10)},
		{"Slack app token", "slack-token", "socket mode uses xapp-1-A0" + Fake(UpperAlnum, 9, 11) + "-1234567890123-" + Fake(HexLower, 64, 12)},
		{"Slack webhook", "slack-webhook-url", "alerts go to https://hooks.slack.com/services/T0" + Fake(UpperAlnum, 8, 13) + "/B0" + Fake(UpperAlnum, 8, 14) + "/" + Fake(Alnum, 24, 15)},
		{"Stripe live secret key", "stripe-secret-key", "prod Stripe key sk_live_51" + Fake(Alnum, 40, 16)},
		{"Stripe test secret key", "stripe-secret-key", "sk_test_51" + Fake(Alnum, 40, 17) + " works in staging"},
		{"Stripe restricted key", "stripe-secret-key", "read-only key rk_live_51" + Fake(Alnum, 40, 18)},
		{"Stripe webhook secret", "stripe-webhook-secret", "webhook signing secret whsec_" + Fake(Alnum, 32, 19)},
		{"OpenAI legacy key", "openai-api-key", "OpenAI key sk-" + Fake(Alnum, 20, 20) + "T3BlbkFJ" + Fake(Alnum, 20, 21)},
		{"OpenAI project key", "openai-api-key", "use sk-proj-" + Fake(B64URL, 120, 22) + " for the eval runs"},
		{"Anthropic API key", "anthropic-api-key", "sk-ant-api03-" + Fake(B64URL, 93, 23) + "AA"},
		{"Google API key", "gcp-api-key", "Maps key AIza" + Fake(B64URL, 35, 24)},
		{"Google OAuth client secret", "google-oauth-client-secret", "client secret GOCSPX-" + Fake(B64URL, 28, 25)},
		{"GCP service account key", "gcp-service-account-key", `{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\n` +
			Fake(B64, 64, 26) + `\n` + Fake(B64, 64, 27) + `\n-----END PRIVATE KEY-----\n", "client_email": "ci@proj.iam.gserviceaccount.com"}`},
		{"Azure storage account key", "azure-storage-key", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + Fake(B64, 86, 28) + "==;EndpointSuffix=core.windows.net"},
		{"Azure AD client secret", "azure-client-secret", "app registration secret " + Fake(Alnum, 3, 29) + "8Q~" + Fake(B64URL, 34, 30)},
		{"Twilio API key", "twilio-api-key", "twilio SK" + Fake(HexLower, 32, 31)},
		{"Twilio auth token", "generic-assignment", "TWILIO_AUTH_TOKEN=" + Fake(HexLower, 32, 32)},
		{"SendGrid API key", "sendgrid-api-key", "SG." + Fake(B64URL, 22, 33) + "." + Fake(B64URL, 43, 34)},
		{"npm token", "npm-token", "//registry.npmjs.org/:_authToken=npm_" + Fake(Alnum, 36, 35)},
		{"PyPI token", "pypi-token", "twine upload -p pypi-AgEIcHlwaS5vcmc" + Fake(B64URL, 120, 36)},
		{"Docker Hub access token", "docker-hub-token", "docker login -u ada -p dckr_pat_" + Fake(B64URL, 27, 37)},
		{"Heroku API key", "heroku-api-key", "heroku token HRKU-AA" + Fake(B64URL, 58, 38)},
		{"Heroku legacy API key", "generic-assignment", "HEROKU_API_KEY=" + Fake(HexLower, 8, 39) + "-" + Fake(HexLower, 4, 40) + "-" + Fake(HexLower, 4, 41) + "-" + Fake(HexLower, 4, 42) + "-" + Fake(HexLower, 12, 43)},
		{"DigitalOcean token", "digitalocean-token", "doctl auth init -t dop_v1_" + Fake(HexLower, 64, 44)},
		{"Mailgun API key", "mailgun-api-key", "mailgun key-" + Fake(HexLower, 32, 45)},
		{"JSON Web Token", "jwt", "session cookie was " + jwt},
		{"RSA private key", "private-key", "key for the box:\n" + pem("RSA PRIVATE KEY", 4, 46)},
		{"EC private key", "private-key", pem("EC PRIVATE KEY", 2, 50)},
		{"OpenSSH private key", "private-key", "deploy key\n" + pem("OPENSSH PRIVATE KEY", 3, 52)},
		{"PKCS#8 private key", "private-key", pem("PRIVATE KEY", 3, 55)},
		{"Postgres URL with a password", "url-password", "DATABASE_URL=postgres://app:" + Fake(Alnum, 16, 58) + "@db.internal:5432/app"},
		{"MongoDB URL with a password", "url-password", "mongodb+srv://admin:hunter2@cluster0.abcde.mongodb.net/test"},
		{"Redis URL with a password", "url-password", "redis://:" + Fake(Alnum, 12, 59) + "@cache:6379/0"},
		{"password in a sentence", "prose-password", "the password is hunter2correcthorse"},
		{"password for something", "prose-password", "pw for prod db is S3cr3tP4ss!"},
		{"password after a label", "generic-assignment", "my password: Tr0ub4dor&3"},
		{"password assignment", "generic-assignment", "passwd=letmein2024!"},
		{"passphrase changed", "prose-password", `the Wi-Fi passphrase was changed to "Blue-Otter-42"`},
		{"netrc entry", "prose-password", "machine api.example.com login ada password " + Fake(Alnum, 14, 60)},
		{"password in YAML", "generic-assignment", "database:\n  password: " + Fake(Alnum, 10, 61) + "#2"},
		{"Hugging Face token", "huggingface-token", "HF hub token hf_" + Fake(Letters, 34, 62)},
		{"Discord bot token", "discord-bot-token", "bot token " + discordID + "." + Fake(B64URL, 6, 63) + "." + Fake(B64URL, 38, 64)},
		{"Discord webhook", "discord-webhook-url", "https://discord.com/api/webhooks/123456789012345678/" + Fake(B64URL, 68, 65)},
		{"Telegram bot token", "telegram-bot-token", "BotFather gave 7" + Fake("0123456789", 9, 66) + ":AA" + Fake(B64URL, 33, 67)},
		{"Shopify access token", "shopify-token", "shpat_" + Fake(HexLower, 32, 68)},
		{"Square access token", "square-token", "square sandbox: EAAA" + Fake(B64URL, 60, 69)},
		{"Square OAuth secret", "square-token", "sq0csp-" + Fake(B64URL, 43, 70)},
		{"Datadog API key", "generic-assignment", "DD_API_KEY=" + Fake(HexLower, 32, 71)},
		{"Datadog application key", "generic-assignment", "datadog app key: DD_APP_KEY=" + Fake(HexLower, 40, 72)},
		{"New Relic user key", "newrelic-key", "NEW_RELIC NRAK-" + Fake(UpperAlnum, 27, 73)},
		{"Vault service token", "vault-token", "VAULT_TOKEN is hvs." + Fake(B64URL, 90, 74)},
		{"Linear API key", "linear-api-key", "lin_api_" + Fake(Alnum, 40, 75)},
		{"Grafana service account token", "grafana-token", "glsa_" + Fake(Alnum, 32, 76) + "_" + Fake(HexLower, 8, 77)},
		{"Doppler token", "doppler-token", "dp.st." + Fake(Alnum, 43, 78)},
		{"Postman API key", "postman-api-key", "PMAK-" + Fake(HexLower, 24, 79) + "-" + Fake(HexLower, 34, 80)},
		{"Databricks token", "databricks-token", "dapi" + Fake(HexLower, 32, 81)},
		{"Atlassian API token", "atlassian-api-token", "jira token ATATT3xFfGF0" + Fake(B64URL, 180, 82)},
		{"age secret key", "age-secret-key", "AGE-SECRET-KEY-1" + Fake("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58, 83)},
		{"bearer token header", "authorization-header", "Authorization: Bearer " + Fake(Alnum, 40, 84)},
		{"basic auth header", "authorization-header", "Authorization: Basic " + basic},
		{"Django secret key", "generic-assignment", "SECRET_KEY = 'django-insecure-" + Fake(Alnum, 40, 85) + "'"},
		{"generic API key", "generic-assignment", "export ACME_API_KEY=" + Fake(Alnum, 32, 86)},
	}, families()...)
}

// Ordinary returns notes a developer keeps that must not be taken for
// secrets: hashes, ids, URLs without credentials, versions, colours and the
// words password, key, token and secret in their everyday senses.
func Ordinary() []string {
	return append([]string{
		"password policy requires 12 characters",
		"reset the password via the admin page",
		"key decision: use Postgres",
		"the secret to good code is tests",
		"postgres://USER:PASSWORD@HOST",
		"password is stored hashed with argon2",
		"Fixed in commit 3f786850e387550fdab836ed7e6dc881de23001b; reverted in a94a8fe.",
		"Deployed 9fceb02d0ae598e95dc970b74767f19372d61af8 to prod at 14:02 UTC.",
		"trace id 123e4567-e89b-12d3-a456-426614174000 in the gateway logs",
		"user 550e8400-e29b-41d4-a716-446655440000 reported the 500",
		"Mongo ObjectId 507f1f77bcf86cd799439011 is the broken order.",
		"the video id is dQw4w9WgXcQ and the playlist PLBCF2DAC6FFB574DE",
		"Firestore doc 7dKf0Q2mYbX9sLp3vR1t holds the config; nanoid V1StGXR8_Z5jdHi6B-myT",
		"Stripe customer cus_NffrFeUfNV2Hib and payment pi_3MtwBwLkdIwHu7ix28a3tqPa failed",
		"Use the publishable key pk_test_TYooMQauvdEDq54NiTphI7jx in the browser only.",
		"ULID 01ARZ3NDEKTSV4RRFFQ69G5FAV orders events by time.",
		"docs at https://pkg.go.dev/golang.org/x/oauth2#Token and https://example.com/api/v2/items?page=3&sort=desc",
		"The dashboard is https://grafana.internal/d/abc123/latency?orgId=1&from=now-6h",
		"clone git@github.com:miramem/mira.git, not https://github.com/miramem/mira",
		"Upgraded Go from 1.22.5 to 1.23.1; golangci-lint v1.59.1 needs a bump.",
		"v2.0.0-rc.1+build.5 ships Friday; node 20.11.1 LTS in CI",
		"Brand colours: #1E90FF primary, #ff6f61 accent, #333 text, rgba(0,0,0,.5) overlay.",
		"The token bucket refills 10 tokens per second; burst is 50.",
		"max_tokens: 4096 and temperature 0.2 for the summariser",
		"Rotate the API key every 90 days; keys live in Vault, never in the repo.",
		"The secret sauce is the reranker, not the embedding model.",
		"Secrets are mounted at /run/secrets/db_password by compose.",
		"password_min_length: 12\npassword_hash: bcrypt",
		"primary key is (tenant_id, id); sort key is created_at",
		"Keyboard shortcut: Ctrl+Shift+P opens the command palette.",
		"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 is the empty file",
		"image ghcr.io/acme/api@sha256:9b2a3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809",
		"ETag \"33a64df551425fcc55e4d42a148795d9f25f89d4\" changes on every deploy",
		"The request id req_8fK2mQ9xL shows up twice in the logs.",
		"aGVsbG8gd29ybGQ= decodes to hello world",
		"pod api-7d9f8b6c5-x2kqp keeps restarting on node ip-10-0-3-17",
		"export GITHUB_TOKEN=$(gh auth token) before running the release script",
		"password := os.Getenv(\"DB_PASSWORD\")",
		"Our secret is called db-creds-2024 in the prod namespace.",
		"The password is in 1Password under prod-db; the secret is rotated monthly.",
		"The secret for the webhook is read from $WEBHOOK_SECRET.",
		"pwd is /home/ada/src/mira when the tests run",
		"the secret is AES-256-GCM encrypted at rest",
		"password is 2FA-protected for admins",
		"Token expiry is 3600s; refresh tokens last 30 days.",
		"Use ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl as the deploy public key.",
		"AWS account 123456789012, region eu-west-1, bucket acme-logs-prod",
		"arn:aws:iam::123456789012:role/ci-deploy assumes the deploy role",
		"The secret of Q3 was shipping less, not more.",
		"MIRA_MODEL=qwen2.5:7b and OPENAI_BASE_URL=http://localhost:11434/v1",
		"Discord server id 123456789012345678, channel #dev-chat",
		"Meeting at 10:30 about the Postgres 16.2 upgrade and the key rotation runbook.",
	}, ordinaryFamilies()...)
}
