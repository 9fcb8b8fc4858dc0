#!/usr/bin/env python3
"""Generate a synthetic memory corpus (stdlib only, deterministic).

  gen.py candidates N  prints N recall-shaped records of about 3 KB each (with ids,
                       scores and dates) for timing mira-context
  gen.py N OUTDIR     writes OUTDIR/records.jsonl (for `mira-remember --jsonl`),
                      OUTDIR/fts.sql (an SQLite FTS5 table of the same texts) and
                      OUTDIR/queries.txt (queries drawn from the same vocabulary)

Texts are 15-60 words drawn from a Zipf-like vocabulary of real English words and
made-up identifiers, so term statistics look like notes rather than uniform noise.
The vocabulary has no "password": among a million random sentences some read as
one given in prose, and mira-remember rightly refuses them.
"""
import json
import random
import sys

WORDS = """the a to of and in is for on that with we it this be as use by not are from or
at our have an should when can all new will run api user test build deploy database query
cache index server client request response error log config file version release branch
merge commit review token auth login session profile service cluster node pod container
image docker kubernetes postgres redis kafka queue worker job cron schedule timeout retry
latency memory cpu disk network dns tls certificate proxy gateway route handler middleware
schema migration table column row key value json yaml markdown template render page style
button form input validation payment invoice order cart checkout customer account email
notification webhook event stream batch pipeline metric alert dashboard trace span debug
refactor module package function method interface struct type field variable constant
loop channel goroutine mutex lock race deadlock panic recover context cancel signal
decision preference fact note goal task correction meeting team sprint deadline estimate
""".split()
IDENTS = ["svc-" + w for w in ("billing", "search", "auth", "mailer", "gateway", "ledger")] + \
         ["v%d.%d" % (a, b) for a in range(1, 4) for b in range(10)]


def candidates(n):
    rng = random.Random(7)
    vocab = WORDS + IDENTS
    weights = [1.0 / (i + 1) ** 0.9 for i in range(len(vocab))]
    for i in range(n):
        lines = []
        size = 0
        while size < 3000:
            line = " ".join(rng.choices(vocab, weights, k=rng.randint(8, 20))).capitalize() + "."
            lines.append(line)
            size += len(line) + 1
        print(json.dumps({"id": "C%05d" % i, "kind": "note", "scope": "global", "text": "\n".join(lines),
                          "created_at": "2026-%02d-%02dT10:00:00Z" % (1 + i % 12, 1 + i % 28),
                          "score": round(1 - i / (2 * n), 4)}))


def main():
    if sys.argv[1] == "candidates":
        candidates(int(sys.argv[2]))
        return
    n, out = int(sys.argv[1]), sys.argv[2]
    rng = random.Random(42)
    vocab = WORDS + IDENTS
    weights = [1.0 / (i + 1) ** 0.9 for i in range(len(vocab))]
    kinds = ["fact", "note", "decision", "preference", "task"]
    with open(f"{out}/records.jsonl", "w") as rec, open(f"{out}/fts.sql", "w") as sql:
        sql.write("CREATE VIRTUAL TABLE m USING fts5(id UNINDEXED, body, tokenize='porter');\nBEGIN;\n")
        for i in range(n):
            words = rng.choices(vocab, weights, k=rng.randint(15, 60))
            text = " ".join(words).capitalize() + "."
            day = 1 + (i * 365 // max(n, 1))
            created = "2026-%02d-%02dT%02d:%02d:%02dZ" % (1 + (day - 1) // 31 % 12, 1 + (day - 1) % 28,
                                                      i % 24, i % 60, (i * 7) % 60)
            rec.write(json.dumps({"kind": kinds[i % len(kinds)], "text": text, "created_at": created,
                                  "tags": ["gen", "t%d" % (i % 50)]}) + "\n")
            sql.write("INSERT INTO m VALUES(%d, '%s');\n" % (i, text.replace("'", "''")))
        sql.write("COMMIT;\n")
    with open(f"{out}/queries.txt", "w") as q:
        for _ in range(20):
            q.write(" ".join(rng.sample(vocab[20:], 3)) + "\n")


if __name__ == "__main__":
    main()
