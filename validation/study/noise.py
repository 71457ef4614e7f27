#!/usr/bin/python3
"""How much does a native rank's step time vary on this machine, and how long does a variation
last? The measurement behind the noise model's statistics (noise.cpu_cv, noise.cpu_tau;
scenarios/README.md, "Noise").

    validation/study/noise.py [--scale tiny|study|pair] [--out DIR] [--demsim build/native/demsim] [--repeats 3]
                              [--lattice contact|apart] [--configs two-quiet,...]

Runs scenarios/bench-contact.cfg natively (particles in contact, one contact search at the
start; --lattice apart: scenarios/bench-apart.cfg, no contacts, a step bound by memory traffic
rather than arithmetic) with a metrics row every step, placed by
scenarios/emulated/hostmap-local.cfg (--configs: only those named):
  one-quiet  one rank on core 0;
  two-quiet  two ranks, cores 0 and 1;
  one-stress one rank on core 1 beside a memory-stress neighbour (stress-ng --vm) sharing it;
  two-stress two ranks, core 1's beside that neighbour.
Each configuration runs --repeats times, the configurations interleaved (A B C D A B C D ...), so
that a slow minute of the host spreads over all of them rather than one. Per rank and run, of
the per-step load (metrics.csv load_s: the rank's own DEM computing in that step) over the
second half of the run (the first half holds the search and the warm-up of the kernels' caches
and clocks): the mean, the coefficient of variation cv, the autocorrelation at lags 1..100, and
the correlation time tau = the lag at which it falls below 1/e (linear between the lags around
it) x the mean step time, and the cv of the means of consecutive windows of WINDOW steps (what a
repartition interval's measured load carries: RW's weights follow it), against what the model
gives with the run's cv and tau. DIR/NOISE.md gives every run's figures and, per configuration, the
median and the spread (min-max); DIR/noise.json the same; DIR/noise.png the measured histogram of
the normalised step times and the autocorrelation of each configuration against the model
(sim/noise.c: a lognormal factor with that cv over an AR(1) process with that tau), drawn with
the median figures.

What it does not measure: the variation of a cloud's machines (other hosts, other hours), the
memory bus and the network on their own; see the report for published figures.
"""
import argparse
import json
import math
import os
import subprocess
import sys

import sweep

import numpy as np

# particles, steps; "pair": the emulated comparisons' size (scenarios/emulated/network-pair.cfg:
# 500,000 particles on two ranks), long enough for 15 of its repartition intervals in the half kept
SCALES = {"tiny": (5000, 200), "study": (50000, 3000), "pair": (500000, 600)}
CONFIGS = {  # name: (ranks' containers, stress)
    "one-quiet": (["c0"], False),
    "two-quiet": (["c0", "c1"], False),
    "one-stress": (["c1"], True),
    "two-stress": (["c0", "c1"], True),
}
MAX_LAG = 100
WINDOW = 20  # steps: the emulated comparisons' repartition interval (scenarios/emulated/network-pair.cfg)


def scenario(out, name, hosts, stress, lattice):
    """bench-LATTICE.cfg on the host map's containers, with the neighbour when asked."""
    with open(os.path.join(sweep.TOP, "scenarios", f"bench-{lattice}.cfg")) as f:
        text = f.read()
    text = text.replace('hosts = ["local"]', "hosts = [" + ", ".join(f'"{h}"' for h in hosts) + "]")
    text = text.replace("ranks = 1;", f"ranks = {len(hosts)};")
    text = text.replace('"../platforms/local.xml"', '"' + os.path.join(sweep.TOP, "platforms", "local.xml") + '"')
    if stress:
        text += 'stress = ( { host = "s1"; kind = "vm"; workers = 1; bytes = 64e6; start = 0.0; } );\n'
    hostmap = os.path.join(sweep.TOP, "scenarios", "emulated", "hostmap-local.cfg")
    text += f'native = {{ hostmap = "{hostmap}"; }};\n'
    path = os.path.join(out, f"{name}.cfg")
    with open(path, "w") as f:
        f.write(text)
    return path


