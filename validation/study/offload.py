#!/usr/bin/python3
"""Remote offload: when does running a container's DEM kernels on a remote P100 beat its own cores?

    validation/study/offload.py [--scale tiny|study] [--out DIR] [--demsim PATH] [-j N]

The study's cloud (platforms/openstack.xml) with its NIC links (1 Gbps in the study) set to each
bandwidth of the sweep (DIR/platforms/). Two layouts, each run with its own cores (device.server
unset) and with every kernel offloaded to the device server on the GPU container g1-cngpu
(device.server = "g1-cngpu", solver/device/remote.h):
  1 rank : one CN-6700-4 container (n1-cn6700-4) holds all the particles;
  2 ranks: two CN-6700-4 containers (n1, n2) under NOW, sharing the one remote P100.
Particles per rank: the sweep's counts (the 2-rank runs have twice as many in all). Reported per
point: the total simulated time both ways and the speed-up of offloading (own cores / offloaded),
and where the offloaded rank's time goes (waiting for the device and the network during the
kernels, the ghost stage, the repartitions, which move whole stores over the LAN twice).
Writes DIR/OFFLOAD.md (tables, and a paragraph computed from them) and DIR/offload.png (speed-up
against particles per rank, a line per bandwidth; solid 1 rank, dashed 2 ranks).

Scales: tiny = 5,000 and 20,000 particles per rank, 20 steps, 1 Gbps and 10 Gbps (about a minute);
study = 50,000, 200,000 and 500,000 per rank (500,000: the study's count on one container),
200 steps with a repartition every 50, 100 Mbps, 1 Gbps and 10 Gbps (about 20 minutes on 2 cores).
--resume reuses the runs DIR holds; --commit names the build they were made with in the report.
Exit status: 0 when every run succeeded, 1 when one failed, 2 on bad arguments.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from sweep import commit_note, run_study, timers_job  # noqa: E402

SCENARIO = os.path.join(TOP, "scenarios", "case3.cfg")
COMMIT = ""  # --commit: the build the runs were made with, named in the report
SERVER = "g1-cngpu"
LAYOUTS = {1: ["n1-cn6700-4"], 2: ["n1-cn6700-4", "n2-cn6700-4"]}
# (particles per rank, steps, repartition every, NIC bandwidths in B/s)
SCALES = {"tiny": ([5000, 20000], 20, 10, [125e6, 1.25e9]),
          "study": ([50000, 200000, 500000], 200, 50, [12.5e6, 125e6, 1.25e9])}


def gbps(bw):
    return f"{bw * 8 / 1e9:g} Gbps"


def platform_with_nic(bw, out):
    """openstack.xml with every node's NIC link at bw B/s (the veth links and latencies unchanged)."""
    with open(os.path.join(TOP, "platforms", "openstack.xml")) as f:
        text = f.read()
    text, n = re.subn(r'(<link id="[^"]*-nic" bandwidth=")[^"]*"', rf'\g<1>{bw:.6g}Bps"', text)
    if n == 0:
        raise RuntimeError("platforms/openstack.xml has no '-nic' links to change")
    os.makedirs(os.path.join(out, "platforms"), exist_ok=True)
    path = os.path.join(out, "platforms", f"openstack-nic-{bw:.3g}.xml")
    with open(path, "w") as f:
        f.write(text)
    return path


def jobs(scale, out):
    counts, steps, every, bws = SCALES[scale]
    todo = []
    for ranks, hosts in LAYOUTS.items():
        for n in counts:
            for bw in bws:
                for remote in (False, True):
                    if ranks == 1 and not remote and bw != bws[0]:
                        continue  # one rank on its own cores sends nothing over the NIC
                    name = f"r{ranks}-n{n}-bw{bw:.3g}-{'remote' if remote else 'local'}"
                    extra = ["--particles", str(n * ranks), "--steps", str(steps), "--repartition-every", str(every),
                             "--ranks", str(ranks), "--set", "platform.hosts=" + ",".join(hosts),
                             "--set", "platform.file=" + platform_with_nic(bw, out)]
                    if remote:
                        extra += ["--set", f"device.server={SERVER}"]
                    todo.append(((ranks, n, bw, remote), name, extra))
    return todo


run_job = timers_job(SCENARIO, "NOW", lambda s, t: {
    "time": s["sim_time_s"], "compute": t["compute"], "ghosts": t["ghosts"], "repartition": t["repartition"],
    "device": s["device"]})


def results(scale, res):
    """{(ranks, n, bw): (local, remote)} with the 1-rank local run shared by every bandwidth."""
    counts, _, _, bws = SCALES[scale]
    out = {}
    for ranks in LAYOUTS:
        for n in counts:
            for bw in bws:
                local = res.get((ranks, n, bws[0] if ranks == 1 else bw, False))
                out[(ranks, n, bw)] = (local, res.get((ranks, n, bw, True)))
    return out


