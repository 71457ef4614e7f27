#!/usr/bin/python3
"""The communication model against an emulated network: `compare_real.py SCENARIO --emulate`.

    validation/study/compare_real.py SCENARIO --emulate [--out DIR] [--repeats R] [--steps S]
        [--particles N] [--lattices contact apart] [--policies NOW RW] [--runs RUNDIR] [--resume]
        [-- extra demsim options]

The scenario's containers (platform.file, platform.hosts, two of them: e.g. two one-core containers
on two nodes of platforms/openstack.xml) run twice: on an emulated cloud on this machine
(`demsim --emulate`, native build, as root: a network namespace and a core per container, each
route shaped by tc to SimGrid's route on platform.file) and under SMPI on platform.file itself.
  (a) messages: build/*/demsim-pingpong by `demsim exec`, 8 B to 8 MiB, one way (ping-pong / 2)
      and a two-way exchange (both ranks send at once, as the ghost exchange does), the emulated
      times the median over R rounds, the simulated ones deterministic;
  (b) the DEM: the scenario itself, particles in contact (problem.diameter_ratio 1.001, about six
      contacts each, as scenarios/bench-contact.cfg) and apart (0.99), N particles, S steps, for each policy (RW repartitions every S/5 steps), R emulated runs
      interleaved (lattice, policy, lattice, policy, ...; the median kept, the spread reported)
      and one simulated run. The network's part is compared: the ghost exchange per step
      (summary.json time_breakdown_s ghost_comm_s over the steps run: rank 0's time in MPI
      beyond waiting for a slower rank), the ghost bytes a rank sends and receives per step, and
      the repartition (partition + migration). The computing is this machine's cores against
      platform.file's: shown, not compared.
The runs go to RUNDIR (default DIR/runs: particles.h5 of each, large), the report to DIR.
--mpi-eager BYTES runs the emulated side with Open MPI's TCP transport sending every message up to
BYTES eagerly (btl_tcp_eager_limit, rndv_eager_limit, max_send_size): by default a message over
64 KiB goes by rendezvous, whose control messages share the one TCP connection of a pair with the
other direction's data, so that a two-way exchange of large messages waits behind itself.
--resume keeps the runs (and message tables) already in DIR and runs only the missing ones.
What the emulation lacks where the kernel has no netem: the routes' latency (the namespaces' own,
some microseconds, instead); EMULATED.md says which kernel ran it.
DIR/EMULATED.md, DIR/compare_real.json (rows: what, pattern or lattice/policy, measured,
predicted, error %, spread), DIR/emulated.png (message time against size, both patterns;
predicted over measured). Exit status: 0, 1 when a run failed, 2 on bad input.
"""
import json
import os
import platform as pyplatform
import subprocess
import sys
import time

import compare  # noqa: E402  (run_policy: one run with a progress line)
import figures  # noqa: E402  (matplotlib, Agg backend)
from figures import plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


def fail(msg, code=2):
    print(f"compare_real.py --emulate: {msg}", file=sys.stderr)
    raise SystemExit(2 if code == 2 else 1)


LATTICES = {"contact": "1.001", "apart": "0.99"}  # problem.diameter_ratio


def eager_env(args):
    """The emulated runs' environment: Open MPI's TCP eager limit raised to --mpi-eager, if given."""
    env = dict(os.environ)
    if args.mpi_eager:
        for k in ("btl_tcp_eager_limit", "btl_tcp_rndv_eager_limit", "btl_tcp_max_send_size"):
            env["OMPI_MCA_" + k] = str(args.mpi_eager)
    return env


def exec_pingpong(demsim, args, out, extra, rounds, emulate):
    """`demsim exec` of demsim-pingpong beside demsim: {(pattern, bytes): row}."""
    tool = os.path.join(os.path.dirname(os.path.abspath(demsim)), "demsim-pingpong")
    result = os.path.join(out, "pingpong.json")
    os.makedirs(out, exist_ok=True)
    emulate = ["--emulate"] if emulate else []
    if args.resume and os.path.isfile(result):
        with open(result) as f:
            return {(r["pattern"], r["bytes"]): r for r in json.load(f)["rows"]}
    cmd = [demsim, "exec", args.scenario] + emulate + ["--ranks", "2", "--out", out] + extra + [
        "--", tool, "--out", result, "--rounds", str(rounds)]
    print("pingpong: " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       env=eager_env(args) if emulate else None)
    if p.returncode:
        print(p.stdout[-3000:])
        fail(f"demsim exec failed (exit {p.returncode})", p.returncode)
    with open(result) as f:
        return {(r["pattern"], r["bytes"]): r for r in json.load(f)["rows"]}