def run(a, name, k, particles, steps):
    hosts, stress = CONFIGS[name]
    cfg = scenario(a.out, name, hosts, stress, a.lattice)
    rundir = os.path.join(a.out, "runs", f"{name}-{k}")
    if a.resume and os.path.exists(os.path.join(rundir, "summary.json")):
        return series(os.path.join(rundir, "metrics.csv"), len(hosts))
    cmd = [a.demsim, "run", cfg, "--particles", str(particles), "--steps", str(steps), "--quiet", "--out", rundir,
           "--set", "output.metrics_every=1"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode:
        print(f"noise.py: {' '.join(cmd)} exited with {p.returncode}:\n{p.stdout[-2000:]}", file=sys.stderr)
        return None
    return series(os.path.join(rundir, "metrics.csv"), len(hosts))


def series(path, ranks):
    """Per rank: the per-step loads (s) of the second half of the run."""
    data = np.genfromtxt(path, delimiter=",", names=True, dtype=None, encoding=None)
    out = []
    for r in range(ranks):
        x = np.asarray(data["load_s"][data["rank"] == r], dtype=float)
        out.append(x[len(x) // 2:])
    return out


def acf(x, max_lag):
    y = x - x.mean()
    v = float(np.dot(y, y))
    return np.array([float(np.dot(y[:len(y) - k], y[k:])) / v for k in range(max_lag + 1)])


def stats(x):
    """mean (s), cv, tau (s), the autocorrelation at lags 0..MAX_LAG."""
    r = acf(x, min(MAX_LAG, len(x) // 4))
    below = np.nonzero(r < 1.0 / math.e)[0]
    if len(below):
        k = int(below[0])
        lag = k - 1 + (r[k - 1] - 1.0 / math.e) / (r[k - 1] - r[k])
    else:
        lag = float(len(r))  # still correlated at the longest lag: a lower bound
    w = x[:len(x) // WINDOW * WINDOW].reshape(-1, WINDOW).mean(axis=1)
    cv = float(x.std() / x.mean())
    return {"mean_s": float(x.mean()), "cv": cv, "tau_s": float(lag * x.mean()), "tau_steps": float(lag),
            "window_cv": float(w.std() / w.mean()) if len(w) > 1 else 0.0,
            "window_cv_model": window_cv_model(cv, float(lag), WINDOW),
            "acf": [float(v) for v in r], "normalised": (x / x.mean()).tolist()}


def window_cv_model(cv, tau_steps, n):
    """the cv of an n-step mean of the model's factor: cv sqrt(sum over i, j of acf(|i - j|)) / n"""
    r = model_acf(cv, tau_steps, range(n))
    return cv * math.sqrt(max(0.0, n + 2.0 * sum((n - k) * r[k] for k in range(1, n)))) / n


def summarise(runs):
    """Per configuration: every run's ranks' figures, and the median and min-max of cv and tau."""
    out = {}
    for name in dict.fromkeys(n for n, _ in runs):
        rows = [dict(run=k, rank=r, **s) for (n, k), ranks in runs.items() if n == name and ranks
                for r, s in enumerate(ranks)]
        if not rows:
            continue
        agg = {q: (float(np.median([x[q] for x in rows])), float(min(x[q] for x in rows)),
                   float(max(x[q] for x in rows))) for q in ("mean_s", "cv", "tau_s", "tau_steps", "window_cv",
                                                             "window_cv_model")}
        out[name] = {"rows": rows, "median_min_max": agg}
    return out


def model_acf(cv, tau_steps, lags):
    """The model's autocorrelation (sim/noise.c): a lognormal factor exp(s z - s^2/2) over an AR(1)
    z with rho = exp(-1/tau) per step, s^2 = ln(1 + cv^2): (exp(s^2 rho^k) - 1) / cv^2."""
    s2 = math.log(1.0 + cv * cv)
    rho = math.exp(-1.0 / tau_steps) if tau_steps > 0 else 0.0
    return [(math.exp(s2 * rho ** k) - 1.0) / (cv * cv) for k in lags]


def draw(summary, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = list(summary)
    fig, axes = plt.subplots(2, len(names), figsize=(3.6 * len(names), 6.5), squeeze=False)
    for j, name in enumerate(names):
        rows, (cv, _, _) = summary[name]["rows"], summary[name]["median_min_max"]["cv"]
        tau = summary[name]["median_min_max"]["tau_steps"][0]
        h = axes[0][j]
        h.hist(np.concatenate([np.array(x["normalised"]) for x in rows]), bins=60, density=True, alpha=0.6,
               label="measured")
        s2 = math.log(1.0 + cv * cv)
        f = np.linspace(max(0.01, 1 - 5 * cv), 1 + 6 * cv, 300)
        pdf = np.exp(-(np.log(f) + s2 / 2) ** 2 / (2 * s2)) / (f * math.sqrt(2 * math.pi * s2))
        h.plot(f, pdf, "k-", label=f"model: lognormal, cv {cv:.3f}")
        h.set_title(name, fontsize=10)
        h.set_xlabel("step time / mean")
        h.legend(fontsize=7)
        c = axes[1][j]
        for x in rows:
            c.plot(x["acf"], color="tab:blue", alpha=0.35, lw=0.8)
        lags = list(range(len(rows[0]["acf"])))
        c.plot(lags, model_acf(cv, tau, lags), "k--", label=f"model: tau {tau:.1f} steps")
        c.axhline(1 / math.e, color="grey", lw=0.5)
        c.set_xlabel("lag (steps)")
        c.set_ylabel("autocorrelation")
        c.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def report(a, summary, particles, steps):
    L = ["# A native rank's step time: variation and correlation on this machine", "",
         f"`validation/study/noise.py --scale {a.scale} --repeats {a.repeats}"
         f"{'' if a.lattice == 'contact' else ' --lattice ' + a.lattice}"
         f"{' --configs ' + ','.join(a.configs) if a.configs != list(CONFIGS) else ''}`{sweep.commit_note(a.commit)}: "
         f"scenarios/bench-{a.lattice}.cfg, {particles:,} particles, {steps} steps, a metrics row every step; the second "
         "half of each run. Machine: " + machine() + ".", "",
         "| configuration | runs x ranks | mean step (ms) | cv: median (min-max) | tau: median (min-max), ms | "
         "tau in steps |", "|---|---|---|---|---|---|"]
    for name, s in summary.items():
        m = s["median_min_max"]
        L.append(f"| {name} | {len(s['rows'])} | {m['mean_s'][0] * 1e3:.3g} | {m['cv'][0]:.3f} ({m['cv'][1]:.3f}-"
                 f"{m['cv'][2]:.3f}) | {m['tau_s'][0] * 1e3:.3g} ({m['tau_s'][1] * 1e3:.3g}-{m['tau_s'][2] * 1e3:.3g}) | "
                 f"{m['tau_steps'][0]:.3g} |")
    L += ["", "Every run (rank: mean step ms, cv, tau ms):", ""]
    for name, s in summary.items():
        L.append(f"- {name}: " + "; ".join(f"run {x['run']} rank {x['rank']}: {x['mean_s'] * 1e3:.3g}, {x['cv']:.3f}, "
                                          f"{x['tau_s'] * 1e3:.3g}" for x in s["rows"]))
    L += ["", "Against the model (sim/noise.c: one lognormal factor over one AR(1) process): the median "
          "autocorrelation at lag 1 and at lag 20 steps, measured and what the model gives with the median cv and tau:", ""]
    for name, s in summary.items():
        m = s["median_min_max"]
        meas = [float(np.median([x["acf"][k] for x in s["rows"] if len(x["acf"]) > k])) for k in (1, 20)]
        mod = model_acf(m["cv"][0], m["tau_steps"][0], (1, 20))
        L.append(f"- {name}: lag 1 {meas[0]:.2f} (model {mod[0]:.2f}), lag 20 {meas[1]:.2f} (model {mod[1]:.2f})")
    L += ["", f"The means of {WINDOW}-step windows (a repartition interval of the emulated comparisons): their cv, "
          "measured (median over the ranks and runs, min-max) and what the model gives with each run's cv and tau "
          "(median):", ""]
    for name, s in summary.items():
        m = s["median_min_max"]
        L.append(f"- {name}: {m['window_cv'][0]:.3f} ({m['window_cv'][1]:.3f}-{m['window_cv'][2]:.3f}), model "
                 f"{m['window_cv_model'][0]:.3f}")
    L += ["", "Where the measured autocorrelation drops fast and then keeps a slow tail, and where the histogram has two "
          "modes, one timescale and one lognormal do not describe the step time: the model's cv and tau then match its "
          "spread and its 1/e time only.", "", "![measured against the model](noise.png)", ""]
    return L


def machine():
    model = "unknown processor"
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{model}, {os.cpu_count()} cores"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", choices=sorted(SCALES), default="tiny")
    ap.add_argument("--out", default=os.path.join(sweep.TOP, "out", "noise"))
    ap.add_argument("--demsim", default=os.path.join(sweep.TOP, "build", "native", "demsim"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--commit", help="the commit the build was made from (named in the report)")
    ap.add_argument("--resume", action="store_true", help="reuse the runs DIR/runs already holds (report again)")
    ap.add_argument("--lattice", choices=("contact", "apart"), default="contact",
                    help="scenarios/bench-LATTICE.cfg (apart: a step bound by memory traffic)")
    ap.add_argument("--configs", default=",".join(CONFIGS), help="the configurations to run, comma-separated")
    a = ap.parse_args()
    a.configs = [c for c in a.configs.split(",") if c]
    bad = [c for c in a.configs if c not in CONFIGS]
    if bad or not a.configs:
        ap.error(f"--configs {','.join(bad) or '(none)'}: expected some of {', '.join(CONFIGS)}")
    if a.repeats < 1:
        ap.error("--repeats: expected at least 1")
    if not os.access(a.demsim, os.X_OK):
        ap.error(f"--demsim {a.demsim}: not an executable (build the native preset first)")
    os.makedirs(os.path.join(a.out, "runs"), exist_ok=True)
    particles, steps = SCALES[a.scale]
    runs = {}
    for k in range(a.repeats):
        for name in a.configs:
            runs[(name, k)] = [stats(x) for x in (run(a, name, k, particles, steps) or [])]
            print(f"noise.py: {name} run {k}: " + ", ".join(f"cv {s['cv']:.3f} tau {s['tau_s'] * 1e3:.3g} ms"
                                                         for s in runs[(name, k)]), flush=True)
    summary = summarise(runs)
    with open(os.path.join(a.out, "noise.json"), "w") as f:
        json.dump({n: {"median_min_max": s["median_min_max"],
                       "rows": [{q: v for q, v in x.items() if q != "normalised"} for x in s["rows"]]}
                   for n, s in summary.items()}, f, indent=1)
    draw(summary, os.path.join(a.out, "noise.png"))
    with open(os.path.join(a.out, "NOISE.md"), "w") as f:
        f.write("\n".join(report(a, summary, particles, steps)) + "\n")
    print(f"noise.py: {os.path.join(a.out, 'NOISE.md')}, noise.json, noise.png")
    return 0 if len(summary) == len(a.configs) else 1


if __name__ == "__main__":
    sys.exit(main())
