package secret

import "regexp"

// buildRules returns the rules ordered from the most specific to the most
// generic: when two hits overlap, the earlier rule's is kept. Expressions
// are anchored at the start of the match, which is back bytes before the
// keyword.
func buildRules() []*rule {
	return []*rule{
		{
			id:       "gcp-service-account-key",
			desc:     "Google Cloud service account private key",
			keywords: []string{`"private_key"`},
			re:       anchored(`"private_key"\s*:\s*"((-----BEGIN [A-Z ]*PRIVATE KEY-----)(?:\\r)?\\n([A-Za-z0-9+/=]{32,}))`),
			check:    pemCheck(1, 2, 3),
		},
		{
			id:        "private-key",
			desc:      "private key block",
			keywords:  []string{"-----BEGIN", "---- BEGIN"},
			span:      2048,
			multiline: true,
			re: anchored(`((-{4,5} ?BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)? ?-{4,5})(?:\s|\\r|\\n)+` +
				`(?:[A-Za-z][A-Za-z0-9-]*: ?[^\r\n\\]*(?:\s|\\r|\\n)+)*([A-Za-z0-9+/=]{32,}))`),
			check: pemCheck(1, 2, 3),
		},
		{
			id:        "putty-private-key",
			desc:      "PuTTY private key",
			keywords:  []string{"Private-Lines:"},
			span:      2048,
			multiline: true,
			re:        anchored(`((Private-Lines: *[0-9]+)(?:\r?\n|\\r?\\n)([A-Za-z0-9+/=]{32,}))`),
			check:     pemCheck(1, 2, 3),
		},
		{
			id:    "private-key-body",
			desc:  "private key body without its header",
			whole: blobRule,
		},
		{
			id:       "aws-access-key-id",
			desc:     "AWS access key ID",
			keywords: []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"},
			re:       anchored(`(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16}`),
			bounded:  true,
			check:    token(0, 2.5, false),
		},
		{
			id:       "aws-secret-access-key",
			desc:     "AWS secret access key",
			keywords: []string{"secret"},
			fold:     true,
			match:    assignmentRule(awsSecretCheck),
		},
		{
			id:       "gcp-api-key",
			desc:     "Google API key",
			keywords: []string{"AIza"},
			re:       anchored(`AIza[0-9A-Za-z_\-]{35}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "google-oauth-client-secret",
			desc:     "Google OAuth client secret",
			keywords: []string{"GOCSPX-"},
			re:       anchored(`GOCSPX-[A-Za-z0-9_\-]{28}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "google-oauth-token",
			desc:     "Google OAuth access token",
			keywords: []string{"ya29."},
			re:       anchored(`ya29\.[0-9A-Za-z_\-]{30,}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "azure-storage-key",
			desc:     "Azure storage or service bus account key",
			keywords: []string{"accountkey", "sharedaccesskey"},
			fold:     true,
			re:       anchored(`(?i:AccountKey|SharedAccessKey)\s*=\s*([A-Za-z0-9+/]{40,}={0,2})`),
			bounded:  true,
			check:    token(1, 3.5, false),
		},
		{
			id:       "azure-sas-token",
			desc:     "Azure shared access signature",
			keywords: []string{"sig="},
			back:     1,
			re:       anchored(`[?&;]sig=([A-Za-z0-9%+/]{30,})`),
			bounded:  true,
			check:    token(1, 3.5, false),
		},
		{
			id:       "azure-client-secret",
			desc:     "Azure AD client secret",
			keywords: []string{"Q~"},
			back:     4,
			re:       anchored(`[A-Za-z0-9_~.\-]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}`),
			bounded:  true,
			check:    token(0, 3.5, false),
		},
		{
			id:       "github-token",
			desc:     "GitHub token",
			keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
			re:       anchored(`gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{60,251}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:   "gitlab-token",
			desc: "GitLab token",
			keywords: []string{"glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glsoat-", "glcbt-",
				"glimt-", "glagent-", "gloas-", "glffct-", "GR1348941"},
			re: anchored(`(?:gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent|oas|ffct)-|GR1348941)` +
				`[A-Za-z0-9_\-]{20,}(?:\.[A-Za-z0-9_\-]+)*`),
			check: token(0, 3, false),
		},
		{
			id:       "slack-token",
			desc:     "Slack token",
			keywords: []string{"xox", "xapp-"},
			re:       anchored(`xox[abposre](?:\.xox[bp])?-[0-9]+-[0-9A-Za-z\-]{8,}|xapp-[0-9]-[A-Z0-9]+-[0-9]+-[A-Za-z0-9]+`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "slack-webhook-url",
			desc:     "Slack webhook URL",
			keywords: []string{"hooks.slack.com"},
			re:       anchored(`hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9+/_\-]{20,})`),
			bounded:  true,
			check:    token(1, 3, false),
		},
		{
			id:       "discord-webhook-url",
			desc:     "Discord webhook URL",
			keywords: []string{"discord"},
			fold:     true,
			re:       anchored(`discord(?:app)?\.com/api/webhooks/([0-9]+/[A-Za-z0-9_\-]{40,})`),
			bounded:  true,
			check:    token(1, 3, false),
		},
		{
			id:       "anthropic-api-key",
			desc:     "Anthropic API key",
			keywords: []string{"sk-ant-"},
			re:       anchored(`sk-ant-[a-z0-9]+-[A-Za-z0-9_\-]{32,}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "openai-api-key",
			desc:     "OpenAI-style API key",
			keywords: []string{"sk-"},
			// Other providers (DeepSeek, Moonshot, …) use the same sk- shape. The
			// body must hold a digit so that hyphenated words such as
			// "sk-learn-compatible-…" are not taken for keys.
			re:      anchored(`sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{32,}`),
			bounded: true,
			check:   token(0, 3, true),
		},
		{
			id:       "stripe-secret-key",
			desc:     "Stripe secret or restricted key",
			keywords: []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_"},
			re:       anchored(`[sr]k_(?:live|test)_[A-Za-z0-9]{20,247}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "stripe-webhook-secret",
			desc:     "Stripe webhook signing secret",
			keywords: []string{"whsec_"},
			re:       anchored(`whsec_[A-Za-z0-9+/=]{24,}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "twilio-api-key",
			desc:     "Twilio API key",
			keywords: []string{"SK"},
			re:       anchored(`SK[0-9a-fA-F]{32}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "sendgrid-api-key",
			desc:     "SendGrid API key",
			keywords: []string{"SG."},
			re:       anchored(`SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "npm-token",
			desc:     "npm access token",
			keywords: []string{"npm_"},
			re:       anchored(`npm_[A-Za-z0-9]{36}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "pypi-token",
			desc:     "PyPI upload token",
			keywords: []string{"pypi-AgE"},
			re:       anchored(`pypi-AgE[A-Za-z0-9_\-]{50,}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "huggingface-token",
			desc:     "Hugging Face access token",
			keywords: []string{"hf_", "api_org_"},
			re:       anchored(`(?:hf_|api_org_)[A-Za-z0-9]{34,40}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "digitalocean-token",
			desc:     "DigitalOcean token",
			keywords: []string{"dop_v1_", "doo_v1_", "dor_v1_"},
			re:       anchored(`do[opr]_v1_[a-f0-9]{64}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "shopify-token",
			desc:     "Shopify access token or shared secret",
			keywords: []string{"shpat_", "shpca_", "shppa_", "shpss_"},
			re:       anchored(`shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "docker-hub-token",
			desc:     "Docker Hub access token",
			keywords: []string{"dckr_pat_", "dckr_oat_"},
			re:       anchored(`dckr_(?:pat|oat)_[A-Za-z0-9_\-]{27,}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "heroku-api-key",
			desc:     "Heroku API key",
			keywords: []string{"HRKU-"},
			re:       anchored(`HRKU-[A-Za-z0-9_\-]{60}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "mailgun-api-key",
			desc:     "Mailgun API key",
			keywords: []string{"key-"},
			re:       anchored(`key-[0-9a-f]{32}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "discord-bot-token",
			desc:     "Discord bot token",
			keywords: discordKeywords(),
			re:       anchored(`([MNO][A-Za-z0-9]{22,27})\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}`),
			bounded:  true,
			check:    discordCheck,
		},
		{
			id:       "telegram-bot-token",
			desc:     "Telegram bot token",
			keywords: []string{":A"},
			match:    telegramRule,
		},
		{
			id:       "square-token",
			desc:     "Square access token or application secret",
			keywords: []string{"sq0atp-", "sq0csp-", "EAAA"},
			re:       anchored(`sq0atp-[A-Za-z0-9_\-]{22}|sq0csp-[A-Za-z0-9_\-]{43}|EAAA[A-Za-z0-9_\-+=]{60}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "newrelic-key",
			desc:     "New Relic API or license key",
			keywords: []string{"NRAK-", "NRAA-", "NRRA-", "NRII-"},
			re:       anchored(`NR(?:AK|AA|RA)-[A-Za-z0-9]{27}|NRII-[A-Za-z0-9_\-]{32}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "vault-token",
			desc:     "HashiCorp Vault token",
			keywords: []string{"hvs.", "hvb.", "hvr."},
			re:       anchored(`hv[sbr]\.[A-Za-z0-9_\-]{24,}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "linear-api-key",
			desc:     "Linear API key",
			keywords: []string{"lin_api_"},
			re:       anchored(`lin_api_[A-Za-z0-9]{40}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "grafana-token",
			desc:     "Grafana service account or Cloud token",
			keywords: []string{"glsa_", "glc_"},
			re:       anchored(`glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,400}={0,2}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "doppler-token",
			desc:     "Doppler token",
			keywords: []string{"dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."},
			re:       anchored(`dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "postman-api-key",
			desc:     "Postman API key",
			keywords: []string{"PMAK-"},
			re:       anchored(`PMAK-[a-f0-9]{24}-[a-f0-9]{34}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "atlassian-api-token",
			desc:     "Atlassian API token",
			keywords: []string{"ATATT3"},
			re:       anchored(`ATATT3[A-Za-z0-9_\-=]{150,}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "databricks-token",
			desc:     "Databricks access token",
			keywords: []string{"dapi"},
			re:       anchored(`dapi[a-f0-9]{32}(?:-[0-9])?`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "age-secret-key",
			desc:     "age secret key",
			keywords: []string{"AGE-SECRET-KEY-1"},
			re:       anchored(`AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "jwt",
			desc:     "JSON Web Token",
			keywords: []string{"eyJ"},
			re:       anchored(`eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{16,}`),
			bounded:  true,
			check:    token(0, 3, false),
		},
		{
			id:       "wallet-private-key",
			desc:     "cryptocurrency wallet private key",
			keywords: walletKeyWords,
			fold:     true,
			match:    walletHexRule,
		},
		{
			id:   "seed-phrase",
			desc: "wallet recovery phrase (BIP 39)",
			// Found by private-key-body's pass (see phraseScan).
		},
		{
			id:       "encoded-credentials",
			desc:     "base64 credentials in a registry or npm config",
			keywords: []string{"auth", "_password"},
			fold:     true,
			match:    assignmentRule(encodedCredentialsCheck),
		},
		{
			id:       "command-line-password",
			desc:     "password on a command line",
			keywords: cliKeywords(),
			match:    cliPasswordRule,
		},
		{
			id:       "pgpass-entry",
			desc:     "password in a .pgpass line",
			keywords: pgpassKeywords(),
			match:    pgpassRule,
		},
		{
			id:       "url-password",
			desc:     "password in URL",
			keywords: []string{"://"},
			pre:      hasUserinfo,
			// Groups: 1 user, 2 password, 3 host.
			re: anchored(`://([^\s:/?#@\[\]"'<>]*):([^\s/?#@"'<>]+)@` +
				`([A-Za-z0-9._~%\-]+|\[[0-9A-Fa-f:.]+\])`),
			check: urlPasswordCheck,
		},
		{
			id:       "authorization-header",
			desc:     "credentials in Authorization header",
			keywords: []string{"authorization"},
			fold:     true,
			// Groups: 1 scheme, 2 credentials.
			re: anchored(`(?i)authorization["']?\s*[:=]\s*["']?` +
				`(?:(basic|bearer|token|digest|apikey|api-key)\s+)?([^\s"'<>,;]+)`),
			check: authorizationCheck,
		},
		{
			id:       "generic-assignment",
			desc:     "secret assigned to a secret-looking name",
			keywords: []string{"pass", "pwd", "secret", "token", "key", "credential"},
			fold:     true,
			match:    assignmentRule(genericCheck),
		},
		{
			id:       "prose-password",
			desc:     "password given in a sentence",
			keywords: proseKeywords,
			fold:     true,
			match:    proseRule,
		},
		{
			id:       "login-pair",
			desc:     "user name and password given as user / password",
			keywords: []string{" / "},
			match:    loginPairRule,
		},
		{
			id:       "service-key",
			desc:     "key or token given after a service's name",
			keywords: serviceKeyWords,
			fold:     true,
			match:    serviceKeyRule,
		},
		{
			id:   "encoded-secret",
			desc: "base64 text holding a secret",
			// Found by private-key-body's pass over blobs.
		},
		{
			id:    "joined-lines",
			desc:  "secret wrapped over two lines",
			whole: joinedRule,
		},
	}
}

// anchored compiles an expression that must match at the start of its input.
func anchored(expr string) *regexp.Regexp {
	return regexp.MustCompile(`^(?:` + expr + `)`)
}

// discordKeywords begin a Discord bot token: its first part is a user id
// in base64, whose first two characters encode the id's first digit (MT
// for 1, Mj for 2, …, OT for 9). ND and NT (4 and 5) are also the "nd" and
// "nt" of countless English words, which would cost the keyword search a
// hit every few bytes, so for them the third character is added: it
// encodes the second digit, one of ten letters.
func discordKeywords() []string {
	kws := []string{"MT", "Mj", "Mz", "Nj", "Nz", "OD", "OT"}
	for _, p := range []string{"ND", "NT"} {
		for _, c := range "AEIMQUYcgk" {
			kws = append(kws, p+string(c))
		}
	}
	return kws
}
