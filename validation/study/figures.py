"""The validation figures, drawn with matplotlib from the runs' summary.json and metrics.csv.

load_runs() reads the runs; draw_all() writes every PNG and returns {key: (file name, caption)}.
A figure whose runs are missing is still drawn (with what exists) and says so in its title, so
that the report never links a missing file. Units: simulated seconds under SMPI, percent for
the imbalance lambda = (L_max / L_avg - 1) * 100, milliseconds per time step for loads.
"""
import csv
import json
import os

import sweep  # noqa: F401  (first: the interpreter check)

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

POLICY_STYLE = {"NOW": dict(color="tab:red", ls="-"), "RW": dict(color="tab:blue", ls="-"),
                "RW5": dict(color="tab:green", ls="--"), "EWMA": dict(color="tab:purple", ls="-."),
                "PI": dict(color="tab:orange", ls=":"), "RUPER": dict(color="tab:brown", ls="-")}
DPI = 110


class Metrics:
    """metrics.csv of one run as arrays: steps (n), per-rank fields (n x ranks)."""

    def __init__(self, path):
        with open(path) as f:
            rows = list(csv.DictReader(f))
        steps = sorted({int(r["step"]) for r in rows})
        ranks = sorted({int(r["rank"]) for r in rows})
        si = {s: i for i, s in enumerate(steps)}
        n, p = len(steps), len(ranks)
        self.steps = np.array(steps, dtype=float)
        self.time = np.zeros(n)
        self.lam = np.zeros(n)
        self.repart = np.zeros(n, dtype=bool)
        self.hosts = [""] * p
        fields = ("load_s", "wait_s", "comm_s", "weight", "particles", "ghosts")
        arr = {k: np.zeros((n, p)) for k in fields}
        for r in rows:
            i, j = si[int(r["step"])], int(r["rank"])
            self.time[i] = float(r["time_s"])
            self.lam[i] = float(r["lambda_percent"])
            self.repart[i] = r["repartitioned"] == "1"
            self.hosts[j] = r["host"]
            for k in fields:
                arr[k][i, j] = float(r[k])
        self.load, self.wait, self.comm = arr["load_s"], arr["wait_s"], arr["comm_s"]
        self.weight, self.particles, self.ghosts = arr["weight"], arr["particles"], arr["ghosts"]
        self.ranks = p
        # steps in each metrics interval (the first starts at step 0)
        self.dsteps = np.diff(np.concatenate([[0.0], self.steps]))
        self.dtime = np.diff(np.concatenate([[0.0], self.time]))


def load_runs(runs_dir, names):
    """{run name: {"summary": dict, "m": Metrics}} for every run that finished."""
    data = {}
    for name in names:
        d = os.path.join(runs_dir, name)
        s, m = os.path.join(d, "summary.json"), os.path.join(d, "metrics.csv")
        if not (os.path.exists(s) and os.path.exists(m)):
            continue
        with open(s) as f:
            summary = json.load(f)
        data[name] = {"summary": summary, "m": Metrics(m)}
    return data


def count_oscillation(m):
    """Mean |relative change| of a rank's particle count from one repartition to the next (%),
    and the share of changes that reverse the previous one's sign (%), from the second repartition."""
    idx = np.nonzero(m.repart)[0]
    if len(idx) < 3:
        return None, None
    counts = m.particles[idx]  # rows right after each repartition
    d = np.diff(counts, axis=0)[1:]
    rel = np.abs(d) / np.maximum(counts[1:-1], 1) * 100.0
    signs = np.sign(d)
    rev = [(signs[i] * signs[i - 1] < 0).mean() * 100 for i in range(1, len(signs))] if len(signs) > 1 else [0.0]
    return float(rel.mean()), float(np.mean(rev))


def total(data, name):
    r = data.get(name)
    return r["summary"]["sim_time_s"] if r else None


def gain(data, base, other):
    """The gain of run other over run base, (T_base - T_other) / T_base in %; None when one is missing."""
    t0, t = total(data, base), total(data, other)
    return (t0 - t) / t0 * 100.0 if t0 and t is not None else None


def gain_spread(by_seed, base, other):
    """(mean, min, max, n) of gain(base, other) over the n noise seeds whose pair ran (by_seed: one
    load_runs dict a seed, seed 1 first; run_validation.py --seeds); None with fewer than two seeds
    or no pair. The one place the report and the figures take a gain's spread from."""
    if not by_seed or len(by_seed) < 2:
        return None
    from oscillation import spread  # the seeded studies' mean and min-max
    gains = [g for g in (gain(d, base, other) for d in by_seed) if g is not None]
    return spread(gains) + (len(gains),) if gains else None


