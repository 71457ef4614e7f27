#!/usr/bin/python3
"""Speed-report balancing with prediction (RUPER) against the study's policies.

    validation/study/ruper.py [--scale tiny|study] [--out DIR] [--demsim PATH] [-j N] [--keep]
                        [--scenarios NAME ...] [--policies P ...]

Runs {case1, case2, case5-stress1, case6-ratio50} x {NOW, RW, RW5, RUPER} (scenarios/README.md)
and writes DIR/RUPER.md (a table per scenario: total simulated time, gain over NOW,
repartitions, speed reports, weight oscillation; then a paragraph computed from those
figures) and DIR/ruper.png (gain over NOW and repartitions per policy and scenario). Each run's
outputs are in DIR/<scenario>-<policy>/; --keep reuses a run whose summary.json is already
there (a long sweep that was stopped goes on where it stopped).

Scales: tiny = 20,000 particles, 100 steps, a repartition every 10 (about a minute on 2 cores);
study = 500,000 particles, 500 steps, a repartition every 50 (about half an hour, one run at a
time). Exit status: 0 when every run succeeded, 1 when one failed, 2 on bad arguments.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from sweep import (POLICY_SCALES as SCALES, bar_panels, finish_policy_study, fmt, policy_args,  # noqa: E402
                   run_policies, summary_of)

SCENARIOS = ["case1", "case2", "case5-stress1", "case6-ratio50"]
POLICIES = ["NOW", "RW", "RW5", "RUPER"]
ADAPTING = ["RW", "RW5"]


def collect(scenario, policy, out):
    """The run's figures from its summary.json, or None."""
    s = summary_of(out, scenario, policy)
    if s is None:
        return None
    return {"time": s["sim_time_s"], "reps": s["repartitions"], "reports": s.get("speed_reports", 0),
            "osc": s["weight_oscillation"], "rep_s": s["rank0_timers_s"].get("repartition", 0.0)}


def gain(res, s, p):
    now, r = res.get((s, "NOW")), res.get((s, p))
    return (now["time"] - r["time"]) / now["time"] * 100 if now and r else None


def table(name, res, policies):
    lines = [f"### {name}", "",
             "| policy | total time (s) | gain over NOW (%) | repartitions | time in repartitions (s) | speed reports | "
             "weight oscillation |",
             "|---|---|---|---|---|---|---|"]
    for p in policies:
        r = res.get((name, p))
        if r is None:
            lines.append(f"| {p} | failed | | | | | |")
            continue
        lines.append(f"| {p} | {r['time']:.4g} | {fmt(gain(res, name, p), '.1f')} | {r['reps']} | {r['rep_s']:.3g} | "
                     f"{r['reports']} | {r['osc']:.4f} |")
    return lines + [""]


def findings(res, scenarios, policies):
    """The paragraph under the tables: every figure in it is computed from them."""
    if "RUPER" not in policies:
        return ["RUPER was not run: nothing to compare."]
    ok = [s for s in scenarios if all(res.get((s, p)) for p in policies)]
    if not ok:
        return ["No scenario completed under every policy: nothing to compare."]
    out = []
    others = [p for p in ADAPTING if p in policies]
    for s in ok:
        r = res[(s, "RUPER")]
        parts = [f"On {s} RUPER repartitioned {r['reps']} time{'s' if r['reps'] != 1 else ''} "
                 f"({r['reports']} speed reports)"]
        if "NOW" in policies:
            parts.append(f"gained {gain(res, s, 'RUPER'):.1f} % over NOW")
        for p in others:
            o = res[(s, p)]
            d = (o["time"] - r["time"]) / o["time"] * 100
            parts.append(f"was {abs(d):.1f} % {'faster' if d >= 0 else 'slower'} than {p} ({o['reps']} repartitions)")
        if "RW" in others:
            o = res[(s, "RW")]
            parts.append(f"and of the {o['time'] - r['time']:.3g} s it saved over RW, {o['rep_s'] - r['rep_s']:.3g} s "
                         "were repartitions it did not do")
        out.append(", ".join(parts) + ".")
    for p in others:
        faster = sum(res[(s, "RUPER")]["time"] < res[(s, p)]["time"] for s in ok)
        reps = sum(res[(s, "RUPER")]["reps"] for s in ok), sum(res[(s, p)]["reps"] for s in ok)
        osc = (sum(res[(s, "RUPER")]["osc"] for s in ok) / len(ok), sum(res[(s, p)]["osc"] for s in ok) / len(ok))
        out.append(f"Against {p}: RUPER faster on {faster} of {len(ok)} scenarios, {reps[0]} repartitions against "
                   f"{reps[1]}, mean weight oscillation {osc[0]:.4f} against {osc[1]:.4f}.")
    out += same_runs(res, ok, policies)
    best = {s: min(policies, key=lambda p: res[(s, p)]["time"]) for s in ok}
    out.append("Fastest policy per scenario: " + "; ".join(f"{s}: {best[s]}" for s in ok) + ".")
    return [" ".join(out)]


