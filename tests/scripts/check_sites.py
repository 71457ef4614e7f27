#!/usr/bin/python3
"""CTest check: the DEM over two sites (run.partitioner = HIER, platform.sites).

    tests/scripts/check_sites.py --demsim build/smpi/demsim --out DIR

scenarios/twosite.cfg (five CN-6700-4 at site A, three CN-6700-2 at site B) at 5,000 particles,
40 steps, RW with a repartition every 10 steps (three repartitions after the set-up). Checks:
  - run.site_threshold = 1000 %: RW never moves a site's share that far, so the plane between the
    sites is cut once, at the set-up: no repartition counts as a move of the sites' shares, no
    migration record crosses the WAN, and the sites keep the shares of equal weights (5/8, 3/8);
  - run.site_threshold = 0: every RW update moves the shares, each repartition crosses the sites;
  - SMPI only: flat RCB and HIER over the committed platform (10 ms, 1 Gbit/s WAN) and over the
    same sites without a WAN (make_platforms.py twosite(0, 1e10)): the bytes between the sites do
    not depend on the network (the modelled loads set the weights, not the network), and HIER
    sends fewer ghost bytes per step across the sites than flat RCB, whose first cut (four ranks
    against four) puts a site A rank among site B's.
The native build runs the first two (eight local processes; the weights then come from real
timings, and the checks hold whatever they are).
Exit status 0 when all hold, else 1.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "platforms"))
from make_platforms import twosite  # noqa: E402
import checking  # noqa: E402

SCEN = os.path.join(TOP, "scenarios", "twosite.cfg")
STEPS, EVERY = 40, 10


def run(demsim, out, name, extra):
    return checking.demsim_run("check_sites.py", demsim, [SCEN, "--particles", "5000", "--steps", str(STEPS),
                               "--repartition-every", str(EVERY), "--policy", "RW"] + extra, os.path.join(out, name))


def main():
    a = checking.args(__doc__)
    fails = []
    held = run(a.demsim, a.out, "held", ["--set", "run.site_threshold=1000"])
    s = held["sites"]
    if held["repartitions"] < 2:
        fails.append(f"held: {held['repartitions']} repartitions, expected a few")
    if s["site_moves"] != 0 or s["wan_migration_bytes"] != 0:
        fails.append(f"held: site_moves {s['site_moves']}, WAN migration {s['wan_migration_bytes']} B, expected 0 and 0")
    if abs(s["final_weight_share"][0] - 5 / 8) > 1e-9 or abs(s["final_weight_share"][1] - 3 / 8) > 1e-9:
        fails.append(f"held: final shares {s['final_weight_share']}, expected [0.625, 0.375]")
    if s["ranks_per_site"] != [5, 3] or s["wan_ghost_state_bytes_per_step"] <= 0:
        fails.append(f"held: ranks per site {s['ranks_per_site']}, WAN ghost bytes {s['wan_ghost_state_bytes_per_step']}")
    free = run(a.demsim, a.out, "free", ["--set", "run.site_threshold=0"])
    if free["sites"]["site_moves"] != free["repartitions"]:
        fails.append(f"threshold 0: {free['sites']['site_moves']} moves of the shares in {free['repartitions']} "
                     "repartitions, expected one each")
    if held.get("build") == "smpi":
        plat = os.path.join(a.out, "twosite-nowan.xml")
        with open(plat, "w") as f:
            f.write(twosite(0.0, 1e10))
        res = {}
        for part in ("RCB", "HIER"):
            for wan, extra in (("wan", []), ("nowan", ["--set", f"platform.file={plat}"])):
                res[(part, wan)] = run(a.demsim, a.out, f"{part}-{wan}", ["--set", f"run.partitioner={part}"] + extra)
        for part in ("RCB", "HIER"):
            x, y = res[(part, "wan")]["sites"], res[(part, "nowan")]["sites"]
            for k in ("wan_bytes_per_step", "wan_ghost_state_bytes_per_step", "wan_migration_bytes"):
                if x[k] != y[k]:
                    fails.append(f"{part}: {k} {x[k]} with the WAN, {y[k]} without: expected the same")
            if not res[(part, "wan")]["sim_time_s"] > res[(part, "nowan")]["sim_time_s"]:
                fails.append(f"{part}: the run over the WAN is not slower than without it")
        h, f = (res[(p, "wan")]["sites"]["wan_ghost_state_bytes_per_step"] for p in ("HIER", "RCB"))
        if not h < f:
            fails.append(f"HIER sends {h:.0f} ghost bytes per step across the sites, flat RCB {f:.0f}: expected fewer")
        else:
            print(f"check_sites.py: ghost bytes per step across the sites: HIER {h:.0f}, flat RCB {f:.0f}")
    for m in fails:
        print("check_sites.py: FAIL: " + m)
    if not fails:
        print("check_sites.py: all checks hold")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