def _save(fig, outdir, fname):
    os.makedirs(outdir, exist_ok=True)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, fname), dpi=DPI)
    plt.close(fig)
    return fname


def _missing(data, names):
    miss = [n for n in names if n not in data]
    return f" (missing: {', '.join(miss)})" if miss else ""


def _mark_repartitions(ax, m, x, color):
    for xi in x[m.repart]:
        ax.axvline(xi, color=color, lw=0.6, ls=":", alpha=0.7)


def fig_lambda_cases(data, outdir):
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), sharey=True)
    for ax, case in zip(axes, ("case1", "case2", "case3")):
        names = [f"{case}-NOW", f"{case}-RW"]
        for n in names:
            if n in data:
                m = data[n]["m"]
                pol = n.rsplit("-", 1)[1]
                ax.plot(m.time, m.lam, label=pol, **POLICY_STYLE[pol], marker=".", ms=3)
                if pol == "RW":
                    _mark_repartitions(ax, m, m.time, POLICY_STYLE[pol]["color"])
        ax.set_title(case.replace("case", "case ") + _missing(data, names), fontsize=10)
        ax.set_xlabel("simulated time (s)")
        ax.grid(alpha=0.3)
        ax.legend()
    axes[0].set_ylabel("load imbalance λ (%)")
    fig.suptitle("Load imbalance over the run, NOW vs RW (dotted: RW repartitions)", fontsize=11)
    return _save(fig, outdir, "lambda_cases1-3.png")


def fig_exec_time(data, outdir):
    fig, axes = plt.subplots(2, 3, figsize=(13, 6.5), sharex="col")
    for col, case in enumerate(("case1", "case2", "case3")):
        names = [f"{case}-NOW", f"{case}-RW"]
        for n in names:
            if n not in data:
                continue
            m = data[n]["m"]
            pol = n.rsplit("-", 1)[1]
            axes[0, col].plot(m.steps, m.time, label=f"{pol} (total {m.time[-1]:.3g} s)", **POLICY_STYLE[pol])
            axes[1, col].step(m.steps, m.dtime / m.dsteps * 1e3, where="pre", label=pol, **POLICY_STYLE[pol])
        axes[0, col].set_title(case.replace("case", "case ") + _missing(data, names), fontsize=10)
        axes[0, col].set_ylabel("elapsed simulated time (s)")
        axes[1, col].set_ylabel("simulated time per step (ms)")
        axes[1, col].set_xlabel("time step")
        for r in (0, 1):
            axes[r, col].grid(alpha=0.3)
            axes[r, col].legend(fontsize=8)
        axes[1, col].set_ylim(bottom=0)
    fig.suptitle("Execution time over the run (per-step time per metrics interval, repartition cost included)",
                 fontsize=11)
    return _save(fig, outdir, "exectime_cases1-3.png")


def fig_ranks(data, case, outdir):
    fig, axes = plt.subplots(2, 3, figsize=(13, 6.5), sharex=True)
    for row, pol in enumerate(("NOW", "RW")):
        n = f"{case}-{pol}"
        if n not in data:
            axes[row, 0].set_title(f"{pol}: run missing")
            continue
        m = data[n]["m"]
        for j in range(m.ranks):
            lab = f"r{j} {m.hosts[j]}"
            axes[row, 0].step(m.steps, m.load[:, j] / m.dsteps * 1e3, where="pre", label=lab)
            axes[row, 1].step(m.steps, m.weight[:, j], where="pre", label=lab)
            axes[row, 2].step(m.steps, m.particles[:, j], where="pre", label=lab)
        axes[row, 0].set_ylabel(f"{pol}: load per step (ms)")
        axes[row, 1].set_ylabel(f"{pol}: weight (-)")
        axes[row, 2].set_ylabel(f"{pol}: particles owned (-)")
        for c in range(3):
            axes[row, c].grid(alpha=0.3)
            axes[row, c].set_ylim(bottom=0)
        axes[row, 2].legend(fontsize=7, loc="best")
    for c in range(3):
        axes[1, c].set_xlabel("time step")
    fig.suptitle(f"{case.replace('case', 'Case ')}: per-rank computational load, weight and particle count "
                 "(NOW top, RW bottom)", fontsize=11)
    return _save(fig, outdir, f"{case}_ranks.png")


