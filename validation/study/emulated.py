#!/usr/bin/python3
"""The communication model against an emulated network: `compare_real.py SCENARIO --emulate`.

    validation/study/compare_real.py SCENARIO --emulate [--out DIR] [--repeats R] [--steps S]
        [--particles N] [--lattices contact apart] [--policies NOW RW] [--runs RUNDIR] [--resume]
        [--sim-repeats K] [-- extra demsim options]

The scenario's containers (platform.file, platform.hosts, two of them: e.g. two one-core containers
on two nodes of platforms/openstack.xml) run twice: on an emulated cloud on this machine
(`demsim --emulate`, native build, as root: a network namespace and a core per container, each
route shaped by tc to SimGrid's route on platform.file) and under SMPI on platform.file itself.
  (a) messages: build/*/demsim-pingpong by `demsim exec`, 8 B to 8 MiB, one way (ping-pong / 2)
      and a two-way exchange (both ranks send at once, as the ghost exchange does), the emulated
      times the median over R rounds, the simulated ones deterministic;
  (b) the DEM: the scenario itself, particles in contact (problem.diameter_ratio 1.001, about six
      contacts each, as scenarios/bench-contact.cfg) and apart (0.99), N particles, S steps, for each policy (RW repartitions every S/5 steps), R emulated runs
      interleaved (lattice, policy, lattice, policy, ...; each row its median, the spread reported)
      and K simulated runs (noise.seed 0 to K-1, default 3; each row its median, the spread in
      compare_real.json's predicted_spread): where the scenario has noise (network-pair.cfg does),
      each seed starts the run at another point of a quota's period and of the kernel's tick, so
      that the steps fall differently against its windows, as the emulated runs' do from one run
      to the next; the model has no other source of run-to-run change. The network's part is compared: the ghost exchange per step
      (summary.json time_breakdown_s ghost_comm_s over the steps run: rank 0's time in MPI
      beyond waiting for a slower rank), the ghost bytes a rank sends and receives per step, and
      the repartition (partition + migration). The computing is this machine's cores against
      platform.file's: shown, not compared.
The runs go to RUNDIR (default DIR/runs: particles.h5 of each, large), the report to DIR.
--mpi-eager BYTES also runs the emulated side, interleaved, with Open MPI's TCP transport sending every
message up to BYTES eagerly (btl_tcp_eager_limit, rndv_eager_limit, max_send_size): by default a message over
64 KiB goes by rendezvous, whose control messages share the one TCP connection of a pair with the
other direction's data, so that a two-way exchange of large messages waits behind itself.
--probed says that platform.file is a probed platform of this machine (make_platforms.py --probe
--container-link): the computing and the total time are then compared too.
--resume keeps the runs (and message tables) already in DIR and runs only the missing ones.
The model's MPI stack: measured first on the same emulated cloud with every link's latency 0
(DIR/platform-instant.xml), given to SMPI as overheads (DIR/platform-stack.xml, DIR/stack.json;
mpistack.py says how); the SMPI side runs on that platform. Where the kernel has no netem, each
route's latency and rate is demsim-wire's (netfilter queues); EMULATED.md says which ran it.
DIR/EMULATED.md, DIR/compare_real.json (rows: what, pattern or lattice/policy, measured,
predicted, error %, spread), DIR/emulated.png (message time against size, both patterns;
predicted over measured). Exit status: 0, 1 when a run failed, 2 on bad input.
"""
import json
import os
import platform as pyplatform
import statistics
import subprocess
import sys
import time

import calibration  # noqa: E402  (the core rate over the runs)
import compare  # noqa: E402  (run_policy: one run with a progress line)
import mpistack  # noqa: E402  (the MPI stack measured, and SMPI's options for it)
import figures  # noqa: E402  (matplotlib, Agg backend)
from figures import plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


def fail(msg, code=2):
    print(f"compare_real.py --emulate: {msg}", file=sys.stderr)
    raise SystemExit(2 if code == 2 else 1)


LATTICES = {"contact": "1.001", "apart": "0.99"}  # problem.diameter_ratio