def stress_on_s(scenario):
    """The first stress period of a scenario with periodic stress (s), or None."""
    import re
    with open(os.path.join(TOP, "scenarios", scenario + ".cfg")) as f:
        m = re.search(r"\bon = ([0-9.eE+-]+);", f.read())
    return float(m.group(1)) if m and float(m.group(1)) > 0 else None


def same_runs(res, ok, policies):
    """Scenarios whose runs came out identical under every policy, and why when it is the stress period."""
    out = []
    for i, a in enumerate(ok):
        for b in ok[i + 1:]:
            if all(res[(a, p)] == res[(b, p)] for p in policies):
                on = [(s, stress_on_s(s)) for s in (a, b) if stress_on_s(s)]
                why = "".join(f" ({s}'s stress stays on for its first {t:g} s, longer than every run here, "
                              f"{max(res[(s, p)]['time'] for p in policies):.3g} s at most)" for s, t in on
                              if t > max(res[(s, p)]["time"] for p in policies))
                out.append(f"{a} and {b} gave the same figures under every policy{why}.")
    return out


def figure(res, scenarios, policies, path):
    bar_panels(scenarios, policies,
               [("gain over NOW (%)", lambda s, p: gain(res, s, p) or 0),
                ("repartitions", lambda s, p: res[(s, p)]["reps"] if res.get((s, p)) else 0)],
               "Speed-report balancing (RUPER) against the study's policies", path)


def main():
    a = policy_args(__doc__, "ruper", SCENARIOS, POLICIES, 1, keep=True)
    if a is None:
        return 2
    scenarios = a.scenarios
    kept, runs = {}, []
    for s in scenarios:
        for p in a.policies:
            r = collect(s, p, a.out) if a.keep else None
            if r:
                kept[(s, p)] = r
            else:
                runs.append((s, p))
    res, failed = run_policies(a, runs, lambda s: os.path.join(TOP, "scenarios", s + ".cfg"),
                               lambda row: collect(row["scenario"], row["policy"], a.out) if row["status"] == 0 else None)
    res.update(kept)
    n, steps, every = SCALES[a.scale]
    lines = ["# Speed-report balancing (RUPER) against NOW, RW and RW5", "",
             f"Scale `{a.scale}`: {n:,} particles, {steps} steps, a checkpoint (a repartition for NOW, RW and RW5) "
             f"every {every}; `validation/study/ruper.py --scale {a.scale}`. RUPER repartitions only where rank 0's "
             "monitor predicts an imbalance above 5 % and enough time left to pay a repartition back (twice its "
             "measured cost); its targets are proportional to the speeds the ranks report (scenarios/README.md). "
             "Time in repartitions: rank 0's REPARTITION timer. Weight oscillation: as in the damping study "
             "(0 when the weights settle). NOW, RW and RW5 repartition at every checkpoint (NOW and RW5 with the same "
             "weights when nothing changes), so part of what RUPER saves is repartitions not done; the paragraph "
             "below says how much.", ""]
    for s in scenarios:
        lines += table(s, res, a.policies)
    lines += ["## What the figures say", ""] + findings(res, scenarios, a.policies) + ["", "![RUPER](ruper.png)", ""]
    return finish_policy_study(a, "ruper", lines, "RUPER.md", "ruper.png",
                               lambda path: figure(res, scenarios, a.policies, path), failed)


if __name__ == "__main__":
    sys.exit(main())