def fig_wait_comm(data, case, outdir):
    fig, ax = plt.subplots(figsize=(9, 4))
    names = [f"{case}-NOW", f"{case}-RW"]
    p = max((data[n]["m"].ranks for n in names if n in data), default=1)
    hosts = next((data[n]["m"].hosts for n in names if n in data), [""] * p)
    x = np.arange(p)
    w = 0.13
    k = 0
    for n in names:
        if n not in data:
            continue
        pol = n.rsplit("-", 1)[1]
        pr = sorted(data[n]["summary"]["per_rank"], key=lambda r: r["rank"])
        for field, hatch in (("load_s", ""), ("wait_s", "//"), ("comm_s", "..")):
            vals = [r[field] for r in pr]
            ax.bar(x + (k - 2.5) * w, vals, w, color=POLICY_STYLE[pol]["color"], hatch=hatch, alpha=0.8,
                   edgecolor="black", lw=0.4, label=f"{pol} {field[:-2]}")
            k += 1
    ax.set_xticks(x)
    ax.set_xticklabels([f"r{j}\n{h}" for j, h in enumerate(hosts)], fontsize=8)
    ax.set_ylabel("time over the run (simulated s)")
    ax.set_title(f"{case.replace('case', 'Case ')}: load, wait and communication time per rank "
                 f"(wait: for the slowest rank; comm: the rest of the MPI time){_missing(data, names)}", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    return _save(fig, outdir, f"{case}_wait_comm.png")


def fig_stress_bars(data, case, stressed, outdir, by_seed=None):
    """Case 4 or 5: NOW / RW / RW5 total time per number of stressed containers, each bar labelled
    with its gain over NOW (and, over several noise seeds, the gain's mean over them)."""
    fig, ax = plt.subplots(figsize=(9, 4))
    ks = [0] + list(stressed)
    pols = ("NOW", "RW", "RW5")
    x = np.arange(len(ks))
    w = 0.26
    missing = []
    for i, pol in enumerate(pols):
        vals = []
        for k in ks:
            n = f"case6-ratio0-{pol}" if k == 0 else f"{case}-stress{k}-{pol}"
            t = total(data, n)
            if t is None:
                missing.append(n)
            vals.append(t if t is not None else 0.0)
        bars = ax.bar(x + (i - 1) * w, vals, w, label=pol, color=POLICY_STYLE[pol]["color"], alpha=0.85)
        if pol != "NOW":
            for b, k in zip(bars, ks):
                base = "case6-ratio0" if k == 0 else f"{case}-stress{k}"
                t0 = total(data, f"{base}-NOW")
                if t0 and b.get_height() > 0:
                    g = (t0 - b.get_height()) / t0 * 100
                    sp = gain_spread(by_seed, f"{base}-NOW", f"{base}-{pol}")
                    ax.text(b.get_x() + b.get_width() / 2, b.get_height(),
                            f"{g:+.1f}%" + (f" (mean {sp[0]:+.1f}%)" if sp else ""), ha="center",
                            va="bottom", fontsize=6, rotation=90)
    ax.set_xticks(x)
    ax.set_xticklabels(["0 (no stress)"] + [str(k) for k in stressed])
    kind = "CPU stress (stress-ng --cpu 2)" if case == "case4" else "memory stress (stress-ng --vm 2)"
    ax.set_xlabel(f"co-located containers under {kind}")
    ax.set_ylabel("total execution time (simulated s)")
    over = f"; mean over {len(by_seed)} noise seeds" if by_seed and len(by_seed) > 1 else ""
    if over:  # room above the bars for the longer labels
        ax.set_ylim(top=ax.get_ylim()[1] * 1.4)
    ax.set_title(f"{case.replace('case', 'Case ')}: total time, NOW / RW / RW5 (labels: gain over NOW{over})"
                 + (f" (missing {len(missing)} runs)" if missing else ""), fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    return _save(fig, outdir, f"{case}_total_time.png")


def fig_case5_lambda(data, outdir, ks=(1, 4)):
    fig, axes = plt.subplots(1, len(ks), figsize=(11, 3.8), sharey=True)
    for ax, k in zip(np.atleast_1d(axes), ks):
        names = [f"case5-stress{k}-{p}" for p in ("NOW", "RW", "RW5")]
        for n in names:
            if n in data:
                m = data[n]["m"]
                pol = n.rsplit("-", 1)[1]
                ax.plot(m.time, m.lam, label=pol, marker=".", ms=3, **POLICY_STYLE[pol])
        ax.set_title(f"case 5, {k} stressed container{'s' if k > 1 else ''}" + _missing(data, names), fontsize=10)
        ax.set_xlabel("simulated time (s)")
        ax.grid(alpha=0.3)
        ax.legend()
    np.atleast_1d(axes)[0].set_ylabel("load imbalance λ (%)")
    return _save(fig, outdir, "case5_lambda.png")


def fig_case6(data, ratios, outdir, by_seed=None):
    """Case 6: total time and gain over NOW against the load frequency ratio; over several noise
    seeds, the gain's min-max over them as a band."""
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4))
    for pol in ("NOW", "RW", "RW5"):
        xs, ts, gs = [], [], []
        for r in ratios:
            t = total(data, f"case6-ratio{r}-{pol}")
            t0 = total(data, f"case6-ratio{r}-NOW")
            if t is None:
                continue
            xs.append(r)
            ts.append(t)
            gs.append((t0 - t) / t0 * 100 if t0 else np.nan)
        a1.plot(xs, ts, marker="o", label=pol, **POLICY_STYLE[pol])
        if pol != "NOW":
            a2.plot(xs, gs, marker="o", label=pol, **POLICY_STYLE[pol])
            _gain_band(a2, by_seed, ratios, pol)
    a1.set_xlabel("load frequency ratio (stress time / run time, %)")
    a1.set_ylabel("total execution time (simulated s)")
    a1.set_title("Case 6: periodic memory stress on one co-located container", fontsize=10)
    a2.set_xlabel("load frequency ratio (%)")
    a2.set_ylabel("gain over NOW (%)")
    a2.axhline(0, color="black", lw=0.6)
    a2.set_title("Case 6: gain of RW and RW5 over NOW", fontsize=10)
    for a in (a1, a2):
        a.grid(alpha=0.3)
        a.legend()
    return _save(fig, outdir, "case6_total_time.png")