def eager_env(args, config):
    """An emulated run's environment: config "eager", Open MPI's TCP eager limit raised to --mpi-eager."""
    env = dict(os.environ)
    if config == "eager":
        for k in ("btl_tcp_eager_limit", "btl_tcp_rndv_eager_limit", "btl_tcp_max_send_size"):
            env["OMPI_MCA_" + k] = str(args.mpi_eager)
    return env


def exec_pingpong(demsim, args, out, extra, rounds, emulate, config="default"):
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
                       env=eager_env(args, config) if emulate else None)
    if p.returncode:
        print(p.stdout[-3000:])
        fail(f"demsim exec failed (exit {p.returncode})", p.returncode)
    with open(result) as f:
        return {(r["pattern"], r["bytes"]): r for r in json.load(f)["rows"]}


def run_once(args, demsim, pol, d, more, config="default"):
    """One DEM run into d (kept with --resume when its summary.json is there): its summary."""
    summary = os.path.join(d, "summary.json")
    if not (args.resume and os.path.isfile(summary)):
        env = eager_env(args, config) if "--emulate" in more else None
        rc, _ = compare.run_policy(demsim, args.scenario, pol, d, more, env)
        if rc:
            fail(f"run {d} failed (exit {rc}); log in {d}/demsim.log", rc)
    with open(summary) as f:
        return json.load(f)


def configs(args):
    """The emulated configurations: Open MPI's defaults, and with --mpi-eager the raised eager limit."""
    return ["default"] + (["eager"] if args.mpi_eager else [])