def run_once(args, demsim, pol, d, more):
    """One DEM run into d (kept with --resume when its summary.json is there): its summary."""
    summary = os.path.join(d, "summary.json")
    if not (args.resume and os.path.isfile(summary)):
        saved = dict(os.environ)
        if "--emulate" in more:
            os.environ.update(eager_env(args))
        rc, _ = compare.run_policy(demsim, args.scenario, pol, d, more)
        os.environ.clear()
        os.environ.update(saved)
        if rc:
            fail(f"run {d} failed (exit {rc}); log in {d}/demsim.log", rc)
    with open(summary) as f:
        return json.load(f)


def dem_runs(args, extra):
    """{(lattice, policy): {"native_all": [summary], "native": median summary, "smpi": summary}}."""
    res = {(lat, pol): {"native_all": []} for lat in args.lattices for pol in args.policies}
    common = ["--particles", str(args.particles), "--steps", str(args.steps), "--ranks", "2",
              "--repartition-every", str(max(1, args.steps // 5))] + extra
    for i in range(args.repeats):
        for (lat, pol), r in res.items():
            d = os.path.join(args.runs, "emulated", f"{lat}-{pol}-{i + 1}")
            r["native_all"].append(run_once(args, args.native, pol, d, ["--emulate", "--set",
                                            f"problem.diameter_ratio={LATTICES[lat]}"] + common))
    for (lat, pol), r in res.items():
        r["native"] = sorted(r["native_all"], key=lambda s: comm_per_step(s))[(args.repeats - 1) // 2]
        d = os.path.join(args.runs, "smpi", f"{lat}-{pol}")
        r["smpi"] = run_once(args, args.smpi, pol, d, ["--set", f"problem.diameter_ratio={LATTICES[lat]}"] + common)
    return res


def comm_per_step(s):
    return s["time_breakdown_s"]["ghost_comm_s"] / max(1, s["steps_run"])


def repartition(s):
    return s["time_breakdown_s"]["repartition_s"] + s["time_breakdown_s"]["migration_s"]


def err(pred, meas):
    return (pred - meas) / meas * 100.0 if meas else None


def message_rows(emu, smpi):
    rows = []
    for (pattern, size), m in sorted(emu.items()):
        s = smpi[(pattern, size)]
        rows.append(dict(what="message time (s)", case=f"{pattern} {size} B", measured=m["median_s"],
                         predicted=s["median_s"], error_percent=err(s["median_s"], m["median_s"]),
                         spread=[m["min_s"], m["max_s"]]))
    return rows


def dem_rows(res):
    rows = []
    measures = (("ghost exchange per step (s)", comm_per_step), ("repartition + migration (s)", repartition),
                ("ghost bytes per rank per step", lambda s: s["ghost_bytes_per_rank_per_step"]),
                ("computing, rank 0 (s; this machine's cores against platform.file's)",
                 lambda s: s["time_breakdown_s"]["compute_s"]))
    for (lat, pol), r in res.items():
        for what, f in measures:
            m, s = f(r["native"]), f(r["smpi"])
            if what.startswith("repartition") and pol == "NOW":
                continue
            compared = not what.startswith("computing")
            all_m = [f(x) for x in r["native_all"]]
            rows.append(dict(what=what, case=f"{lat} {pol}", measured=m, predicted=s,
                             error_percent=err(s, m) if compared else None, spread=[min(all_m), max(all_m)]))
    return rows


def figure(emu, smpi, path):
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for pattern, style in (("pingpong", "-"), ("exchange", "--")):
        sizes = sorted(b for p, b in emu if p == pattern)
        m = [emu[(pattern, b)]["median_s"] for b in sizes]
        s = [smpi[(pattern, b)]["median_s"] for b in sizes]
        axes[0].loglog(sizes, m, "o" + style, label=f"{pattern}, emulated (measured)", markersize=3)
        axes[0].loglog(sizes, s, "s" + style, label=f"{pattern}, SMPI (predicted)", markersize=3)
        axes[1].semilogx(sizes, [b / a for a, b in zip(m, s)], "o" + style, label=pattern, markersize=3)
    axes[0].set_xlabel("message size (B)")
    axes[0].set_ylabel("time (s)")
    axes[0].legend(fontsize=7)
    axes[1].axhspan(0.85, 1.15, color="0.9")
    axes[1].set_yscale("log")
    axes[1].set_xlabel("message size (B)")
    axes[1].set_ylabel("predicted / measured")
    axes[1].legend(fontsize=7)
    figures._save(fig, os.path.dirname(path), os.path.basename(path))


def kernel_note():
    has = subprocess.run(["tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"], capture_output=True)
    if has.returncode == 0:
        subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"], capture_output=True)
        return f"kernel {pyplatform.release()}: netem present (the routes' latency emulated)"
    return f"kernel {pyplatform.release()}: no netem (bandwidth shaped, the routes' latency NOT emulated)"


BANDS = (("small, 8 B - 2 KiB (latency)", 8, 2048), ("medium, 4 KiB - 512 KiB", 4096, 524288),
         ("large, 1 MiB - 8 MiB (bandwidth)", 1 << 20, 8 << 20))


def band_lines(rows):
    """Per pattern and size band: the error's range and how many sizes are within 15 %."""
    L = ["| pattern | sizes | predicted / measured - 1 | within 15 % |", "|---|---|---|---|"]
    for pattern in ("pingpong", "exchange"):
        for name, lo, hi in BANDS:
            e = [r["error_percent"] for r in rows if r["what"] == "message time (s)" and
                 r["case"].startswith(pattern + " ") and lo <= int(r["case"].split()[1]) <= hi]
            if e:
                L.append(f"| {pattern} | {name} | {min(e):+.0f} % to {max(e):+.0f} % | "
                         f"{sum(abs(x) <= 15 for x in e)} of {len(e)} |")
    return L


def shown(r):
    """The table shows every fourth message size (compare_real.json has them all) and every DEM row."""
    if r["what"] != "message time (s)":
        return True
    size = int(r["case"].split()[1])
    return (size.bit_length() - 4) % 2 == 0


def report(args, extra, rows, started, emu, smpi):
    cmd = "validation/study/compare_real.py " + " ".join(args.argv)
    load = open("/proc/loadavg").read().split()[:3]
    lines = [f"# The communication model against an emulated network: {os.path.basename(args.scenario)}", "",
             f"Command: `{cmd}`", "",
             f"Started {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))}, took "
             f"{time.time() - started:.0f} s; {kernel_note()}; load average before: {' '.join(args.load_before)},"
             f" after: {' '.join(load)}; {os.cpu_count()} cores.", "",
             f"Containers and platform from the scenario (with {' '.join(extra) or 'no extra options'}). Open MPI's TCP "
             + (f"eager limit raised to {args.mpi_eager} B in the emulated runs. " if args.mpi_eager else
                "transport with its defaults (rendezvous over 64 KiB). ") + "Emulated "
             f"messages: median of {args.repeats} round(s) of every size (spread: min-max of all repetitions); "
             f"DEM: {args.particles} particles, {args.steps} steps, {args.repeats} emulated run(s) per row "
             "(median by the ghost exchange; spread: min-max), one SMPI run. Error = (predicted - measured) / measured.",
             "", "## Messages by size band", ""] + band_lines(rows) + [
             "", "## Every row (messages: every fourth size; compare_real.json has all 21)", "",
             "| what | case | measured (emulated) | predicted (SMPI) | error | measured spread |",
             "|---|---|---|---|---|---|"]
    for r in filter(shown, rows):
        e = "" if r["error_percent"] is None else f"{r['error_percent']:+.1f} %"
        lines.append(f"| {r['what']} | {r['case']} | {r['measured']:.4g} | {r['predicted']:.4g} | {e} | "
                     f"{r['spread'][0]:.4g} - {r['spread'][1]:.4g} |")
    lines += ["", "![message times](emulated.png)", ""]
    with open(os.path.join(args.out, "EMULATED.md"), "w") as f:
        f.write("\n".join(lines))
    with open(os.path.join(args.out, "compare_real.json"), "w") as f:
        json.dump({"scenario": args.scenario, "emulate": True, "command": cmd, "kernel": kernel_note(),
                   "mpi_eager": args.mpi_eager,
                   "rows": rows}, f, indent=1)
    figure(emu, smpi, os.path.join(args.out, "emulated.png"))
    print(f"report: {os.path.join(args.out, 'EMULATED.md')}")


def main(args, extra):
    if os.geteuid() != 0:
        fail("--emulate needs root (network namespaces, tc, cgroups)")
    started = time.time()
    args.load_before = open("/proc/loadavg").read().split()[:3]
    os.makedirs(args.out, exist_ok=True)
    args.runs = os.path.abspath(args.runs or os.path.join(args.out, "runs"))
    emu = exec_pingpong(args.native, args, os.path.join(args.runs, "pingpong-emulated"), extra, args.repeats, True)
    smpi = exec_pingpong(args.smpi, args, os.path.join(args.runs, "pingpong-smpi"), extra, 1, False)
    for name, rows in (("pingpong-emulated.json", emu), ("pingpong-smpi.json", smpi)):
        with open(os.path.join(args.out, name), "w") as f:
            json.dump(list(rows.values()), f, indent=1)
    res = dem_runs(args, extra)
    report(args, extra, message_rows(emu, smpi) + dem_rows(res), started, emu, smpi)
