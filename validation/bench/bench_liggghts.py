#!/usr/bin/python3
"""Kernel throughput against LIGGGHTS, side by side, on the same gravity packing.

    validation/bench/bench_liggghts.py [--particles N] [--steps S] [--repeat R] [--lattices apart,contact]
                                 [--ranks 1,2] [--out DIR] [--demsim PATH] [--liggghts PATH]
    validation/bench/bench_liggghts.py --deck-only DIR [--lattices contact] [--particles N] [--steps S]

For each lattice (scenarios/bench-apart.cfg: diameter 0.99 x spacing, no contact;
scenarios/bench-contact.cfg: 1.001 x spacing, about 6 contacts each) it runs, R times (REPEAT in
the environment, default 3) and interleaved:
  demsim    build/native/demsim run scenarios/bench-LATTICE.cfg --particles N --steps S
            1 rank: one process; PoCL runs its kernels on every core
            2 ranks: --ranks 2 --set platform.hosts=["local-0","local-1"]: two MPI ranks, one
            per core, each rank's PoCL on its own core (as LIGGGHTS runs)
  LIGGGHTS  mpirun -np 2 --oversubscribe liggghts -in DIR/LATTICE/in.bench
            (two MPI ranks, one per core of a 2-core machine)
and prints the particle-steps per second of each (demsim: summary.json's particles x steps /
wall_loop_s; LIGGGHTS: its "Loop time of ..." line), the ratio demsim / LIGGGHTS per pair and
per demsim layout (--ranks: which layouts, default both) and the medians. The 2-rank ratio is
the like-for-like one (both codes on two MPI ranks); the 1-rank ratio shows what one process
over all cores gives (on a machine whose cores do not share a last-level cache, the PoCL
threads, which take the work-groups of every kernel in whatever order they come, pull each
other's particle data across the chip: BENCHMARKS.md), then a check that both simulated the same thing: the kinetic energy at the end
(translational + rotational; both are set-up-free and double precision) and the number of
particle-particle contacts at the end. Last, where each code's loop time went (demsim:
summary.json's rank-0 timers; LIGGGHTS: its Pair/Neigh/Comm/Other lines). The header line
carries the date, the commit and the load average: on a machine shared with other work the
absolute figures move from run to run, the ratios within one interleaved pair are what counts.

--deck-only DIR writes LIGGGHTS's deck and data file of each lattice into DIR/LATTICE/ and
stops (no LIGGGHTS needed; check_bench_liggghts.py compares that data file with demsim's own
packing).

How each setting maps (demsim's key -> the deck's command), from `demsim run CFG --dry-run`:
  problem.box, walls       region 0..box on every axis, `boundary f f f`; demsim's six walls
                           (box_lo/box_hi, solver/dem/physics_ref.c) -> six `fix wall/gran ...
                           primitive` planes (xplane/yplane/zplane at 0 and box), the same
                           Hertz-Mindlin law as particle contacts (wall of infinite mass and
                           radius: R* = r, m* = m in both)
  lattice                  the sites of solver/scenario/scenario.c dem_scenario_lattice() (the spacing
                           from particles, box and fill, shrunk until the sites hold them; x
                           fastest, then y, then z, from the floor up), written one atom per
                           site into a `read_data` file (17 significant digits); jitter must be 0
  diameter_ratio           the atoms' diameter = ratio x spacing
  material.density         the atoms' density column
  youngs_modulus, poisson  `fix property/global youngsModulus / poissonsRatio peratomtype`:
                           LIGGGHTS derives E* = E/(2(1-nu^2)) and G* = G/(2(2-nu)) as demsim
                           does (solver/dem/params.c), so k_n = 4/3 E* sqrt(R* delta) and
                           k_t = 8 G* sqrt(R* delta) agree
  restitution, friction    `coefficientRestitution / coefficientFriction peratomtypepair`
  contact law              `pair_style gran model hertz tangential history limitForce on`:
                           limitForce keeps the normal force from pulling, as demsim does
  physics.gravity          `fix gravity |g| vector 0 0 sign(g)`
  time.dt, time.steps      `timestep`, `run`
  physics.skin_ratio       `neighbor skin bin` with skin = skin_ratio x diameter (demsim's skin),
                           `neigh_modify delay 0 every 1 check yes`: both rebuild their lists when
                           a particle may have moved half the skin; in S = 2000 steps of 1e-8 s
                           nothing moves that far, so both search once, at set-up (outside the
                           timed loop in both), and LIGGGHTS reports 0 list builds
  integration              `fix nve/sphere` (velocity Verlet with rotation, as demsim's kick-drift)
  ranks                    `processors * * 1`: the two ranks split x, each with half the packing
                           (the default grid would cut z and leave one rank the empty upper half)
What differs:
  - normal damping: demsim finds by bisection the coefficient of its delta^(1/4)-scaled damping
    that gives exactly the restitution (solver/dem/params.c); LIGGGHTS uses the closed form
    gamma_n = -2 sqrt(5/6) beta sqrt(S_n m*), beta = ln e / sqrt(ln^2 e + pi^2) (same law, another
    coefficient: in demsim's units, 0.80 against demsim's 1.11 for e = 0.3, which realises a
    restitution of about 0.40 in LIGGGHTS). The benchmark covers 20 us of a contact that lasts
    milliseconds: the velocities and the damping force are still tiny at its end.
  - tangential damping: LIGGGHTS adds it only while a contact sticks; demsim caps spring plus
    damping together at mu F_n.
  - work per pair: LIGGGHTS (newton off) walks a half neighbour list, each pair's law computed
    once per rank that holds it (twice only across the rank boundary); demsim's kernels walk a
    full list, each pair's law computed from both sides (no write conflict between threads).
  - parallelism: LIGGGHTS exchanges ghost atoms between its two ranks every step (`communicate
    single vel yes`); so do demsim's two ranks (its ghost exchange, RCB halves); demsim's one
    process has none and splits the particles over PoCL threads.
  - output: LIGGGHTS prints thermo at the first and the last step; demsim writes metrics every
    500 steps and checks the state every 1000 (both inside its timed loop).
  - LIGGGHTS sorts its atoms spatially every 1000 steps (its default).
Exit status: 0, 1 when a run failed, 2 when something is missing or an argument is bad (LIGGGHTS
itself: `apt-get install liggghts`, Debian's LIGGGHTS-PUBLIC 3.8).
"""
import argparse
import datetime
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
LATTICES = ("apart", "contact")
WALLS = [(axis, pos) for axis in "xyz" for pos in ("lo", "hi")]


