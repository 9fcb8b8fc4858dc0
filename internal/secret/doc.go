// Package secret finds credentials in text before mira-remember stores it.
//
// The store is committed to git and pasted into LLM prompts, so a secret that
// gets in is hard to get out again. mira-remember therefore refuses a memory
// when Scan finds anything in its text or in any other field that is written
// (tags, project, front matter; each scanned on its own and named in
// Finding.Field), unless the user passes --allow-secret; mira-forget
// refuses a reason the same way, since the reason is written into the
// tombstone and the commit message. Missing a
// real secret costs more than a refusal the user can override, but a scanner
// that trips over ordinary notes, code, hashes, UUIDs and URLs would make the
// tool unusable, so every rule is written to stay quiet on those.
//
// # Rules
//
// Rules with a distinctive format match it exactly and must stand alone as a
// word (not be part of a longer one):
//
//	aws-access-key-id           AKIA…, ASIA…, ABIA…, ACCA… + 16 base32 characters
//	aws-secret-access-key       40 base64 characters assigned to aws_secret_access_key,
//	                            SecretAccessKey and the like
//	gcp-service-account-key     "private_key": "-----BEGIN PRIVATE KEY-----\n…" in key JSON
//	gcp-api-key                 AIza + 35 characters
//	google-oauth-client-secret  GOCSPX-…
//	google-oauth-token          ya29.…
//	azure-storage-key           AccountKey=… / SharedAccessKey=… in connection strings
//	azure-sas-token             sig=… in a shared access signature URL
//	azure-client-secret         xxx8Q~… Entra ID (Azure AD) application secrets
//	github-token                ghp_, gho_, ghu_, ghs_, ghr_, github_pat_
//	gitlab-token                glpat-, gldt-, glrt-, glptt-, glft-, glsoat-, glcbt-,
//	                            glimt-, glagent-, gloas-, glffct-, GR1348941
//	slack-token                 xoxb-, xoxp-, xoxa-, xoxo-, xoxs-, xoxr-, xoxe-, xapp-
//	slack-webhook-url           hooks.slack.com/services/…
//	discord-webhook-url         discord.com/api/webhooks/…
//	anthropic-api-key           sk-ant-…
//	openai-api-key              sk-…, sk-proj-…, sk-svcacct-…, sk-admin-… (32+ characters
//	                            with a digit; other providers share the shape)
//	stripe-secret-key           sk_live_, sk_test_, rk_live_, rk_test_ (test keys still
//	                            grant API access)
//	stripe-webhook-secret       whsec_…
//	twilio-api-key              SK + 32 hex digits
//	sendgrid-api-key            SG.<22>.<43>
//	npm-token                   npm_ + 36
//	pypi-token                  pypi-AgE… (the macaroon prefix every PyPI token has)
//	huggingface-token           hf_…, api_org_…
//	digitalocean-token          dop_v1_, doo_v1_, dor_v1_
//	shopify-token               shpat_, shpca_, shppa_, shpss_
//	docker-hub-token            dckr_pat_, dckr_oat_
//	heroku-api-key              HRKU-… (older keys are UUIDs: see generic-assignment)
//	mailgun-api-key             key- + 32 hex digits
//	discord-bot-token           <user id in base64>.<6>.<27-40>; the first part must
//	                            decode to digits
//	telegram-bot-token          <bot id>:A… (5-16 digits, then about 34 characters)
//	square-token                sq0atp-, sq0csp-, EAAA…
//	newrelic-key                NRAK-, NRAA-, NRRA-, NRII-
//	vault-token                 hvs., hvb., hvr.
//	linear-api-key              lin_api_
//	grafana-token               glsa_, glc_
//	doppler-token               dp.pt., dp.st., dp.sa., dp.ct., dp.scim., dp.audit.
//	postman-api-key             PMAK-
//	atlassian-api-token         ATATT3…
//	databricks-token            dapi + 32 hex digits
//	age-secret-key              AGE-SECRET-KEY-1…
//	jwt                         eyJ….eyJ….signature (an unsigned token is not a credential)
//	private-key                 -----BEGIN … PRIVATE KEY----- (RSA, EC, DSA, OPENSSH,
//	                            ENCRYPTED, PGP … BLOCK, SSH2) followed by a key body
//	putty-private-key           the Private-Lines section of a .ppk file
//
// Rules that recognise a structure rather than a prefix:
//
//	private-key-body            base64 DER that begins as a private key does (a
//	                            SEQUENCE whose first element is version 0, 1 or 3:
//	                            PKCS#1, PKCS#8, SEC 1, PKCS#12), without its BEGIN
//	                            line; certificates and public keys begin otherwise
//	wallet-private-key          64 hex digits (with or without 0x) after "private
//	                            key", "privkey", "signing key" and the like; a
//	                            Bitcoin WIF key or BIP 32 xprv/tprv key whose
//	                            base58 checksum holds (addresses and xpub keys do
//	                            not count)
//	seed-phrase                 12, 15, 18, 21 or 24 words of the BIP 39 English
//	                            list in a row (blanks, commas, line breaks and list
//	                            numbers between them) whose checksum holds; the run
//	                            of list words must be exactly that long
//	encoded-credentials         base64 user:password as the "auth" of a Docker or
//	                            Podman config.json or an .npmrc _auth, and the
//	                            base64 password of an .npmrc _password
//	command-line-password       a password given to mysql/mysqldump/mariadb (-pX,
//	                            --password=X), sshpass -p, curl -u/--user user:pw,
//	                            redis-cli -a, htpasswd -b, docker/podman/helm
//	                            registry login -p, mongosh -p, sqlcmd -P, ldapsearch
//	                            -w, wget --password=, smbclient -U user%pw; any value
//	                            of four bytes or more that is not a placeholder or
//	                            a variable ($PW, "$(pass show db)")
//	pgpass-entry                host:port:database:user:password, the port digits
//	                            or *, the password chosen or random
//	login-pair                  "admin / Qx7vR2mK9pL4": a known login name (admin,
//	                            root, postgres, …), an e-mail address or any name on
//	                            a line that speaks of a login, then " / " and a
//	                            chosen password or token
//	service-key                 "stripe key 4f3a…", "Algolia admin API key …": key,
//	                            token or secret after a name (and modifiers such as
//	                            api, admin, auth), then optionally is, : or =, then
//	                            a random-looking value; not after words that make a
//	                            key a hash or an id (primary, cache, idempotency,
//	                            public, gpg, commit, …) nor for publishable pk_ keys
//	encoded-secret              a base64 blob of 40 characters or more (on one line
//	                            or wrapped) that decodes to text in which Scan finds
//	                            a secret: a kubeconfig's client-key-data, an env
//	                            file piped through base64
//
// XML elements are assignments too (<password>…</password> in Maven's
// settings.xml, <ApiKey>…</ApiKey>), judged by generic-assignment.
//
// A secret wrapped over two lines is found under its own rule: where a
// line ends in a run of token characters that mixes letters and digits or
// cases (not a whole 40- or 64-digit hex hash) and the next line, after its
// indentation, starts with another, the two are joined and scanned again,
// and what crosses the join is reported. A line break may be a newline, a
// backslash continuing a shell line, or \n escaped in JSON (as tool calls
// and tags carry text); the other rules read \n as a line break too.
// Decoded and joined text is scanned once more, not recursively.
//
// A key block is only reported when a body follows its header, so a note that
// merely mentions "-----BEGIN RSA PRIVATE KEY-----" is not refused. Public
// material (ssh-rsa AAAA… lines, certificates, Stripe pk_ keys, Google client
// IDs) is never reported.
//
// Four rules judge values that have no format of their own:
//
//	url-password          scheme://user:password@host
//	authorization-header  Authorization: Bearer|Basic|Token … (Basic is decoded and
//	                      judged by its password)
//	generic-assignment    a value assigned to a secret-looking name: API_KEY=…,
//	                      export TOKEN=…, password: …, "client_secret": "…",
//	                      s['SECRET_KEY'] = …, Password: "…" in Go, x-api-key: …
//	prose-password        a password given in a sentence: "the password is …",
//	                      "pw for prod db is …", "passphrase was changed to …",
//	                      "the root password for the NAS: …", and the password of
//	                      a .netrc entry
//
// A name looks secret when, ignoring case and punctuation, its last dotted
// segment contains password, passwd, passphrase, secret, token, credential
// or apikey, ends in the word pass or pwd (db_pass, PGPASS, but not compass
// or onePassSignature), or ends in key after a stem such as access, private,
// signing, encryption, master, client or session. Bare "key", primary_key
// and public_key do not count, nor do names that describe a secret instead of
// holding one (token_url, password_file, secret_name, max_tokens, key_id,
// page_token), fields of something else (token.style), the shell's PWD or the
// "--- PASS:" lines of go test.
//
// An assigned value counts only when it is a literal: not code (a call,
// index or composite literal such as os.Getenv("X"), config["k"] or
// &Config{}; a dotted reference such as settings.SECRET_KEY; a variable whose
// name says what it holds, such as db_password; a hex constant such as
// 0x3f879678; the inside of a concatenation such as "PWD="+dir), not a path,
// URL or reference (/run/secrets/db, op://vault/item, arn:…, urn:…), not a
// placeholder (below), and not a repetition of its own name
// ("encryptionKey": "encryptionKey1024"). A literal is then a secret when
//
//   - it looks machine-made: at least 16 bytes, a Shannon entropy of at least
//     3.0 bits per byte, two of lower case, upper case and digits, and not
//     made of words (CreateResponseRequest, yaml_FOLDED_STYLE: no digits and
//     few changes of case); or
//   - the name is a password name and the value looks chosen by a person: at
//     least 8 bytes mixing three of lower case, upper case, digits and
//     symbols.
//
// So "password: Tr0ub4dor&3xK9!" and "PASSWORD=Summer2024" are refused, while
// "password = hunter2" (short, two kinds of character), "password: changeit",
// "token: 4096" and "tokenValue := \"Issue149\"" are not. The price is that
// passphrases made of lower-case words alone, and short passwords, are not
// recognised after a name (in a URL they are, see below); nor is an unquoted
// password that reads as a call, such as Tr0ub(4dor. An unquoted value ends
// at white space, a quote, or one of , ; } ].
//
// In a sentence, one of the words password, passwd, pwd, pw, passphrase,
// passcode or secret, or password in another language (Passwort, Kennwort,
// mot de passe, contraseña, senha, wachtwoord, lösenord, hasło, parola,
// пароль, パスワード, 密码, 비밀번호 and others; standing alone, not part of a
// name such as db_password) is followed by a verb (is, was, is now, set
// to, changed to, became, ist, est, es, é, 是, は, …) or by : or = (or ：),
// optionally after a phrase of a few words that starts with for, of or on
// (für, van, de, para, для, …: "for prod db", "of the admin account"). An
// app password (four groups of four lower-case letters joined by blanks
// or hyphens, at most one of them a common word) needs no verb: "the
// Google app password abcd efgh ijkl mnop". Only
// the first word after the verb is the value, so "password is stored
// hashed with argon2" offers "stored", and "password policy requires 12
// characters" or "the secret to good code is tests" offer nothing. The
// value counts when it is not code, a reference, a placeholder, a version
// (v2.3.1-rc.1), a digest (sha256:…) or a name whose parts are each in one
// case (db-creds-2024, AES-256-GCM, 2FA-protected), and it looks like a
// chosen password (as above), a random token, or holds at least 12 letters
// and digits with some entropy (hunter2correcthorse). Passphrases of
// lower-case words and names such as winter-2024-ski are not recognised.
//
// # Placeholders
//
// Placeholders are allowed: documentation and templates are full of them and
// refusing them would teach users to pass --allow-secret by habit. A password
// in a URL is refused whatever its length or strength (a URL with a password
// in it is a working credential), unless it is a placeholder. In URLs,
// Authorization headers and assignments a value is a placeholder when it
//
//   - is empty or uses at most two distinct characters (xxxx, ****, abab);
//   - is a variable or template reference: $PASS, ${PASS}, $(pass show db),
//     %API_KEY%, {token}, {{ .Token }}, [REDACTED], <password>, (optional);
//   - contains a word such as password, secret, token, your, example,
//     changeme, placeholder, redacted, dummy, sample, replace, xxxx or "...",
//     or a keyboard run (01234, 12345, abcde, qwerty);
//   - (in URLs and Basic credentials) is one of pass, pw, pwd, user,
//     username, admin, root, guest, test, foo, bar, abc, xyz, mypass or
//     pass123, or equals the user name (postgres:postgres and guest:guest
//     are local defaults).
//
// Tokens with a known format are not subject to the word list, only to a
// minimum entropy that rejects ghp_xxxxxxxx… and the like: AWS's documented
// example key AKIAIOSFODNN7EXAMPLE has a real key's shape and is refused.
//
// # Reporting
//
// Line and Column point at the first byte of the secret itself (the value,
// not the name it is assigned to; for a key block, its BEGIN line). Redacted
// keeps at most four characters at each end, none of a secret shorter than
// eight, and masks the rest; a key block shows its header and a masked start
// of its body. When two rules match
// the same bytes only the more specific is reported, so GITHUB_TOKEN=ghp_…
// is one github-token finding.
//
// Scan never runs a regular expression over the whole text, which would be
// slow in Go: each rule names literal keywords found at a fixed place in its
// matches (a prefix such as ghp_, or a word of the assigned name), one
// Aho–Corasick pass finds every keyword, and the rule's anchored expression
// or hand-written parser runs only where a keyword occurs. Keywords in
// other scripts are searched for one by one, and only in text that is not
// ASCII, so that their bytes do not swell the automaton's table. The rules
// without keywords share one more pass over the text, which cuts it into
// runs of base64 characters (blobs, wallet keys, the words of a phrase),
// and a search for line breaks (wrapped secrets).
package secret
