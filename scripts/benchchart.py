#!/usr/bin/env python3
"""Draw make bench's timings as an SVG chart (stdlib only).

  benchchart.py ROWS.tsv > chart.svg

ROWS.tsv has one line per measurement: size, label, mira ms, other ms,
mira peak RSS MB, other peak RSS MB (scripts/bench.sh writes it). The chart
shows, for each label, the ratio mira / other at each store size on a log
scale, 1.0 (as fast as the other tool) marked, with both times beside it.
"""
import html
import math
import sys


def main():
    rows = []
    for line in open(sys.argv[1]):
        f = line.rstrip("\n").split("\t")
        if len(f) < 6:
            continue
        size, label, a, b, ra, rb = f[:6]
        try:
            rows.append((int(size), label, float(a), float(b), ra, rb))
        except ValueError:
            continue
    sizes = sorted({r[0] for r in rows})
    labels = []
    for r in rows:
        key = generic(r[1])
        if key not in labels:
            labels.append(key)
    by = {(generic(r[1]), r[0]): r for r in rows}

    colors = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759"]
    lo, hi = 0.05, 100.0  # ratio axis, log scale
    left, top, barh, gap, width = 420, 50, 14, 12, 420
    group = len(sizes) * barh + gap
    height = top + len(labels) * group + 60

    def x(ratio):
        ratio = min(max(ratio, lo), hi)
        return left + width * (math.log10(ratio) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">'
           % (left + width + 260, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="20" font-size="14" font-weight="bold">mira / the tool a user would use instead '
           '(whole process, p50; below 1 is faster)</text>']
    for t in [0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100]:
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>'
                   % (x(t), top - 5, x(t), height - 50, "#333" if t == 1 else "#ddd"))
        out.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%g×</text>' % (x(t), height - 35, t))
    for i, lab in enumerate(labels):
        y0 = top + i * group
        out.append('<text x="%d" y="%d" text-anchor="end">%s</text>'
                   % (left - 8, y0 + len(sizes) * barh / 2 + 4, html.escape(lab)))
        for j, n in enumerate(sizes):
            r = by.get((lab, n))
            if r is None:
                continue
            y = y0 + j * barh
            ratio = r[2] / r[3] if r[3] else hi
            out.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>'
                       % (left, y, max(x(ratio) - left, 1), barh - 2, colors[j % len(colors)]))
            out.append('<text x="%d" y="%d" fill="#333">%.2f×  %s vs %s  (%s / %s MB)</text>'
                       % (left + width + 6, y + barh - 4, ratio, ms(r[2]), ms(r[3]), r[4], r[5]))
    ly = height - 15
    for j, n in enumerate(sizes):
        out.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>' % (left + j * 110, ly - 10, colors[j % len(colors)]))
        out.append('<text x="%d" y="%d">%s entries</text>' % (left + j * 110 + 16, ly, "{:,}".format(n)))
    out.append("</svg>")
    print("\n".join(out))


def generic(label):
    """The label without the store's size, so sizes share a row."""
    words = label.split()
    return " ".join("N" if w.replace(",", "").isdigit() and len(w) >= 4 else w for w in words)


def ms(v):
    return "%.0f s" % (v / 1000) if v >= 10000 else ("%.1f ms" % v if v < 100 else "%.0f ms" % v)


if __name__ == "__main__":
    main()