def _gain_band(ax, by_seed, ratios, pol):
    """Case 6: the min-max over the noise seeds of pol's gain over NOW at each ratio (none with one seed)."""
    sp = [(r, gain_spread(by_seed, f"case6-ratio{r}-NOW", f"case6-ratio{r}-{pol}")) for r in ratios]
    sp = [(r, x) for r, x in sp if x]
    if sp:
        ax.fill_between([r for r, _ in sp], [x[1] for _, x in sp], [x[2] for _, x in sp], alpha=0.2,
                        color=POLICY_STYLE[pol]["color"], label=f"{pol}, min-max over {len(by_seed)} seeds")


def fig_lambda_now(data, outdir, stressed):
    names = [("case 1", "case1-NOW"), ("case 2", "case2-NOW"), ("case 3", "case3-NOW")] + \
        [(f"case 4, {k}", f"case4-stress{k}-NOW") for k in stressed] + \
        [(f"case 5, {k}", f"case5-stress{k}-NOW") for k in stressed]
    fig, ax = plt.subplots(figsize=(10, 3.8))
    labels, vals = [], []
    for lab, n in names:
        if n in data:
            labels.append(lab)
            vals.append(mean_lambda(data[n]["m"]))
    ax.bar(range(len(vals)), vals, color="tab:red", alpha=0.8)
    ax.set_xticks(range(len(vals)))
    ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("mean load imbalance λ under NOW (%)")
    ax.set_title("Imbalance of each case under equal partitions (NOW)", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, outdir, "lambda_now_all_cases.png")


def mean_lambda(m):
    """λ of the loads summed over the run (per step), as the study's per-run figure."""
    loads = m.load.sum(axis=0)
    return (loads.max() / loads.mean() - 1.0) * 100.0 if loads.mean() > 0 else 0.0


