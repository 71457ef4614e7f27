#!/usr/bin/python3
"""Several comparisons of one scenario made at different times, summarised: for each row of
compare_real.json (total time, per-rank load, the gain of RW over NOW), the median over the
comparisons of the measured and predicted figures and of the error, with its spread.

    validation/study/compare_spread.py DIR DIR DIR... --out OUT [--bound 15] [--gain-bound 5]

Each DIR is the --out of one `validation/study/compare_real.py SCENARIO --hostmap MAP ...` run
(its own probe, native runs and SMPI runs, made at its own time). The host's speed moves between
comparisons (minutes apart on a shared machine); a figure that holds in the median of several,
with its spread shown, says more than one that holds once. Writes OUT/SPREAD.md and
OUT/spread.json, OUT/spread.png, and copies each comparison's COMPARE.md, compare_real.json, compare_real.png,
platform.xml and probe files into OUT/<name of DIR>/.

The bounds (percent for times, points for the gain and lambda) mark the rows whose median error
is within them. Exit status: 0, 2 on bad input (a DIR without compare_real.json, fewer than two).
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

KEEP = ["COMPARE.md", "EMULATED.md", "compare_real.json", "compare_real.png", "emulated.png", "pingpong.json",
        "platform.xml", "probe-interleaved.json",
        "kernel-samples.jsonl", "quota-samples.jsonl", "search-samples.jsonl", "stack.json", "platform-stack.xml",
        os.path.join("probe", "probe.json")]


def fail(msg):
    sys.stderr.write(f"compare_spread.py: {msg}\n")
    raise SystemExit(2)


def load(d):
    path = os.path.join(d, "compare_real.json")
    if not os.path.isfile(path):
        fail(f"{d}: no compare_real.json (expected the --out of a compare_real.py run)")
    rep = json.load(open(path))
    # when its runs were measured (a prediction remade with --resume keeps them), else the file's time
    rep["dir"] = d
    rep["when"] = rep.get("measured_from") or time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(os.path.getmtime(path)))
    md = next((os.path.join(d, m) for m in ("COMPARE.md", "EMULATED.md") if os.path.isfile(os.path.join(d, m))), None)
    rep["command"] = next((l for l in open(md) if l.startswith("Command:")), "").strip() if md else ""
    return rep


def error_of(r):
    """The row's error: percent for times and loads, points for lambda and the gain."""
    return r["error_percent"] if r["error_percent"] is not None else r["predicted"] - r["measured"]


def case_of(r):
    """A row's policy (compare_real.py's host-map rows) or case (its --emulate rows: lattice and policy)."""
    return r.get("policy") or r.get("case")


def spread_rows(reps):
    """[(what, policy, unit, [measured], [predicted], [error])] in the first comparison's order; rows
    without an error in every comparison (not compared) are left out."""
    out = []
    for i, r0 in enumerate(reps[0]["rows"]):
        same = [next((r for r in rep["rows"] if r["what"] == r0["what"] and case_of(r) == case_of(r0)), None)
                for rep in reps]
        if any(s is None or s.get("error_percent") is None and "gain" not in s["what"]
               and not s["what"].startswith("lambda") for s in same):
            continue
        unit = "%" if r0["error_percent"] is not None else "points"
        out.append((r0["what"], case_of(r0), unit, [s["measured"] for s in same], [s["predicted"] for s in same],
                    [error_of(s) for s in same]))
    return out