def dem_runs(args, extra):
    """{(lattice, policy): {"native_all": {config: [summary]}, "native": {config: median summary},
    "smpi": summary}}; the emulated runs interleaved: repeat, lattice, policy, configuration. With a
    host map (compare_real.py --emulate --hostmap), the contact-force kernel is sampled before each
    round and the platform rewritten with the median before the SMPI runs (calibration.py)."""
    res = {(lat, pol): {"native_all": {c: [] for c in configs(args)}} for lat in args.lattices for pol in args.policies}
    common = ["--particles", str(args.particles), "--steps", str(args.steps), "--ranks", "2",
              "--repartition-every", str(max(1, args.steps // 5))] + extra
    samples = os.path.join(args.out, "kernel-samples.jsonl")
    quota = os.path.join(args.out, "quota-samples.jsonl")
    search = os.path.join(args.out, "search-samples.jsonl")
    for f in (samples, quota, search):
        if getattr(args, "hostmap", None) and not args.resume and os.path.exists(f):
            os.remove(f)
    for i in range(args.repeats):
        dirs = {(lat, pol, c): os.path.join(args.runs, "emulated" + ("" if c == "default" else "-" + c),
                                            f"{lat}-{pol}-{i + 1}")
                for lat, pol in res for c in configs(args)}
        if getattr(args, "hostmap", None) and not all(args.resume and os.path.isfile(os.path.join(d, "summary.json"))
                                                      for d in dirs.values()):
            calibration.kernel_sample(args.native, samples)
            calibration.quota_sample(args.native, args.hostmap, args.shares, quota)
            calibration.search_sample(args.native, search)
        for (lat, pol, c), d in dirs.items():
            res[(lat, pol)]["native_all"][c].append(run_once(args, args.native, pol, d, [
                "--emulate", "--set", f"problem.diameter_ratio={LATTICES[lat]}"] + common, c))
    if getattr(args, "hostmap", None):
        args.rate_probe, _ = calibration.interleaved_platform(args.out, args.probe_json, args.hostmap,
                                                              calibration.read_samples(samples), args.link, args.shares,
                                                              calibration.read_quota(quota),
                                                              calibration.read_search(search))
    common += ["--set", f"platform.file={smpi_platform(args, extra)}"]
    for (lat, pol), r in res.items():
        r["native"] = {c: sorted(runs, key=comm_per_step)[(args.repeats - 1) // 2]
                       for c, runs in r["native_all"].items()}
        r["smpi_all"] = [run_once(args, args.smpi, pol, smpi_dir(args, lat, pol, k),
                                  ["--set", f"problem.diameter_ratio={LATTICES[lat]}", "--set", f"noise.seed={k}"]
                                  + common) for k in range(args.sim_repeats)]
        r["smpi"] = sorted(r["smpi_all"], key=comm_per_step)[(args.sim_repeats - 1) // 2]
    return res


def smpi_dir(args, lat, pol, seed):
    """An SMPI run's folder: RUNS/smpi/LATTICE-POLICY for noise seed 0, then -seed<k>."""
    return os.path.join(args.runs, "smpi", f"{lat}-{pol}" + (f"-seed{seed}" if seed else ""))


def merge_rounds(rounds):
    """One message table from several rounds' ({(pattern, bytes): row}): the median of the rounds'
    medians, the smallest minimum, the largest maximum."""
    return {k: dict(rounds[0][k], median_s=statistics.median(r[k]["median_s"] for r in rounds),
                    min_s=min(r[k]["min_s"] for r in rounds), max_s=max(r[k]["max_s"] for r in rounds),
                    reps=sum(r[k]["reps"] for r in rounds)) for k in rounds[0]}


def emulated_messages(args, extra):
    """The emulated message tables, {config: table}, and the stack's table: --repeats rounds, each
    one round on the instant platform (mpistack.py: every link's latency 0) then one of each
    configuration on the runs' own, so that the stack and the times it is held against meet the
    same state of the host."""
    inst = mpistack.instant(mpistack.platform_of(args, extra), os.path.join(args.out, "platform-instant.xml"))
    rounds = {c: [] for c in ["instant"] + configs(args)}
    for i in range(args.repeats):
        rounds["instant"].append(exec_pingpong(args.native, args, os.path.join(args.runs, "pingpong-instant-emulated",
                                                                               str(i + 1)),
                                               extra + ["--set", f"platform.file={inst}"], 1, True))
        for c in configs(args):
            rounds[c].append(exec_pingpong(args.native, args, os.path.join(args.runs, "pingpong-emulated-" + c,
                                                                           str(i + 1)), extra, 1, True, c))
    tables = {c: merge_rounds(r) for c, r in rounds.items()}
    return {c: tables[c] for c in configs(args)}, tables["instant"], inst


def measure_stack(args, extra, instant_table, inst):
    """The MPI stack's one-way time on this emulated cloud by size: the instant platform's emulated
    times less SMPI's there (mpistack.stack_bands); kept in args.stack_bands (args.stack_s: the
    small messages') and DIR/stack.json."""
    neutral = mpistack.neutral(inst, os.path.join(args.out, "platform-instant-smpi.xml"))
    smpi = exec_pingpong(args.smpi, args, os.path.join(args.runs, "pingpong-instant-smpi"),
                         extra + ["--set", f"platform.file={neutral}"], 1, False)
    args.stack_bands = mpistack.stack_bands(instant_table, smpi)
    args.stack_s = args.stack_bands[0][1]
    lo, hi = mpistack.STACK_SIZES
    small = sorted(e["median_s"] for k, e in instant_table.items() if lo <= k[1] <= hi)
    with open(os.path.join(args.out, "stack.json"), "w") as f:
        json.dump({"stack_one_way_s": args.stack_s, "bands": [dict(above_bytes=b, base_s=c, per_byte_s=p)
                                                               for b, c, p in args.stack_bands],
                   "instant_platform": os.path.basename(inst), "sizes": [lo, hi],
                   "measured_min_s": small[0], "measured_max_s": small[-1], "rounds": args.repeats,
                   "rows": [dict(pattern=k[0], bytes=k[1], measured_s=e["median_s"],
                                 smpi_s=smpi[k]["median_s"]) for k, e in sorted(instant_table.items())]}, f, indent=1)
    print(f"MPI stack on this emulated cloud: {args.stack_s * 1e6:.1f} us one way", flush=True)
    return args.stack_s


def rendezvous_note(args):
    """What the model adds for a rendezvous's own stack (mpistack.stack_bands' band from the eager
    limit), as a clause; empty without it."""
    big = [b for b in getattr(args, "stack_bands", []) if b[0] >= mpistack.EAGER_LIMIT - 1]
    if not big:
        return ""
    _, base, per = big[0]
    at = [base + per * size for size in (mpistack.EAGER_LIMIT, 8 << 20)]
    return (f"; the rendezvous's own stack, measured one way on the instant platform, is added to the route's "
            f"latency (root zone stack_time: {at[0] * 1e6:.0f} us at 64 KiB, {at[1] * 1e6:.0f} us at 8 MiB)")


def smpi_platform(args, extra):
    """The platform the SMPI side runs on: the runs' own with the measured stack (DIR/platform-stack.xml)."""
    return mpistack.with_stack(mpistack.platform_of(args, extra), args.stack_bands,
                               os.path.join(args.out, "platform-stack.xml"))


def split_of(s):
    """A run's ghost exchange per step (comm_per_step) in its two parts, s: rank 0's time in the step's MPI
    calls beyond its wait for the slowest rank (per_rank comm_s: ghosts.c's blocked less wait), and the rest
    of its ghost phase less its MPI waits (rank0_timers_s ghosts - wait: host work, the ghost registration's
    passes and grid after a repartition)."""
    n = max(1, s["steps_run"])
    t = s["rank0_timers_s"]
    return s["per_rank"][0]["comm_s"] / n, (t["ghosts"] - t["wait"]) / n


def exchange_split(res):
    """[{case, measured: [[mpi, host] per emulated run (Open MPI's defaults)], predicted: [...] per SMPI run}]."""
    return [dict(case=f"{lat} {pol}", measured=[split_of(s) for s in r["native_all"]["default"]],
                 predicted=[split_of(s) for s in r["smpi_all"]]) for (lat, pol), r in res.items()]


def split_lines(split):
    """The exchange's two parts, measured against predicted (medians, ms a step, min-max)."""
    def part(runs, i):
        v = sorted(x[i] * 1e3 for x in runs)
        return f"{v[(len(v) - 1) // 2]:.3f} ({v[0]:.3f}-{v[-1]:.3f})"
    L = ["## The ghost exchange in two parts", "",
         "The row \"ghost exchange per step\" is rank 0's ghost phase less its wait for the slowest rank. Its MPI "
         "part is rank 0's time in the step's MPI calls beyond that wait (summary.json per_rank comm_s); the rest is "
         "host work in the ghost phase (rank0_timers_s ghosts less wait: packing, and after a repartition the ghost "
         "registration's passes and grid), which on a platform of other cores is their computing, not this "
         "machine's. Both count the ghost registration before a search: its MPI calls less its wait for the slowest "
         "rank in the MPI part, its passes in the rest. "
         "ms a step, the median of the runs (min-max; the emulated runs with Open MPI's defaults):", "",
         "| case | MPI, measured | MPI, predicted | host work, measured | host work, predicted |", "|---|---|---|---|---|"]
    for x in split:
        L.append(f"| {x['case']} | {part(x['measured'], 0)} | {part(x['predicted'], 0)} | {part(x['measured'], 1)} | "
                 f"{part(x['predicted'], 1)} |")
    return L + [""]


def comm_per_step(s):
    return s["time_breakdown_s"]["ghost_comm_s"] / max(1, s["steps_run"])


def repartition(s):
    return s["time_breakdown_s"]["repartition_s"] + s["time_breakdown_s"]["migration_s"]


def err(pred, meas):
    return (pred - meas) / meas * 100.0 if meas else None


def row(what, case, predicted, measured):
    """A comparison row: measured {config: (value, [min, max])}; the error for each configuration."""
    r = dict(what=what, case=case, predicted=predicted)
    for c, (m, spread) in measured.items():
        tail = "" if c == "default" else "_" + c
        r["measured" + tail], r["spread" + tail] = m, spread
        r["error_percent" + tail] = err(predicted, m) if predicted is not None else None
    return r


def message_rows(emu, smpi):
    """emu: {config: {(pattern, bytes): row}}."""
    return [row("message time (s)", f"{pattern} {size} B", smpi[(pattern, size)]["median_s"],
                {c: (e[(pattern, size)]["median_s"], [e[(pattern, size)]["min_s"], e[(pattern, size)]["max_s"]])
                 for c, e in emu.items()})
            for pattern, size in sorted(emu["default"])]


def dem_rows(res, probed=False):
    """The DEM's rows; computing and the total time compared only when platform.file is a probed
    platform of this machine (--probed), else shown."""
    rows = []
    cores = "" if probed else "; this machine's cores against platform.file's"
    measures = (("ghost exchange per step (s)", comm_per_step), ("repartition + migration (s)", repartition),
                ("ghost bytes per rank per step", lambda s: s["ghost_bytes_per_rank_per_step"]),
                (f"computing, rank 0 (s{cores})", lambda s: s["time_breakdown_s"]["compute_s"]),
                (f"total time (s{cores})", lambda s: s["sim_time_s"]))
    for (lat, pol), r in res.items():
        for what, f in measures:
            if what.startswith("repartition") and pol == "NOW":
                continue
            # each row its own median over the runs: a run whose exchange is the median may have
            # the smallest or the largest repartition of them
            measured = {c: (statistics.median_low(map(f, runs)), [min(map(f, runs)), max(map(f, runs))])
                        for c, runs in r["native_all"].items()}
            x = row(what, f"{lat} {pol}", statistics.median_low(map(f, r["smpi_all"])), measured)
            x["predicted_spread"] = [min(map(f, r["smpi_all"])), max(map(f, r["smpi_all"]))]
            if cores and what.startswith(("computing", "total")):
                x = {k: (None if k.startswith("error") else v) for k, v in x.items()}
            rows.append(x)
    return rows


LABELS = {"default": "Open MPI's defaults", "eager": "eager limit raised"}


def figure(emu, smpi, path):
    """Message time against size (emu: {config: rows}), and predicted over measured."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for pattern, style in (("pingpong", "-"), ("exchange", "--")):
        sizes = sorted(b for p, b in emu["default"] if p == pattern)
        s = [smpi[(pattern, b)]["median_s"] for b in sizes]
        axes[0].loglog(sizes, s, "s" + style, color="k", label=f"{pattern}, SMPI (predicted)", markersize=3)
        for c, e in emu.items():
            m = [e[(pattern, b)]["median_s"] for b in sizes]
            axes[0].loglog(sizes, m, "o" + style, label=f"{pattern}, emulated, {LABELS[c]}", markersize=3)
            axes[1].semilogx(sizes, [b / a for a, b in zip(m, s)], "o" + style, label=f"{pattern}, {LABELS[c]}",
                             markersize=3)
    axes[0].set_xlabel("message size (B)")
    axes[0].set_ylabel("time (s)")
    axes[0].legend(fontsize=6)
    axes[1].axhspan(0.85, 1.15, color="0.9")
    axes[1].set_yscale("log")
    axes[1].set_xlabel("message size (B)")
    axes[1].set_ylabel("predicted / measured")
    axes[1].legend(fontsize=6)
    figures._save(fig, os.path.dirname(path), os.path.basename(path))


def kernel_note(native):
    """How this kernel emulates the routes: netem, else demsim-wire (beside the native demsim) where
    iptables is there, else the rates only."""
    has = subprocess.run(["tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"], capture_output=True)
    if has.returncode == 0:
        subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"], capture_output=True)
        return f"kernel {pyplatform.release()}: netem present (the routes' latency emulated)"
    wire = os.path.join(os.path.dirname(os.path.abspath(native)), "demsim-wire")
    if os.access(wire, os.X_OK) and subprocess.run(["iptables", "--version"], capture_output=True).returncode == 0:
        return (f"kernel {pyplatform.release()}: no netem; each route's latency and rate emulated by demsim-wire "
                "(netfilter queues), htb's class at the same rate behind it with a burst that never binds")
    return f"kernel {pyplatform.release()}: no netem (bandwidth shaped, the routes' latency NOT emulated)"


BANDS = (("small, 8 B - 2 KiB (latency)", 8, 2048), ("medium, 4 KiB - 512 KiB", 4096, 524288),
         ("large, 1 MiB - 8 MiB (bandwidth)", 1 << 20, 8 << 20))


def band_lines(rows, cfgs):
    """Per pattern, size band and configuration: the error's range and the sizes within 15 %."""
    L = ["| pattern | sizes | emulated with | predicted / measured - 1 | within 15 % |", "|---|---|---|---|---|"]
    for pattern in ("pingpong", "exchange"):
        for name, lo, hi in BANDS:
            for c in cfgs:
                key = "error_percent" + ("" if c == "default" else "_" + c)
                e = [r[key] for r in rows if r["what"] == "message time (s)" and
                     r["case"].startswith(pattern + " ") and lo <= int(r["case"].split()[1]) <= hi]
                if e:
                    L.append(f"| {pattern} | {name} | {LABELS[c]} | {min(e):+.0f} % to {max(e):+.0f} % | "
                             f"{sum(abs(x) <= 15 for x in e)} of {len(e)} |")
    return L


def shown(r):
    """The table shows every fourth message size (compare_real.json has them all) and every DEM row."""
    if r["what"] != "message time (s)":
        return True
    size = int(r["case"].split()[1])
    return (size.bit_length() - 4) % 2 == 0


def band_range(rows, pattern, lo, hi, config="default"):
    """(min, max) of the error over a pattern's sizes in [lo, hi], or None."""
    key = "error_percent" + ("" if config == "default" else "_" + config)
    e = [r[key] for r in rows if r["what"] == "message time (s)" and r["case"].startswith(pattern + " ")
         and lo <= int(r["case"].split()[1]) <= hi and key in r]
    return (min(e), max(e)) if e else None


def large_message_cost(rows):
    """(predicted, measured) fixed cost of a one-way large message, from the 1 and 2 MiB rows."""
    t = {int(r["case"].split()[1]): r for r in rows if r["what"] == "message time (s)" and
         r["case"].startswith("pingpong ")}
    if (1 << 20) not in t or (2 << 20) not in t:
        return None
    return tuple(2 * t[1 << 20][k] - t[2 << 20][k] for k in ("predicted", "measured"))


def reading(rows, args):
    """What the rows say, in words with their own figures."""
    def rng(x):
        return "n/a" if x is None else f"{x[0]:+.0f} to {x[1]:+.0f} %"
    ghost = [r for r in rows if r["what"].startswith("ghost exchange") and r["case"].startswith("contact")]
    L = ["## What it says", "",
         f"- **Bandwidth regime, one way** (1-8 MiB): prediction {rng(band_range(rows, 'pingpong', 1 << 20, 8 << 20))}"
         " of the measured time: the route's bandwidth (125 MB/s) and SMPI's bandwidth factor meet TCP over the shaped"
         " link.",
         f"- **Two-way exchange** (1-8 MiB): {rng(band_range(rows, 'exchange', 1 << 20, 8 << 20))} with Open MPI's "
         "defaults" + (f", {rng(band_range(rows, 'exchange', 1 << 20, 8 << 20, 'eager'))} with the eager limit raised"
                       if args.mpi_eager else "") +
         ". Above 64 KiB Open MPI sends by rendezvous; its control messages travel in the pair's one TCP connection "
         "behind the other direction's data, so both directions can wait on each other; SimGrid's full-duplex links "
         "(SPLITDUPLEX) have no such wait.",
         f"- **Latency regime** (8 B - 2 KiB): one way {rng(band_range(rows, 'pingpong', 8, 2048))}, two-way "
         f"{rng(band_range(rows, 'exchange', 8, 2048))}: the route's latency held by the emulated wire, the MPI stack "
         f"measured on the instant platform ({args.stack_s * 1e6:.1f} us one way) given to SMPI as its overheads "
         "(mpistack.py); a round's stack varies with the wake-ups of a busy 2-core machine (stack.json: the small "
         "messages' range there)."]
    for r in ghost:
        L.append(f"- **The DEM's ghost exchange**, {r['case']}: predicted {r['predicted'] * 1e3:.2f} ms a step, "
                 f"measured {r['measured'] * 1e3:.2f} ms ({r['error_percent']:+.0f} %)"
                 + (f", {r['measured_eager'] * 1e3:.2f} ms eager ({r['error_percent_eager']:+.0f} %)"
                    if "measured_eager" in r else "") + ".")
    fixed = large_message_cost(rows)
    if fixed:
        L.append(f"- **A large message's fixed cost** (one way, 2 x t(1 MiB) - t(2 MiB): the time beyond the bandwidth "
                 f"term): predicted {fixed[0] * 1e3:.3g} ms, measured {fixed[1] * 1e3:.3g} ms. SMPI's latency factor for "
                 "64 KiB and more is 3 here (a rendezvous crosses the route three times, mpistack.py), not SMPI's "
                 "default 11.64 fitted on another cluster" + rendezvous_note(args) + ".")
    L.append("")
    return L


def row_lines(rows, args):
    """The table: predicted, then per configuration measured (spread) and error."""
    cfgs = configs(args)
    L = ["| what | case | predicted (SMPI) | " + " | ".join(f"measured, {LABELS[c]} (min - max) | error" for c in cfgs)
         + " |", "|---|---|---|" + "---|---|" * len(cfgs)]
    for r in filter(shown, rows):
        cells = []
        for c in cfgs:
            t = "" if c == "default" else "_" + c
            e = r["error_percent" + t]
            cells.append(f"{r['measured' + t]:.4g} ({r['spread' + t][0]:.3g} - {r['spread' + t][1]:.3g}) | "
                         + ("not compared" if e is None else f"{e:+.1f} %"))
        L.append(f"| {r['what']} | {r['case']} | {r['predicted']:.4g} | " + " | ".join(cells) + " |")
    return L


def spans(args, started):
    """(first, last) of the emulated (measured) runs' result files in RUNDIR and of the simulated ones:
    this invocation's time when there are none (--resume keeps the measured runs of an earlier one)."""
    stamps = {True: [], False: []}
    for d, _, fs in os.walk(args.runs):
        for f in fs:
            if f in ("summary.json", "pingpong.json"):
                measured = os.path.relpath(d, args.runs).split(os.sep)[0].startswith(("emulated", "pingpong-emulated",
                                                                                  "pingpong-instant-emulated"))
                stamps[measured].append(os.path.getmtime(os.path.join(d, f)))
    return {k: (min(v), max(v)) if v else (started, time.time()) for k, v in stamps.items()}


def utc(t):
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(t))


def made(args, started):
    """When the runs were made: the emulated runs' span and the simulated runs' (with --resume, the
    simulated ones can be newer: the prediction remade on the same measurements)."""
    s = spans(args, started)
    return (f"Emulated runs made {utc(s[True][0])} - {utc(s[True][1])}, simulated runs {utc(s[False][0])} - "
            f"{utc(s[False][1])} (this report written {utc(time.time())})")


def shares_note(args, extra):
    """The containers with part of their cores' time (platform properties cpu_share and cpu_period:
    the emulator's CFS quota, the model's duty cycle), from the platform the runs used; "" when none."""
    import re
    import xml.etree.ElementTree as ET
    plat = next((e.split("=", 1)[1] for e in extra if e.startswith("platform.file=")), None)
    if not plat:
        m = re.search(r'file\s*=\s*"([^"]+)"', open(args.scenario).read())
        plat = m and os.path.join(os.path.dirname(args.scenario), m.group(1))
    if not plat or not os.path.isfile(plat):
        return ""
    props = {h.get("id"): {q.get("id"): q.get("value") for q in h.iter("prop")} for h in ET.parse(plat).iter("host")}
    shares = [(h, p["cpu_share"], f"{p['cpu_period']} s" if "cpu_period" in p else "Linux's default period",
               p.get("cpu_tick"), p.get("cpu_quota_efficiency")) for h, p in props.items() if "cpu_share" in p]
    return "" if not shares else " Part of a core: " + ", ".join(
        f"{h} gets {float(v):g} of its cores' time per {per}"
        " (cpu_share, cpu_period: a CFS quota in the emulation, its duty cycle in the model"
        + (f", throttled at the kernel's {float(tick) * 1e3:g} ms tick, cpu_tick" if tick else "")
        + (f"; in its windows its work runs at {float(eff):.3g} of its free rate, cpu_quota_efficiency, measured "
           "before each round: quota-samples.jsonl" if eff else "") + ")"
        for h, v, per, tick, eff in shares) + "."


def report(args, extra, rows, started, emu, smpi, split=()):
    cmd = "validation/study/compare_real.py " + " ".join(args.argv)
    load = open("/proc/loadavg").read().split()[:3]
    lines = [f"# The communication model against an emulated network: {os.path.basename(args.scenario)}", "",
             f"Command: `{cmd}`", "",
             f"{made(args, started)}; {kernel_note(args.native)}; load average before: {' '.join(args.load_before)},"
             f" after: {' '.join(load)}; {os.cpu_count()} cores.", "",
             f"Containers and platform from the scenario (with {' '.join(extra) or 'no extra options'}); SMPI runs on "
             f"it with the MPI stack measured on this emulated cloud, {args.stack_s * 1e6:.1f} us a message one way "
             "(platform-stack.xml, stack.json: validation/study/mpistack.py)."
             + shares_note(args, extra)
             + ((" " + calibration.rate_line(args.rate_probe) + " " + calibration.search_line(args.rate_probe)).rstrip()
                if getattr(args, "rate_probe", None) else "")
             + " Emulated with "
             "Open MPI's TCP transport as it comes (messages over 64 KiB by rendezvous)"
             + (f" and, interleaved with it, with its eager limit raised to {args.mpi_eager} B. " if args.mpi_eager else
                ". ") + "Emulated "
             f"messages: median of {args.repeats} round(s) of every size (spread: min-max of all repetitions); "
             f"DEM: {args.particles} particles, {args.steps} steps, {args.repeats} emulated run(s) per row "
             f"(each row the median of its runs; spread: min-max), {args.sim_repeats} SMPI run(s) with noise seeds "
             f"0-{args.sim_repeats - 1} (each row the median of its runs: each seed starts the run at another point of a quota's "
             "period and of the kernel's tick, so that the steps fall differently against its windows, as the emulated runs' do "
             "from run to run). Total time: the time loop (summary.json's "
             "sim_time_s, as compare_real.py compares it; set-up and the last output are outside it). "
             "Error = (predicted - measured) / measured.",
             "", "## Messages by size band", ""] + band_lines(rows, configs(args)) + [
             ""] + reading(rows, args) + (split_lines(split) if split else []) + [
             "## Every row (messages: every fourth size; compare_real.json has all 21)", ""] + row_lines(rows, args)
    lines += ["", "![message times](emulated.png)", ""]
    with open(os.path.join(args.out, "EMULATED.md"), "w") as f:
        f.write("\n".join(lines))
    with open(os.path.join(args.out, "compare_real.json"), "w") as f:
        json.dump({"scenario": args.scenario, "emulate": True, "command": cmd, "kernel": kernel_note(args.native),
                   "mpi_eager": args.mpi_eager, "measured_from": utc(spans(args, started)[True][0]),
                   "rows": rows, "exchange_split_s": list(split)}, f, indent=1)
    figure(emu, smpi, os.path.join(args.out, "emulated.png"))
    print(f"report: {os.path.join(args.out, 'EMULATED.md')}")


def main(args, extra):
    if os.geteuid() != 0:
        fail("--emulate needs root (network namespaces, tc, cgroups)")
    started = time.time()
    args.load_before = open("/proc/loadavg").read().split()[:3]
    os.makedirs(args.out, exist_ok=True)
    args.runs = os.path.abspath(args.runs or os.path.join(args.out, "runs"))
    emu, instant_table, inst = emulated_messages(args, extra)
    measure_stack(args, extra, instant_table, inst)
    smpi = exec_pingpong(args.smpi, args, os.path.join(args.runs, "pingpong-smpi"),
                         extra + ["--set", f"platform.file={smpi_platform(args, extra)}"], 1, False)
    with open(os.path.join(args.out, "pingpong.json"), "w") as f:
        json.dump({"smpi": list(smpi.values()), **{"emulated_" + c: list(e.values()) for c, e in emu.items()}}, f,
                  indent=1)
    res = dem_runs(args, extra)
    report(args, extra, message_rows(emu, smpi) + dem_rows(res, args.probed), started, emu, smpi, exchange_split(res))
