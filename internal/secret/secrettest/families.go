package secrettest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"math/big"
	"strings"

	"github.com/miramem/mira/internal/secret/bip39"
)

// fakeBytes returns n pseudo-random bytes.
func fakeBytes(n int, seed uint64) []byte {
	var all [256]byte
	for i := range all {
		all[i] = byte(i)
	}
	return []byte(Fake(string(all[:]), n, seed))
}

func b64Of(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// der returns a DER prefix followed by n random bytes, in base64: the body
// of a key block without its header and footer.
func der(prefix string, n int, seed uint64) string {
	p, _ := hex.DecodeString(prefix)
	return base64.StdEncoding.EncodeToString(append(p, fakeBytes(n, seed)...))
}

// wrap breaks s into lines of width characters.
func wrap(s string, width int) string {
	var sb strings.Builder
	for len(s) > width {
		sb.WriteString(s[:width] + "\n")
		s = s[width:]
	}
	sb.WriteString(s)
	return sb.String()
}

const base58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// base58Check encodes a payload with its four-byte double SHA-256
// checksum, as Bitcoin keys and addresses are written.
func base58Check(payload []byte) string {
	h1 := sha256.Sum256(payload)
	h2 := sha256.Sum256(h1[:])
	b := append(append([]byte{}, payload...), h2[:4]...)
	n := new(big.Int).SetBytes(b)
	var out []byte
	mod, base := new(big.Int), big.NewInt(58)
	for n.Sign() > 0 {
		n.DivMod(n, base, mod)
		out = append(out, base58[mod.Int64()])
	}
	for _, c := range b {
		if c != 0 {
			break
		}
		out = append(out, '1')
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}

// wif is a Wallet Import Format private key: version 0x80, 32 bytes of
// key, and 0x01 when the public key is compressed.
func wif(seed uint64, compressed bool) string {
	p := append([]byte{0x80}, fakeBytes(32, seed)...)
	if compressed {
		p = append(p, 1)
	}
	return base58Check(p)
}

// extendedKey is a BIP 32 extended key: version, depth, parent
// fingerprint, child number, chain code and key data (a private key after
// a zero byte, or a compressed public key).
func extendedKey(version string, private bool, seed uint64) string {
	v, _ := hex.DecodeString(version)
	p := append(v, make([]byte, 9)...)
	p = append(p, fakeBytes(32, seed)...)
	if private {
		p = append(p, 0)
	} else {
		p = append(p, 2)
	}
	p = append(p, fakeBytes(32, seed+1)...)
	return base58Check(p)
}

// phrase is a BIP 39 recovery phrase of n words with a valid checksum.
func phrase(n int, seed uint64) []string {
	return bip39.Phrase(fakeBytes(n*4/3, seed))
}

// numbered lists words as wallets show them: "1. word" a line.
func numbered(ws []string) string {
	var sb strings.Builder
	for i, w := range ws {
		sb.WriteString(strings.TrimSpace(strings.Repeat(" ", 0)) + itoa(i+1) + ". " + w + "\n")
	}
	return sb.String()
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// pemOf is a key block of the given kind with a random body, as text.
func pemOf(kind string, n int, seed uint64) string {
	body := base64.StdEncoding.EncodeToString(fakeBytes(n, seed))
	return "-----BEGIN " + kind + "-----\n" + wrap(body, 64) + "\n-----END " + kind + "-----\n"
}

// families are credential shapes without a format of their own: encoded,
// given on a command line, in a file format, as a wallet key or phrase,
// in a sentence in any language, beside a service's name, or wrapped over
// two lines.
func families() []Secret {
	pw := func(seed uint64) string { return Fake(Alnum, 10, seed) + "#" + Fake("0123456789", 2, seed+1) }
	env := "DB_HOST=db.internal\nDB_USER=app\nDB_PASSWORD=" + Fake(Alnum, 18, 300) + "\nREDIS_URL=redis://cache:6379/0\n"
	env2 := "AWS_REGION=eu-west-1\nAWS_SECRET_ACCESS_KEY=" + Fake(B64, 40, 301) + "\n"
	app := func(seed uint64, sep string) string {
		var g []string
		for i := range 4 {
			g = append(g, Fake("abcdefghijklmnopqrstuvwxyz", 4, seed+uint64(i)))
		}
		return strings.Join(g, sep)
	}
	return []Secret{
		// Base64 user:password pairs in registry and package manager configs.
		{"docker config.json auth", "encoded-credentials", `{"auths": {"https://index.docker.io/v1/": {"auth": "` + b64Of("ada:"+Fake(Alnum, 14, 200)) + `"}}}`},
		{"docker config.json auth, GitLab registry", "encoded-credentials", "~/.docker/config.json:\n  \"registry.gitlab.com\": {\n    \"auth\": \"" + b64Of("deploy-bot:"+Fake(B64URL, 20, 201)) + "\"\n  }"},
		{"podman auth.json robot account", "encoded-credentials", `"quay.io": {"auth": "` + b64Of("acme+ci:"+Fake(UpperAlnum, 32, 202)) + `"}`},
		{".npmrc _auth", "encoded-credentials", "registry=https://npm.internal/\n_auth=" + b64Of("ci:"+pw(203)) + "\nalways-auth=true"},
		{".npmrc _auth quoted", "encoded-credentials", `_auth = "` + b64Of("ada@acme.io:"+Fake(Alnum, 16, 204)) + `"`},
		{".npmrc _password", "encoded-credentials", "//npm.internal/:username=ci\n//npm.internal/:_password=" + b64Of(Fake(Alnum, 16, 205)) + "\n//npm.internal/:email=ci@acme.io"},
		{".npmrc _authToken legacy", "generic-assignment", "//registry.npmjs.org/:_authToken=" + Fake(HexLower, 8, 206) + "-" + Fake(HexLower, 4, 207) + "-" + Fake(HexLower, 4, 208) + "-" + Fake(HexLower, 4, 209) + "-" + Fake(HexLower, 12, 210)},

		// Keys and files in base64.
		{"kubeconfig client-key-data", "encoded-secret", "users:\n- name: admin\n  user:\n    client-certificate-data: " + base64.StdEncoding.EncodeToString(fakeBytes(90, 211)) + "\n    client-key-data: " + b64Of(pemOf("RSA PRIVATE KEY", 300, 212))},
		{"kubeconfig EC client-key-data", "encoded-secret", "client-key-data: " + b64Of(pemOf("EC PRIVATE KEY", 121, 213))},
		{"base64 env file", "encoded-secret", "restore with: echo " + b64Of(env) + " | base64 -d > .env"},
		{"base64 env file in a Secret", "encoded-secret", "apiVersion: v1\nkind: Secret\ndata:\n  app.env: " + b64Of(env2)},
		{"base64 env file wrapped", "encoded-secret", "ENV_FILE (base64):\n" + wrap(b64Of(env+env2), 76)},
		{"PKCS#8 body without header", "private-key-body", "the key body: " + der("308204bd020100300d06092a864886f70d0101010500048204a7308204a30201000282010100", 1180, 214)},
		{"PKCS#8 body wrapped, no header", "private-key-body", "pasted from the vault:\n" + wrap(der("308204be020100300d06092a864886f70d0101010500048204a8308204a40201000282010100", 1180, 215), 64)},
		{"PKCS#1 RSA body without header", "private-key-body", "RSA_KEY=" + der("308204a40201000282010100", 1180, 216)},
		{"EC key body without header", "private-key-body", "signing key MHc: " + der("30770201010420", 32, 217) + der("a00a06082a8648ce3d030107a144034200", 66, 218)},

		// Passwords in file formats.
		{"Maven settings.xml password", "generic-assignment", "<server>\n  <id>nexus</id>\n  <username>deploy</username>\n  <password>" + Fake(Alnum, 16, 219) + "</password>\n</server>"},
		{"Maven gpg passphrase property", "generic-assignment", "<properties>\n  <gpg.passphrase>" + pw(220) + "</gpg.passphrase>\n</properties>"},
		{"XML API key element", "generic-assignment", "<Settings><ApiKey>" + Fake(Alnum, 32, 221) + "</ApiKey></Settings>"},
		{"~/.pgpass line", "pgpass-entry", "~/.pgpass:\ndb.internal:5432:app:app_user:" + Fake(Alnum, 18, 222)},
		{"~/.pgpass wildcard line", "pgpass-entry", "*:*:*:postgres:" + pw(223)},
		{"~/.pgpass appended", "pgpass-entry", "echo 'pg-prod.acme.io:6432:billing:billing_rw:" + Fake(Alnum, 20, 224) + "' >> ~/.pgpass"},

		// Passwords on command lines.
		{"mysql -p", "command-line-password", "mysql -h db.internal -u app -p'" + pw(225) + "' shop"},
		{"mysqldump -p attached", "command-line-password", "mysqldump -uroot -p" + Fake(Alnum, 14, 226) + " --all-databases > all.sql"},
		{"sshpass -p", "command-line-password", "sshpass -p '" + Fake(Alnum, 12, 227) + "' ssh pi@10.0.0.5"},
		{"curl -u", "command-line-password", "curl -u ada:" + Fake(Alnum, 16, 228) + " https://ci.internal/api/json"},
		{"curl --user", "command-line-password", "curl --user 'admin:" + pw(229) + "' -X POST https://jenkins.internal/reload"},
		{"redis-cli -a", "command-line-password", "redis-cli -h cache.internal -a " + Fake(Alnum, 20, 230) + " ping"},
		{"htpasswd -b", "command-line-password", "htpasswd -bc /etc/nginx/.htpasswd ops " + pw(231)},
		{"docker login -p", "command-line-password", "docker login registry.internal -u ci -p " + Fake(Alnum, 20, 232)},

		// Wallet keys and recovery phrases.
		{"Ethereum private key after a label", "wallet-private-key", "metamask private key: " + Fake(HexLower, 64, 233)},
		{"Ethereum private key 0x", "wallet-private-key", "deployer privkey 0x" + Fake(HexLower, 64, 234) + " (hardhat account #0)"},
		{"Ethereum signer key", "wallet-private-key", "signer key for the faucet is 0x" + Fake(HexLower, 64, 235)},
		{"WIF private key, uncompressed", "wallet-private-key", "paper wallet: " + wif(236, false)},
		{"WIF private key, compressed", "wallet-private-key", wif(237, true)},
		{"BIP32 extended private key", "wallet-private-key", "account xprv " + extendedKey("0488ade4", true, 238)},
		{"BIP39 phrase of 12 words", "seed-phrase", "seed: " + strings.Join(phrase(12, 239), " ")},
		{"BIP39 phrase of 24 words, numbered", "seed-phrase", "Ledger recovery sheet\n" + numbered(phrase(24, 240))},
		{"BIP39 phrase of 18 words, commas", "seed-phrase", "recovery phrase: " + strings.Join(phrase(18, 241), ", ")},
		{"BIP39 phrase of 15 words, bare", "seed-phrase", strings.Join(phrase(15, 242), " ")},

		// Logins in sentences, in several languages.
		{"login / password pair", "login-pair", "router login admin / " + Fake(Alnum, 12, 243)},
		{"login / password pair in a list", "login-pair", "- Grafana: admin / " + pw(244)},
		{"German Passwort", "prose-password", "Benutzer: ada Passwort: " + pw(245)},
		{"German Passwort ist", "prose-password", "Das Passwort ist " + pw(246)},
		{"French mot de passe", "prose-password", "utilisateur : ada, mot de passe : " + pw(247)},
		{"Spanish contraseña", "prose-password", "usuario: ada contraseña: " + pw(248)},
		{"Portuguese senha", "prose-password", "usuário ada senha: " + pw(249)},
		{"Japanese パスワード", "prose-password", "ユーザー名: ada パスワード: " + pw(250)},
		{"Russian пароль", "prose-password", "логин: ada пароль: " + pw(251)},
		{"Chinese 密码", "prose-password", "用户名：ada 密码：" + pw(252)},
		{"Dutch wachtwoord", "prose-password", "wachtwoord van de NAS is " + pw(253)},
		{"Google app password", "prose-password", "gmail app password: " + app(254, " ")},
		{"app password without a colon", "prose-password", "SMTP relay uses the Google app password " + app(258, " ") + " for alerts@"},
		{"Apple app-specific password", "prose-password", "Apple app-specific password " + app(262, "-")},

		// Keys beside a service's name, without a tag.
		{"Mailchimp key", "service-key", "mailchimp key " + Fake(HexLower, 32, 266) + "-us21"},
		{"Algolia admin key", "service-key", "Algolia admin API key " + Fake(HexLower, 32, 267)},
		{"Sentry auth token", "service-key", "sentry auth token " + Fake(HexLower, 64, 268)},
		{"OpenWeather key", "service-key", "openweathermap api key is " + Fake(HexLower, 32, 269)},
		{"Cloudflare token", "service-key", "Cloudflare API token " + Fake(B64URL, 40, 270)},
		{"Pusher secret", "service-key", "pusher secret " + Fake(HexLower, 20, 271)},

		// Tokens wrapped over two lines.
		{"GitHub token broken by a newline", "github-token", "token: ghp_" + Fake(Alnum, 20, 272) + "\n" + Fake(Alnum, 16, 273)},
		{"AWS key ID wrapped", "aws-access-key-id", "AKIA" + Fake(Base32, 8, 274) + "\n" + Fake(Base32, 8, 275) + " is the CI user's key"},
		{"Stripe key continued with a backslash", "stripe-secret-key", "export STRIPE_KEY=sk_live_51\\\n" + Fake(Alnum, 40, 276)},
		{"OpenAI key wrapped and indented", "openai-api-key", "OPENAI_API_KEY:\n  sk-proj-" + Fake(B64URL, 20, 277) + "\n  " + Fake(B64URL, 80, 278)},
		{"Slack token wrapped in JSON", "slack-token", `{"token": "xoxb-1234567890123-12345\n67890123-` + Fake(Alnum, 24, 279) + `"}`},
	}
}

// ordinaryFamilies are notes that come close to the families above
// without holding a credential.
func ordinaryFamilies() []string {
	spki := der("30820122300d06092a864886f70d01010105000382010f003082010a0282010100", 260, 400)
	cert := der("308203773082025fa003020102020900", 860, 401)
	png := base64.StdEncoding.EncodeToString(append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), fakeBytes(300, 402)...))
	return []string{
		"golang.org/x/net v0.25.0 h1:d/OCCoBEUq33pjydKrGQhw7IlUPI2Oylr+8qLx49kac=",
		"golang.org/x/net v0.25.0/go.mod h1:JkAGAh7GEvH74S6FOH42FLoXpXbE/aqXSrIQjXgsiwM=",
		`"integrity": "sha512-` + base64.StdEncoding.EncodeToString(fakeBytes(64, 403)) + `"`,
		"docker pull alpine@sha256:" + Fake(HexLower, 64, 404),
		"Run 2 of the job, commit " + Fake(HexLower, 40, 405) + ", tree " + Fake(HexLower, 40, 406),
		"UUIDv7 0190163d-8694-739b-aea5-966c26f8ad91 and ULID 01HZY8G2M9Q4T6W3X5Z7B9D1FH",
		"-----BEGIN PUBLIC KEY-----\n" + wrap(spki, 64) + "\n-----END PUBLIC KEY-----",
		"ca.crt:\n-----BEGIN CERTIFICATE-----\n" + wrap(cert, 64) + "\n-----END CERTIFICATE-----",
		"client-certificate-data: " + b64Of("-----BEGIN CERTIFICATE-----\n"+wrap(cert, 64)+"\n-----END CERTIFICATE-----\n"),
		"logo: data:image/png;base64," + png,
		"echo aGVsbG8gd29ybGQgZnJvbSB0aGUgQ0kgam9i | base64 -d",
		"config map: " + b64Of("LOG_LEVEL=debug\nPORT=8080\nFEATURE_FLAGS=search,recall\n"),
		"password: YOUR_PASSWORD_HERE",
		"<password>${env.NEXUS_PASSWORD}</password> in settings.xml",
		"<password></password> is left empty on purpose",
		"NPM_TOKEN: ${{ secrets.NPM_TOKEN }}",
		"//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
		`"auths": {"ghcr.io": {"auth": ""}}, "credsStore": "desktop"`,
		"mysql -u root -p shop (it prompts for the password)",
		`mysql -u root -p"$MYSQL_ROOT_PASSWORD" < dump.sql`,
		`sshpass -p "$SSH_PASS" ssh deploy@web1`,
		`curl -u "$JIRA_USER:$JIRA_TOKEN" https://acme.atlassian.net/rest/api/3/myself`,
		"curl -u admin:admin http://localhost:8080 works on a fresh install",
		"redis-cli -a $(cat /run/secrets/redis) --no-auth-warning info",
		"htpasswd -c /etc/nginx/.htpasswd ops asks twice for the password",
		"the pgpass format is hostname:port:database:username:password, mode 0600",
		"localhost:8080:api:v1:health is how the old router named routes",
		"main.go:42:7: undefined: foo (vet, go 1.23)",
		"MAC 00:1a:2b:3c:4d:5e, IPv6 fe80::1ff:fe23:4567:890a, uptime 12:30:05",
		"kubeconfig: client-certificate-data and client-key-data come from the CA bundle",
		"ETH address 0x" + Fake(HexLower, 40, 407) + " holds the treasury",
		"tx hash 0x" + Fake(HexLower, 64, 408) + " confirmed in block 19876543",
		"the cache key is the sha256 of the request: " + Fake(HexLower, 64, 409),
		"GPG key fingerprint " + strings.ToUpper(Fake(HexLower, 40, 410)) + ", gpg --recv-keys " + strings.ToUpper(Fake(HexLower, 16, 411)),
		"idempotency key " + Fake(HexLower, 32, 412) + " was replayed twice",
		"BTC donations: 1BoatSLRHtKNngkdXEeobR76b53LETtpyT or bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
		"watch-only wallet from xpub " + extendedKey("0488b21e", false, 413),
		"Action items: review budget, update project plan, cancel lunch, order pizza, book hotel, call uncle about the trip",
		"Remember: abandon ship only if the engine fails; check oil, water and fuel before every long drive to the coast.",
		"Create an app password under Security > App passwords; this will make sure that SMTP keeps working.",
		"read / write ratio is 80 / 20; TCP / UDP both open; admin / viewer roles only",
		"Das Passwort muss mindestens 12 Zeichen lang sein.",
		"mot de passe oublié ? Cliquez sur « Réinitialiser ».",
		"La contraseña debe tener al menos 12 caracteres.",
		"パスワードを忘れた場合は管理者に連絡してください。",
		"пароль должен содержать цифры и буквы",
		"密码长度至少12位，必须包含数字。",
		"The password is in 1Password; the Passwort ist in KeePass; the pw was rotated.",
		"stripe key rotation is due in March; the key is in Vault at secret/data/stripe",
		"sentry auth token expires; regenerate it from the org settings page",
		"primary key " + Fake(HexLower, 32, 414) + " collided with a tombstone",
		"JWT header eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9 alone says nothing",
		"kubectl get secret db -o jsonpath='{.data.password}' | base64 -d",
		"Line one ends with commit " + Fake(HexLower, 40, 415) + "\nand the next line goes on with prose.",
		"build " + Fake(Alnum, 20, 416) + "\nNext: deploy to staging after lunch",
		"The Redis key session:4f3a9c0d2e1b is evicted after 30 minutes",
		"docker login -u ci --password-stdin registry.internal < token.txt",
		"kubectl create secret generic db --from-literal=password=$DB_PASSWORD",
		"The key is 3f786850e387550fdab836ed7e6dc881de23001b, the commit that split the index",
		"ssh key SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s, signing key id 0x3AA5C34371567BD2",
		"the idempotency token 9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d is reused on retries",
	}
}
