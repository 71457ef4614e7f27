#!/usr/bin/python3
"""CTest check: remote offload (device.server) computes what a local device computes.

    tests/scripts/check_offload.py --demsim build/smpi/demsim --out DIR

Runs case 3's platform (scenarios/case3.cfg) at 8,000 particles: two ranks on two CN-6700-4
containers under RW (repartitions every 10 steps, 30 steps), once with their own devices and once
with every kernel run by a device server on the GPU container (device.server = g1-cngpu; in the
native build the server is one more local process). Checks:
  - the final state is the same to the bit: kinetic energy, particle count, and every particle's
    position and velocity (particles.h5, matched by id). The server runs the same kernels on a
    mirror of each rank's store; a copy the protocol forgot would change the result;
  - the summary names the server's device;
  - SMPI only, a closed-form lower bound on what the network adds: one rank on CN-6700-4 offloading
    to the GPU container takes longer than the same rank run on the GPU container itself, by at
    least two answered round trips per step (kick-drift, whose answer carries the search test,
    and external), each crossing the two nodes' NIC links (25 us each, platforms/openstack.xml)
    twice.
Exit status 0 when all hold, else 1.
"""
import os
import sys

import h5py
import numpy as np

import checking

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
SCEN = os.path.join(TOP, "scenarios", "case3.cfg")
NIC_LATENCY = 25e-6
STEPS = 30


def run(demsim, out, name, ranks, hosts, server=None):
    d = os.path.join(out, name)
    opts = [SCEN, "--particles", "8000", "--steps", str(STEPS), "--repartition-every", "10", "--ranks", str(ranks),
            "--policy", "RW", "--set", "platform.hosts=" + ",".join(hosts)]
    if server:
        opts += ["--set", f"device.server={server}"]
    return checking.demsim_run("check_offload.py", demsim, opts, d), d


def final_state(d):
    """(ids, pos, vel) of the last frame, sorted by id."""
    with h5py.File(os.path.join(d, "particles.h5"), "r") as f:
        g = f[sorted(k for k in f.keys() if k.startswith("Step"))[-1]]
        ids = np.asarray(g["ParticleIDs"])
        order = np.argsort(ids)
        return ids[order], np.asarray(g["Coordinates"])[order], np.asarray(g["Velocities"])[order]


def main():
    a = checking.args(__doc__)
    two = ["n1-cn6700-4", "n2-cn6700-4"]
    local, dl = run(a.demsim, a.out, "local", 2, two)
    smpi = local.get("build") == "smpi"
    server = "g1-cngpu" if smpi else "localhost"
    remote, dr = run(a.demsim, a.out, "remote", 2, two, server)
    fails = []
    for k in ("particles_end", "kinetic_energy_end_J"):
        if local[k] != remote[k]:
            fails.append(f"{k}: local {local[k]!r}, remote {remote[k]!r}")
    (il, pl, vl), (ir, pr, vr) = final_state(dl), final_state(dr)
    if not (np.array_equal(il, ir) and np.array_equal(pl, pr) and np.array_equal(vl, vr)):
        fails.append("final positions or velocities differ between the local and the remote run")
    if "remote" not in remote["device"] or (smpi and server not in remote["device"]):
        fails.append(f"the summary's device does not name the server: {remote['device']!r}")
    print(f"check_offload.py: {local['particles_end']} particles, final kinetic energy {local['kinetic_energy_end_J']!r} "
          f"local and remote; simulated time {local['sim_time_s']:.4g} s local, {remote['sim_time_s']:.4g} s remote")
    if smpi:
        on_gpu, _ = run(a.demsim, a.out, "on-gpu", 1, ["g1-cngpu"])
        offload, _ = run(a.demsim, a.out, "offload", 1, ["n1-cn6700-4"], server)
        bound = STEPS * 2 * 2 * (2 * NIC_LATENCY)
        added = offload["sim_time_s"] - on_gpu["sim_time_s"]
        print(f"check_offload.py: 1 rank: {on_gpu['sim_time_s']:.4g} s on the GPU container, "
              f"{offload['sim_time_s']:.4g} s offloading to it: the network adds {added:.4g} s (at least {bound:.4g})")
        if not added >= bound:
            fails.append(f"offloading adds {added:.4g} s to the GPU container's own time, less than the round trips' "
                         f"{bound:.4g} s")
    for f in fails:
        print("check_offload.py: FAIL:", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