def report(scale, pairs, out):
    counts, steps, every, bws = SCALES[scale]
    L = ["# Remote offload: a container's kernels on a remote P100", "",
         f"Command: `validation/study/offload.py --scale {scale}`{COMMIT} (platform: platforms/openstack.xml with the NIC links at "
         f"each bandwidth; scenario case 3's cloud; {steps} steps, a repartition every {every}, NOW). Times are "
         "simulated seconds. Speed-up = time on the container's own 4 cores / time offloading every kernel to "
         f"the device server on {SERVER} (the P100 container), over the LAN. Both are the time loop's: the "
         "first upload of each rank's store to the server and the last download for the output happen once a "
         "run, outside it.", ""]
    for ranks in LAYOUTS:
        L += [f"## {ranks} rank{'s' if ranks > 1 else ''} ({', '.join(LAYOUTS[ranks])})", "",
              "| particles per rank | NIC | own cores (s) | offloaded (s) | speed-up | offloaded: kernels + device waits / "
              "ghosts / repartitions (s) |", "|---|---|---|---|---|---|"]
        for n in counts:
            for bw in bws:
                lo, re_ = pairs[(ranks, n, bw)]
                if not lo or not re_:
                    L.append(f"| {n:,} | {gbps(bw)} | failed | | | |")
                    continue
                L.append(f"| {n:,} | {gbps(bw)} | {lo['time']:.4g} | {re_['time']:.4g} | {lo['time'] / re_['time']:.2f} | "
                         f"{re_['compute']:.3g} / {re_['ghosts']:.3g} / {re_['repartition']:.3g} |")
        L.append("")
    L += ["## What the runs say", ""] + findings(scale, pairs) + ["", "![speed-up of remote offload](offload.png)", ""]
    with open(os.path.join(out, "OFFLOAD.md"), "w") as f:
        f.write("\n".join(L))


def findings(scale, pairs):
    """Sentences computed from the table: where offloading wins, and the break-even point."""
    counts, _, _, bws = SCALES[scale]
    S = []
    for ranks in LAYOUTS:
        wins, loses = [], []
        for n in counts:
            for bw in bws:
                lo, re_ = pairs[(ranks, n, bw)]
                if lo and re_:
                    (wins if lo["time"] > re_["time"] else loses).append((n, bw, lo["time"] / re_["time"]))
        head = f"With {ranks} rank{'s' if ranks > 1 else ''}"
        if wins:
            best = max(wins, key=lambda w: w[2])
            S.append(f"- {head}, offloading wins at {len(wins)} of {len(wins) + len(loses)} points; the largest speed-up "
                     f"is {best[2]:.2f}x ({best[0]:,} particles per rank at {gbps(best[1])}).")
        else:
            S.append(f"- {head}, offloading loses at every point of the sweep.")
        if loses:
            worst = min(loses, key=lambda w: w[2])
            S.append(f"  It loses at {len(loses)} point(s); the worst is {worst[2]:.2f}x ({worst[0]:,} particles per "
                     f"rank at {gbps(worst[1])}).")
        for bw in bws:
            row = [(n, pairs[(ranks, n, bw)]) for n in counts if all(pairs[(ranks, n, bw)])]
            even = [n for n, (lo, re_) in row if lo["time"] > re_["time"]]
            if row:
                S.append(f"  At {gbps(bw)}: " + (f"it pays from {min(even):,} particles per rank on."
                                                  if even else "it never pays in this range."))
    S.append("- Each step costs the offloading rank round trips to the server (kick-drift with the search test, "
             "external, the ghost rows both ways), and each repartition and ghost registration moves the rank's whole store "
             "to the host and back over the LAN: the host keeps the particles' authority, as the protocol requires. "
             "The P100 model itself is sim/gpu.c's (platforms/README.md).")
    return S


def figure(scale, pairs, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    counts, _, _, bws = SCALES[scale]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    colors = ["tab:red", "tab:blue", "tab:green", "tab:purple"]
    for ranks, style in ((1, "-o"), (2, "--s")):
        for bw, c in zip(bws, colors):
            pts = [(n, pairs[(ranks, n, bw)]) for n in counts if all(pairs[(ranks, n, bw)])]
            if pts:
                ax.plot([n for n, _ in pts], [lo["time"] / re_["time"] for _, (lo, re_) in pts], style, color=c,
                        label=f"{ranks} rank{'s' if ranks > 1 else ''}, NIC {gbps(bw)}")
    ax.axhline(1.0, color="gray", lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("particles per rank")
    ax.set_ylabel("speed-up of offloading to the remote P100\n(own 4 cores / offloaded)")
    ax.set_title("Remote offload over the LAN (case 3's cloud)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "offload.png"), dpi=110)
    plt.close(fig)


def write(a, res):
    global COMMIT
    COMMIT = commit_note(a.commit)
    pairs = results(a.scale, res)
    report(a.scale, pairs, a.out)
    figure(a.scale, pairs, a.out)
    return f"{os.path.join(a.out, 'OFFLOAD.md')}, offload.png"


def main():
    return run_study(__doc__, SCALES, "offload", jobs, run_job, write)


if __name__ == "__main__":
    sys.exit(main())
