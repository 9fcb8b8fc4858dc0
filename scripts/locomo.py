#!/usr/bin/env python3
"""LoCoMo turn-retrieval benchmark glue (stdlib only).

  locomo.py records   DIR            turns.jsonl -> records for `mira-remember --jsonl`
  locomo.py questions DIR            questions.jsonl -> questions for `mira-recall --eval`
  locomo.py results   STORED RANKED  map ranked memory ids back to turn ids for score.py

One memory per dialog turn: scope = the conversation, kind = turn, created_at = the
session's date (plus the turn's position in seconds, so turns keep their order), the turn
id kept in a tag `locomo:<turn id>`. The speaker's name starts the text, as in a chat log.
"""
import json
import sys
from datetime import datetime, timedelta, timezone


def records(d):
    pos = {}
    with open(f"{d}/turns.jsonl") as f:
        for line in f:
            t = json.loads(line)
            when = datetime.strptime(t["date"], "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)
            key = (t["conversation"], t["session"])
            pos[key] = pos.get(key, 0) + 1
            when += timedelta(seconds=pos[key])
            rec = {
                "kind": "turn",
                "scope": t["conversation"],
                "role": "user",
                "text": f'{t["speaker"]}: {t["text"]}',
                "created_at": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "tags": ["locomo:" + t["id"]],
                "speaker": t["speaker"],
                "session": t["session"],
            }
            print(json.dumps(rec, ensure_ascii=False))


def questions(d):
    with open(f"{d}/questions.jsonl") as f:
        for i, line in enumerate(f):
            q = json.loads(line)
            print(json.dumps({"id": i, "query": q["question"], "scope": q["conversation"],
                              "expect_tags": ["locomo:" + e for e in q["evidence"]]}, ensure_ascii=False))


def results(stored, ranked):
    turn = {}
    with open(stored) as f:
        for line in f:
            r = json.loads(line)
            for t in r.get("tags") or []:
                if t.startswith("locomo:"):
                    turn[r["id"]] = t[len("locomo:"):]
    with open(ranked) as f:
        for line in f:
            r = json.loads(line)
            print(json.dumps({"qid": r["qid"], "ids": [turn.get(i, i) for i in r["ids"]]}))


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "records":
        records(sys.argv[2])
    elif cmd == "questions":
        questions(sys.argv[2])
    elif cmd == "results":
        results(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