class Missing(Exception):
    """Something the benchmark needs is not there (exit status 2)."""


def scenario_values(demsim, cfg, particles, steps):
    """The effective configuration (`demsim run CFG --dry-run`): key -> number or string."""
    cmd = [demsim, "run", cfg, "--dry-run"]
    if particles:
        cmd += ["--particles", str(particles)]
    if steps:
        cmd += ["--steps", str(steps)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise Missing(f"{' '.join(cmd)} failed (exit {res.returncode}): {res.stderr.strip()}")
    vals = {}
    for line in res.stdout.splitlines():
        m = re.match(r"\s+([a-z_.]+)\s+= (\"[^\"]*\"|\S+)", line)
        if m:
            v = m.group(2)
            try:
                vals[m.group(1)] = float(v)
            except ValueError:  # strings and booleans: kept as text
                vals[m.group(1)] = v.strip('"')
    return vals


def sites_along(length, d, spacing):
    return int(math.floor((length - d) / spacing + 1e-9)) + 1


def lattice(v):
    """Port of solver/scenario/scenario.c dem_scenario_lattice(): spacing, diameter, sites, origin."""
    box, fill, ratio, count = v["problem.box"], v["problem.fill"], v["problem.diameter_ratio"], int(v["problem.particles"])
    if v["problem.jitter"] != 0 or count <= 0:
        raise Missing("problem.jitter must be 0 and problem.particles > 0: the deck writes the plain lattice")
    height = box * fill
    spacing = v["problem.spacing"] or (box * box * height / count) ** (1.0 / 3.0)
    d = ratio * spacing
    nxy, nz = sites_along(box, d, spacing), sites_along(height, d, spacing)
    tries = 0
    while v["problem.spacing"] <= 0 and count > nxy * nxy * nz and tries < 100:
        spacing *= 0.999
        d = ratio * spacing
        nxy, nz = sites_along(box, d, spacing), sites_along(height, d, spacing)
        tries += 1
    if count > nxy * nxy * nz:
        raise Missing(f"{count} particles do not fit the lattice of spacing {spacing} m")
    span = (nxy - 1) * spacing
    return {"count": count, "nxy": nxy, "nz": nz, "spacing": spacing, "diameter": d,
            "origin": (0.5 * (box - span), 0.5 * (box - span), 0.5 * d)}


def write_deck(v, lat, where):
    """LIGGGHTS's data file and input deck for scenario values v; returns the deck's path."""
    os.makedirs(where, exist_ok=True)
    box, d, sp, o, nxy = v["problem.box"], lat["diameter"], lat["spacing"], lat["origin"], lat["nxy"]
    with open(os.path.join(where, "data.bench"), "w") as f:
        f.write(f"LIGGGHTS data: {v['name']}, the lattice of demsim's solver/scenario/scenario.c\n\n"
                f"{lat['count']} atoms\n1 atom types\n\n")
        for axis in "xyz":
            f.write(f"0 {box!r} {axis}lo {axis}hi\n")
        f.write("\nAtoms\n\n")
        rho = v["material.density"]
        for g in range(lat["count"]):
            ix, iy, iz = g % nxy, (g // nxy) % nxy, g // (nxy * nxy)
            f.write(f"{g + 1} 1 {d!r} {rho!r} {o[0] + ix * sp!r} {o[1] + iy * sp!r} {o[2] + iz * sp!r}\n")
    gz = v["physics.gravity"]
    law = "model hertz tangential history"
    walls = "\n".join(f"fix wall{k} all wall/gran {law} primitive type 1 {axis}plane {0.0 if pos == 'lo' else box!r} "
                      "limitForce on" for k, (axis, pos) in enumerate(WALLS))
    deck = f"""# {v['name']} at {lat['count']} particles: demsim's scenario (validation/bench/bench_liggghts.py)
atom_style granular
atom_modify map array
boundary f f f
newton off
communicate single vel yes
units si
processors * * 1
read_data data.bench
neighbor {v['physics.skin_ratio'] * d!r} bin
neigh_modify delay 0 every 1 check yes
fix m1 all property/global youngsModulus peratomtype {v['material.youngs_modulus']!r}
fix m2 all property/global poissonsRatio peratomtype {v['material.poisson']!r}
fix m3 all property/global coefficientRestitution peratomtypepair 1 {v['material.restitution']!r}
fix m4 all property/global coefficientFriction peratomtypepair 1 {v['material.friction']!r}
pair_style gran {law} limitForce on
pair_coeff * *
timestep {v['time.dt']!r}
fix grav all gravity {abs(gz)!r} vector 0.0 0.0 {-1.0 if gz < 0 else 1.0}
{walls}
fix integr all nve/sphere
compute rke all erotate/sphere
compute cn all contact/atom/gran
compute cs all reduce sum c_cn
thermo_style custom step atoms ke c_rke c_cs
thermo_modify lost error norm no
thermo {int(v['time.steps'])}
run {int(v['time.steps'])}
"""
    path = os.path.join(where, "in.bench")
    with open(path, "w") as f:
        f.write(deck)
    return path


def wall_contacts(pos, radius, box):
    """Particle-wall contacts, as solver/io/snapshot.c counts them (|x - plane| < r)."""
    n = 0
    for a in range(3):
        n += int(((abs(pos[:, a]) < radius) | (abs(pos[:, a] - box) < radius)).sum())
    return n


def run_demsim(demsim, cfg, n, steps, box, out, ranks):
    cmd = [demsim, "run", cfg, "--particles", str(n), "--steps", str(steps), "--out", out, "--quiet"]
    if ranks > 1:  # one single-core container of platforms/local.xml per rank
        cmd += ["--ranks", str(ranks), "--set", "platform.hosts=[" + ",".join(f'"local-{k}"' for k in range(ranks)) + "]"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {res.returncode}\n{res.stdout}{res.stderr}")
    s = json.load(open(os.path.join(out, "summary.json")))
    import h5py  # Debian's python3-h5py; only the contact count needs it
    with h5py.File(os.path.join(out, "particles.h5"), "r") as f:
        g = f[sorted(f.keys())[-1]]
        pos, radius, contacts = g["Coordinates"][:], g["Radius"][:], g["Contacts"][:]
    t = s["rank0_timers_s"]
    return {"psteps": s["particles"] * s["steps"] / s["wall_loop_s"], "loop_s": s["wall_loop_s"],
            "ke": s["kinetic_energy_end_J"], "contacts": int(contacts.sum()) - wall_contacts(pos, radius, box),
            "parts": {k: t[k] for k in ("search", "forces", "integrate", "ghosts", "output")}}


def run_liggghts(launch, deck, n, steps):
    where = os.path.dirname(deck)
    log = os.path.join(where, "log.liggghts")
    cmd = launch + ["-in", os.path.basename(deck), "-log", log, "-screen", "none"]
    if os.path.exists(log):
        os.remove(log)
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=where)
    text = open(log).read() if os.path.exists(log) else ""
    m = re.search(r"Loop time of (\S+) on (\d+) procs for (\d+) steps with (\d+) atoms", text)
    if res.returncode != 0 or not m:
        raise RuntimeError(f"{' '.join(cmd)} (in {where}): exit {res.returncode}\n{res.stdout}{res.stderr}{text[-2000:]}")
    loop = float(m.group(1))
    if int(m.group(3)) != steps or int(m.group(4)) != n:
        raise RuntimeError(f"{log}: {m.group(0)}, expected {steps} steps with {n} atoms")
    rows = re.findall(rf"^\s+{steps}\s+{n}\s+(\S+)\s+(\S+)\s+(\S+)\s*$", text, re.M)
    if not rows:
        raise RuntimeError(f"{log}: no thermo line for step {steps}")
    ke, rke, cs = (float(x) for x in rows[-1])
    parts = {k.lower(): float(t) for k, t in re.findall(r"^(Pair|Neigh|Comm|Outpt|Other)\s+time \(%\) = (\S+)", text, re.M)}
    builds = re.search(r"Neighbor list builds = (\d+)", text)
    return {"psteps": n * steps / loop, "loop_s": loop, "ke": ke + rke, "contacts": int(round(cs)),
            "parts": parts, "builds": int(builds.group(1)) if builds else -1}


def header(n, steps, repeat):
    def git(*a):
        r = subprocess.run(["git", "-C", TOP] + list(a), capture_output=True, text=True)
        return r.stdout.strip()
    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    if git("status", "--porcelain", "--untracked-files=no"):
        commit += "+changes"
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    return (f"# bench_liggghts.py {now}, commit {commit}, {os.cpu_count()} cores, load average {load}; "
            f"{n} particles, {steps} steps, median of {repeat} interleaved pairs")


def find_liggghts(name):
    path = shutil.which(name)
    if not path:
        raise Missing(f"LIGGGHTS ('{name}') is not installed: `apt-get install liggghts` (Debian's LIGGGHTS-PUBLIC "
                      "3.8, binary /usr/bin/liggghts), or --liggghts PATH to another build")
    mpirun = shutil.which("mpirun")
    if not mpirun:
        raise Missing("mpirun not found: LIGGGHTS runs on 2 MPI ranks (Open MPI's mpirun)")
    launch = [mpirun, "-np", "2", "--oversubscribe"]
    if os.geteuid() == 0:  # Open MPI refuses root unless told
        launch.append("--allow-run-as-root")
    return launch + [path]


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--particles", type=int, default=50000)
    ap.add_argument("--steps", type=int, default=0, help="time steps (default: the scenario's, 2000)")
    ap.add_argument("--repeat", type=int, default=int(os.environ.get("REPEAT", "3")))
    ap.add_argument("--lattices", default=",".join(LATTICES))
    ap.add_argument("--ranks", default="1,2", help="demsim layouts: 1 (one process, all cores), 2 (one rank per core)")
    ap.add_argument("--out", help="keep every run's files here (default: a temporary folder)")
    ap.add_argument("--demsim", default=os.path.join(TOP, "build", "native", "demsim"))
    ap.add_argument("--liggghts", default=os.environ.get("LIGGGHTS", "liggghts"))
    ap.add_argument("--deck-only", metavar="DIR", help="write the decks into DIR and stop")
    a = ap.parse_args()
    a.lattices = a.lattices.split(",")
    bad = [x for x in a.lattices if x not in LATTICES]
    try:
        a.ranks = [int(x) for x in a.ranks.split(",")]
    except ValueError:
        a.ranks = []
    if bad or a.repeat < 1 or a.particles < 1 or a.steps < 0 or not a.ranks or any(x not in (1, 2) for x in a.ranks):
        ap.error(f"--lattices from {','.join(LATTICES)}, --ranks from 1,2, --repeat >= 1, --particles >= 1, --steps >= 0"
                 + (f" (unknown lattice {bad[0]})" if bad else ""))
    return a


def report(a, steps, results):
    """results[lat]: one (demsim runs by ranks, LIGGGHTS run) per pair."""
    med = statistics.median
    rows = [(lat, p, [(ds[p], g) for ds, g in results[lat]]) for lat in a.lattices for p in a.ranks]
    print(f"{'lattice':<8} {'ranks':>5} {'pair':>4} {'demsim p-steps/s':>17} {'LIGGGHTS p-steps/s':>19} {'ratio':>6} "
          f"{'load':>5}")
    for lat, p, rs in rows:
        for k, (d, g) in enumerate(rs):
            print(f"{lat:<8} {p:>5} {k + 1:>4} {d['psteps']:>17.4g} {g['psteps']:>19.4g} {d['psteps'] / g['psteps']:>6.2f} "
                  f"{d['load']:>5.2f}")
    print(f"\n{'lattice':<8} {'ranks':>5} {'demsim':>10} {'LIGGGHTS':>10} {'ratio':>6} {'best':>5}   {'KE end demsim J':>16} "
          f"{'LIGGGHTS J':>12} {'KE ratio':>9}   {'contacts demsim':>15} {'LIGGGHTS':>9}")
    for lat, p, rs in rows:
        d, g = rs[-1]
        print(f"{lat:<8} {p:>5} {med(x['psteps'] for x, _ in rs):>10.4g} {med(y['psteps'] for _, y in rs):>10.4g} "
              f"{med(x['psteps'] / y['psteps'] for x, y in rs):>6.2f} "
              f"{max(x['psteps'] for x, _ in rs) / max(y['psteps'] for _, y in rs):>5.2f}   {d['ke']:>16.7g} {g['ke']:>12.7g} "
              f"{d['ke'] / g['ke'] if g['ke'] else float('nan'):>9.5f}   {d['contacts']:>15} {g['contacts']:>9}")
    print("\n(ranks: demsim's layout, 1 = one process on every core, 2 = one rank per core as LIGGGHTS; median "
          "particle-steps/s; ratio = median of the pairs' demsim / LIGGGHTS; best = fastest demsim run / fastest "
          "LIGGGHTS run, the least disturbed of each on a shared machine; load: 1-minute load average before the pair; "
          "KE: translational + rotational at the last step; contacts: particle pairs touching at the last step, counted "
          "from both sides)")
    print("\nwhere the loop time went (median of the pairs, s; demsim: rank 0's timers):")
    for lat, p, rs in rows:
        dp = {k: med(x["parts"][k] for x, _ in rs) for k in rs[0][0]["parts"]}
        print(f"  {lat:<8} demsim {p} rank{'s' if p > 1 else ' '} loop {med(x['loop_s'] for x, _ in rs):.3g}: "
              + ", ".join(f"{k} {v:.3g}" for k, v in dp.items()))
    for lat in a.lattices:
        rs = results[lat]
        gp = {k: med(g["parts"].get(k, 0.0) for _, g in rs) for k in rs[0][1]["parts"]}
        print(f"  {lat:<8} LIGGGHTS        loop {med(g['loop_s'] for _, g in rs):.3g}: "
              + ", ".join(f"{k} {v:.3g}" for k, v in gp.items()) + f"; neighbour list builds {rs[-1][1]['builds']}")
    print(f"# load average at the end {' '.join(open('/proc/loadavg').read().split()[:3])}")


def run_pair(a, r, lat, scenario, liggghts, steps, out):
    """Pair r of lattice lat: demsim in each layout of a.ranks (scenario = cfg, box) and LIGGGHTS
    (launch, deck); which code goes first alternates, so that the machine's other work does not
    always hit the same side."""
    load = float(open("/proc/loadavg").read().split()[0])
    ds = {}

    def demsim_runs():
        for p in a.ranks:
            ds[p] = run_demsim(a.demsim, scenario[0], a.particles, steps, scenario[1],
                               os.path.join(out, lat, f"demsim-{p}-{r + 1}"), p)
            ds[p]["load"] = load
    if r % 2 == 0:
        demsim_runs()
        g = run_liggghts(liggghts[0], liggghts[1], a.particles, steps)
    else:
        g = run_liggghts(liggghts[0], liggghts[1], a.particles, steps)
        demsim_runs()
    return ds, g


def main():
    a = parse_args()
    try:
        if not os.access(a.demsim, os.X_OK):
            raise Missing(f"{a.demsim}: not built; cmake --preset native && cmake --build --preset native")
        cfgs = {lat: os.path.join(TOP, "scenarios", f"bench-{lat}.cfg") for lat in a.lattices}
        vals = {lat: scenario_values(a.demsim, cfgs[lat], a.particles, a.steps) for lat in a.lattices}
        lats = {lat: lattice(vals[lat]) for lat in a.lattices}
        if a.deck_only:
            for lat in a.lattices:
                print(write_deck(vals[lat], lats[lat], os.path.join(a.deck_only, lat)))
            return 0
        launch = find_liggghts(a.liggghts)
    except Missing as e:
        print(f"bench_liggghts.py: {e}", file=sys.stderr)
        return 2
    out = a.out or tempfile.mkdtemp(prefix="bench-liggghts-")
    steps = int(vals[a.lattices[0]]["time.steps"])
    decks = {lat: write_deck(vals[lat], lats[lat], os.path.join(out, lat, "liggghts")) for lat in a.lattices}
    print(header(a.particles, steps, a.repeat), flush=True)
    results = {lat: [] for lat in a.lattices}
    try:
        for r in range(a.repeat):
            for lat in a.lattices:
                results[lat].append(run_pair(a, r, lat, (cfgs[lat], vals[lat]["problem.box"]), (launch, decks[lat]),
                                             steps, out))
    except RuntimeError as e:
        print(f"bench_liggghts.py: a run failed: {e}", file=sys.stderr)
        return 1
    report(a, steps, results)
    if not a.out:
        shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