def fig_hardware(hw, outdir):
    rows = [r for r in hw.get("comparisons", []) if r.get("unit") in ("s", "x", "GB/s") and (r.get("measured") or 0) > 0
            and (r.get("predicted") or 0) > 0]
    fig, ax = plt.subplots(figsize=(11, 0.55 * len(rows) + 1.5))
    y = np.arange(len(rows))[::-1]
    ax.barh(y + 0.2, [r["measured"] for r in rows], 0.4, label="measured (native build, Open MPI)", color="tab:gray")
    ax.barh(y - 0.2, [r["predicted"] for r in rows], 0.4, label="predicted (SMPI, probe-calibrated local platform)",
            color="tab:blue")
    ax.set_yticks(y)
    ax.set_yticklabels([f"{r['what']} ({r['unit']})" for r in rows], fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("value, in the unit given with each row (log scale)")
    ax.set_title("Hardware validation on this machine: measured vs predicted", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2)
    return _save(fig, outdir, "hardware.png")


def tornado_rows(data, sens):
    """[(case, constant, k, lambda NOW %, gain RW %)] for the tornado's variants, and the baselines
    {case: (lambda NOW %, gain RW %)} from the validation runs; None where a run is missing."""
    d = sens["data"]

    def lam_gain(src, now, rw):
        lam = mean_lambda(src[now]["m"]) if now in src else None
        t0, t1 = total(src, now), total(src, rw)
        gain = (t0 - t1) / t0 * 100.0 if t0 and t1 is not None else None
        return lam, gain

    base = {case: lam_gain(d, now, rw) for const, k, case, now, rw in sens["variants"] if const == "BASELINE"}
    rows = [(case, const, k) + lam_gain(d, now, rw) for const, k, case, now, rw in sens["variants"] if const != "BASELINE"]
    return rows, base


def fig_tornado(data, sens, outdir):
    rows, base = tornado_rows(data, sens)
    cases = list(base)
    consts = [c for c, _ in sens["constants"]]
    fig, axes = plt.subplots(len(cases), 2, figsize=(11, 1.6 * len(cases) + 1.2), squeeze=False)
    for i, case in enumerate(cases):
        for j, (what, unit) in enumerate((("lambda under NOW, over the run", "%"), ("gain of RW over NOW", "%"))):
            ax = axes[i][j]
            b = base[case][j]
            y = np.arange(len(consts))[::-1]
            for yi, const in zip(y, consts):
                for case_, c_, k, lam, gain in rows:
                    if case_ != case or c_ != const:
                        continue
                    v = (lam, gain)[j]
                    if v is None or b is None:
                        continue
                    ax.barh(yi + (0.18 if k > 1 else -0.18), v - b, 0.34, left=b,
                            color="tab:blue" if k > 1 else "tab:orange", alpha=0.85)
            if b is not None:
                ax.axvline(b, color="k", lw=0.8)
            ax.set_yticks(y)
            ax.set_yticklabels(consts if j == 0 else [""] * len(consts), fontsize=7)
            ax.set_title(f"{case}: {what} (baseline {b:.1f} {unit})" if b is not None else f"{case}: {what}", fontsize=8)
            ax.tick_params(axis="x", labelsize=7)
            ax.grid(axis="x", alpha=0.3)
    fig.suptitle(f"Sensitivity: each calibration constant -{sens['step']:.0%} (orange) and +{sens['step']:.0%} (blue), "
                 f"the others held ({sens['particles']:,} particles, {sens['steps']} steps)", fontsize=10)
    return _save(fig, outdir, "tornado.png")


def draw_all(data, sc, schedules, outdir, hw=None, sens=None, by_seed=None):
    """Writes every figure; returns {key: file name}. by_seed (run_validation.py --seeds): the case
    runs of every noise seed, seed 1's (data) first, for the gains' spread."""
    f = {}
    f["lambda13"] = fig_lambda_cases(data, outdir)
    f["exec13"] = fig_exec_time(data, outdir)
    for c in ("case1", "case2", "case3"):
        f[f"ranks_{c}"] = fig_ranks(data, c, outdir)
    f["waitcomm3"] = fig_wait_comm(data, "case3", outdir)
    f["bars4"] = fig_stress_bars(data, "case4", sc["case45_stressed"], outdir, by_seed)
    f["bars5"] = fig_stress_bars(data, "case5", sc["case45_stressed"], outdir, by_seed)
    ks = [k for k in (1, 4) if k in sc["case45_stressed"]] or sc["case45_stressed"][:2]
    f["lambda5"] = fig_case5_lambda(data, outdir, ks)
    f["case6"] = fig_case6(data, sc["case6_ratios"], outdir, by_seed)
    f["lambda_now"] = fig_lambda_now(data, outdir, sc["case45_stressed"])
    if hw:
        f["hardware"] = fig_hardware(hw, outdir)
    if sens and sens.get("data") is not None:
        f["tornado"] = fig_tornado(data, sens, outdir)
    return f
