#!/usr/bin/env python3
"""Print make bench's store timings as one Markdown table, the store sizes
side by side (stdlib only).

  benchtable.py ROWS.tsv > table.md

ROWS.tsv is what scripts/bench.sh writes (size, label, mira ms, other ms,
mira peak RSS MB, other peak RSS MB). Each row of the table is one
measurement; each cell gives Mira's time and peak RSS, the other tool's
time, and the ratio of the two, from the same run. A size the run did not
reach shows a dash.
"""
import sys

from benchchart import generic


def ms(v):
    if v >= 10000:
        return "%.0f s" % (v / 1000)
    if v >= 1000:
        return "%.1f s" % (v / 1000)
    return "%.1f ms" % v if v < 100 else "%.0f ms" % v


def size(n):
    return "%dM" % (n // 1000000) if n >= 1000000 and n % 1000000 == 0 else (
        "%dk" % (n // 1000) if n >= 1000 and n % 1000 == 0 else str(n))


def main():
    rows, labels = {}, []
    for line in open(sys.argv[1]):
        f = line.rstrip("\n").split("\t")
        if len(f) < 6:
            continue
        try:
            n, a, b = int(f[0]), float(f[2]), float(f[3])
        except ValueError:
            continue
        key = generic(f[1]).replace(" N memories", "")
        if key not in labels:
            labels.append(key)
        rows[(key, n)] = (a, b, f[4], f[5])
    sizes = sorted({n for _, n in rows})
    print("| p50 (Mira's peak RSS) | " + " | ".join(size(n) for n in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for key in labels:
        cells = []
        for n in sizes:
            r = rows.get((key, n))
            if r is None:
                cells.append("-")
                continue
            a, b, ra, _ = r
            cells.append("%s (%s MB) vs %s: %.2gx" % (ms(a), ra, ms(b), a / b if b else 0))
        print("| %s | %s |" % (key, " | ".join(cells)))


if __name__ == "__main__":
    main()