def write(args, reps, rows):
    lines = [f"# Predicted against measured, {len(reps)} comparisons at different times: "
             f"{os.path.basename(reps[0]['scenario'])}", "",
             f"Command: `{' '.join(['validation/study/compare_spread.py'] + args.dirs + ['--out', args.out])}`; each "
             "comparison is one `validation/study/compare_real.py` run (its own probe, interleaved native runs and "
             "SMPI runs), in its folder here:", ""]
    lines += [f"- `{os.path.basename(os.path.normpath(r['dir']))}/`: {r['when']}"
              + (f"; {r['command'][len('Command: '):]}" if r["command"] else "") for r in reps]
    lines += ["", f"Median over the comparisons, the spread min to max. Within: the median error within "
              f"{args.bound:g} % (times, loads) or {args.gain_bound:g} points (the gain; lambda is shown, "
              "not bounded).", "",
              "| what | policy | measured | predicted | error, median | error, min to max | within |",
              "|---|---|---|---|---|---|---|"]
    within = {}
    for what, pol, unit, m, p, e in rows:
        med = statistics.median(e)
        sign = "%" if unit == "%" else " points"
        ok = None if what.startswith("lambda") else abs(med) <= (args.bound if unit == "%" else args.gain_bound)
        within[f"{what} {pol}"] = ok
        lines.append(f"| {what} | {pol} | {statistics.median(m):.4g} | {statistics.median(p):.4g} | {med:+.1f}{sign} | "
                     f"{min(e):+.1f} to {max(e):+.1f}{sign} | {'-' if ok is None else ('yes' if ok else 'no')} |")
    lines += ["", "![each row's error, median and spread](spread.png)"]
    lines += ["", "Each comparison's own report: " + ", ".join(
        f"[{os.path.basename(os.path.normpath(r['dir']))}]({os.path.basename(os.path.normpath(r['dir']))}/"
        f"{'EMULATED.md' if r.get('emulate') else 'COMPARE.md'})" for r in reps), ""]
    with open(os.path.join(args.out, "SPREAD.md"), "w") as f:
        f.write("\n".join(lines))
    with open(os.path.join(args.out, "spread.json"), "w") as f:
        json.dump({"comparisons": [dict(dir=os.path.basename(os.path.normpath(r["dir"])), when=r["when"])
                                   for r in reps],
                   "rows": [dict(what=w, policy=p, unit=u, measured=m, predicted=pr, error=e,
                                 error_median=statistics.median(e), within=within[f"{w} {p}"])
                            for w, p, u, m, pr, e in rows]}, f, indent=1)
    print("\n".join(lines))


def figure(args, rows):
    """spread.png: each bounded row's error (the messages' are in each run's emulated.png), the median
    as a bar, every comparison a dot, the bounds."""
    import figures  # noqa: E402  (matplotlib, Agg backend)
    from figures import plt
    rows = [r for r in rows if not r[0].startswith(("lambda", "message time"))]
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(rows) + 1.4))
    for i, (what, pol, unit, m, p, e) in enumerate(rows):
        bound = args.bound if unit == "%" else args.gain_bound
        med = statistics.median(e)
        ax.barh(i, med, color="tab:blue" if abs(med) <= bound else "tab:red", alpha=0.6)
        ax.plot(e, [i] * len(e), "k.", ms=5)
        ax.plot([-bound, -bound], [i - 0.4, i + 0.4], "k:", lw=1)
        ax.plot([bound, bound], [i - 0.4, i + 0.4], "k:", lw=1)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{w.replace(' (s)', '').replace(' (%)', '')} {pol} ({'%' if u == '%' else 'points'})"
                        for w, pol, u, *_ in rows], fontsize=8)
    ax.axvline(0, color="k", lw=0.8)
    ax.set_xlabel("error: % of measured (points for the gain); bar: median, dots: each comparison")
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "spread.png"), dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--bound", type=float, default=15.0)
    ap.add_argument("--gain-bound", type=float, default=5.0)
    args = ap.parse_args()
    if len(args.dirs) < 2:
        fail("give at least two comparisons (DIR DIR ...)")
    reps = [load(d) for d in args.dirs]
    os.makedirs(args.out, exist_ok=True)
    for r in reps:
        dst = os.path.join(args.out, os.path.basename(os.path.normpath(r["dir"])))
        if os.path.abspath(dst) == os.path.abspath(r["dir"]):
            continue
        for k in KEEP:
            if os.path.isfile(os.path.join(r["dir"], k)):
                os.makedirs(os.path.dirname(os.path.join(dst, k)), exist_ok=True)
                shutil.copy(os.path.join(r["dir"], k), os.path.join(dst, k))
    rows = spread_rows(reps)
    write(args, reps, rows)
    figure(args, rows)


if __name__ == "__main__":
    main()
