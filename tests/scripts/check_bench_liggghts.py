#!/usr/bin/python3
"""CTest check of bench_liggghts.py's deck writer (native build; LIGGGHTS not needed).

    tests/scripts/check_bench_liggghts.py --demsim build/native/demsim --out DIR

1. `bench_liggghts.py --deck-only` at 700 particles (a partial top layer, and a spacing the
   lattice shrinks to fit) writes both lattices' decks; each data file holds, atom for atom, the
   packing demsim itself starts from: demsim runs the same scenario for one step and every
   particle's position is within 1e-12 m of its atom's (one step moves it by about 1e-16 m),
   every diameter equals 2 x demsim's radius, the ids run 1..N.
2. Each deck carries the scenario's material, time step, steps, gravity and skin
   (skin_ratio x diameter), and six walls at 0 and the box's edge.
3. A missing LIGGGHTS exits with 2 and names `apt-get install liggghts`; an unknown lattice
   exits with 2.
Exit status 0 when all hold, else 1 (each failure printed).
"""
import os
import re
import subprocess
import sys

import h5py
import numpy as np

import checking

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
BENCH = os.path.join(TOP, "validation", "bench", "bench_liggghts.py")
N = 700
check = checking.Checks("check_bench_liggghts.py")


def atoms(path):
    text = open(path).read()
    rows = text.split("\nAtoms\n", 1)[1].split()
    a = np.array(rows, dtype=float).reshape(-1, 7)  # id type diameter density x y z
    return a


def demsim_state(demsim, lattice, out):
    cmd = [demsim, "run", os.path.join(TOP, "scenarios", f"bench-{lattice}.cfg"), "--particles", str(N), "--steps", "1",
           "--out", out, "--quiet"]
    subprocess.run(cmd, check=True)
    with h5py.File(os.path.join(out, "particles.h5"), "r") as f:
        g = f[sorted(f.keys())[-1]]
        order = np.argsort(g["ParticleIDs"][:])
        return g["ParticleIDs"][:][order], g["Coordinates"][:][order], g["Radius"][:][order]


def deck_value(deck, pattern):
    m = re.search(pattern, deck, re.M)
    return float(m.group(1)) if m else None


def check_lattice(demsim, out, lattice):
    a = atoms(os.path.join(out, "decks", lattice, "data.bench"))
    ids, pos, radius = demsim_state(demsim, lattice, os.path.join(out, f"demsim-{lattice}"))
    check(a.shape[0] == N and len(ids) == N, f"{lattice}: {a.shape[0]} atoms, {len(ids)} particles, expected {N}")
    if a.shape[0] != len(ids):
        return
    check(np.array_equal(a[:, 0], ids + 1), f"{lattice}: atom ids are not demsim's ids + 1")
    err = np.abs(a[:, 4:7] - pos).max()
    check(err < 1e-12, f"{lattice}: positions differ from demsim's by up to {err:g} m")
    derr = np.abs(a[:, 2] - 2 * radius).max()
    check(derr < 1e-15, f"{lattice}: diameters differ from demsim's by up to {derr:g} m")
    print(f"{lattice}: {N} atoms, largest position difference {err:g} m, diameter {a[0, 2]:g} m")

    deck = open(os.path.join(out, "decks", lattice, "in.bench")).read()
    expect = {r"youngsModulus peratomtype (\S+)": 5e6, r"poissonsRatio peratomtype (\S+)": 0.45,
              r"coefficientRestitution peratomtypepair 1 (\S+)": 0.3, r"coefficientFriction peratomtypepair 1 (\S+)": 0.5,
              r"^timestep (\S+)": 1e-8, r"^run (\S+)": 2000, r"^fix grav all gravity (\S+)": 9.81,
              r"^neighbor (\S+) bin": 0.005 * a[0, 2]}
    for pat, want in expect.items():
        got = deck_value(deck, pat)
        check(got is not None and abs(got - want) <= 1e-12 * abs(want), f"{lattice}: deck '{pat}' = {got}, expected {want}")
    check(np.all(a[:, 3] == 2500.0), f"{lattice}: atom densities are not 2500")
    walls = re.findall(r"primitive type 1 ([xyz])plane (\S+)", deck)
    check(sorted(walls) == sorted((ax, p) for ax in "xyz" for p in ("0.0", "1.0")), f"{lattice}: walls {walls}")


def main():
    a = checking.args(__doc__)
    res = subprocess.run([sys.executable, BENCH, "--demsim", a.demsim, "--particles", str(N),
                          "--deck-only", os.path.join(a.out, "decks")], capture_output=True, text=True)
    check(res.returncode == 0, f"--deck-only: exit {res.returncode}: {res.stderr}")
    if res.returncode == 0:
        for lattice in ("apart", "contact"):
            check_lattice(a.demsim, a.out, lattice)

    res = subprocess.run([sys.executable, BENCH, "--demsim", a.demsim, "--particles", str(N), "--liggghts",
                          "no-such-liggghts-binary"], capture_output=True, text=True)
    check(res.returncode == 2 and "apt-get install liggghts" in res.stderr,
          f"missing LIGGGHTS: exit {res.returncode}, expected 2 and the install command: {res.stderr}")
    res = subprocess.run([sys.executable, BENCH, "--demsim", a.demsim, "--lattices", "loose"],
                         capture_output=True, text=True)
    check(res.returncode == 2 and "loose" in res.stderr, f"unknown lattice: exit {res.returncode}: {res.stderr}")
    return checking.tally("check_bench_liggghts.py", check.failures, "OK")


if __name__ == "__main__":
    sys.exit(main())
