#!/usr/bin/env python3
"""LoCoMo turn-retrieval benchmark glue (stdlib only).

  locomo.py records   DIR            turns.jsonl -> records for `mira-remember --jsonl`
  locomo.py facts     DIR STORED     observations.jsonl -> fact records for `mira-remember --jsonl`
  locomo.py questions DIR STORED     questions.jsonl -> questions for `mira-recall --eval`
  locomo.py results   STORED RANKED  map ranked memory ids back to turn ids for score.py

One memory per dialog turn: scope = the conversation, kind = turn, created_at = the
session's date (plus the turn's position in seconds, so turns keep their order), the turn
id kept in a front-matter field `locomo_turn` (not a tag: tags are searched with the text,
and the ids' tokens would be noise). The speaker's name starts the text, as in a chat log.
STORED is what `mira-remember --jsonl` printed: it maps turn ids to memory ids.

`facts` makes one fact per line of observations.jsonl (the benchmark's own model-written
facts about each session): scope = the conversation, kind = fact, extracted_from = the
memory ids of its evidence turns (one id, or a list), created an hour after the last of
them. Observations whose evidence names no stored turn are left out.
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
                "locomo_turn": t["id"],
                "speaker": t["speaker"],
                "session": t["session"],
            }
            print(json.dumps(rec, ensure_ascii=False))


def memory_ids(stored):
    mem = {}
    with open(stored) as f:
        for line in f:
            r = json.loads(line)
            if "locomo_turn" in r:
                mem[r["locomo_turn"]] = r["id"]
    return mem


def turn_times(d):
    when = {}
    pos = {}
    with open(f"{d}/turns.jsonl") as f:
        for line in f:
            t = json.loads(line)
            w = datetime.strptime(t["date"], "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)
            key = (t["conversation"], t["session"])
            pos[key] = pos.get(key, 0) + 1
            when[t["id"]] = w + timedelta(seconds=pos[key])
    return when


def facts(d, stored):
    mem = memory_ids(stored)
    when = turn_times(d)
    with open(f"{d}/observations.jsonl") as f:
        for line in f:
            o = json.loads(line)
            ev = [e for e in o["evidence"] if e in mem]
            if not ev:
                continue
            ids = []
            for e in ev:
                if mem[e] not in ids:
                    ids.append(mem[e])
            rec = {
                "kind": "fact",
                "scope": o["conversation"],
                "text": o["text"],
                "created_at": (max(when[e] for e in ev) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "extracted_from": ids[0] if len(ids) == 1 else ids,
            }
            print(json.dumps(rec, ensure_ascii=False))


def questions(d, stored):
    mem = memory_ids(stored)
    with open(f"{d}/questions.jsonl") as f:
        for i, line in enumerate(f):
            q = json.loads(line)
            print(json.dumps({"id": i, "query": q["question"], "scope": q["conversation"],
                              "expect": [mem[e] for e in q["evidence"] if e in mem]}, ensure_ascii=False))


def results(stored, ranked):
    turn = {m: t for t, m in memory_ids(stored).items()}
    with open(ranked) as f:
        for line in f:
            r = json.loads(line)
            print(json.dumps({"qid": r["qid"], "ids": [turn.get(i, i) for i in r["ids"]]}))


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "records":
        records(sys.argv[2])
    elif cmd == "facts":
        facts(sys.argv[2], sys.argv[3])
    elif cmd == "questions":
        questions(sys.argv[2], sys.argv[3])
    elif cmd == "results":
        results(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
