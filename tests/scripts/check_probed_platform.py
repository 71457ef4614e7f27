#!/usr/bin/python3
"""Test (CTest validation_probed_platform, SMPI build): a platform written from a probe file runs.

platforms/make_platforms.py --probe validation/data/probe-example.json --hostmap MAP writes a
platform whose figures are the probe's (checked against the file: bus (the higher of the triad's
and kick-drift's streams on all cores), per-core bandwidth (the
lower of the triad and kick-drift's streams, where the file has them),
gathers, core rate = the probe's contact-force kernel rate on every core at once where it has one (node-a),
else clock x KERNEL_FLOPS_PER_CYCLE (node-b), Zoltan's rate (partition_rate) where the probe timed it
(node-a) and none where not (node-b), network from the ping-pongs, with SMPI's factors 1 (lat_factor
0:1;65536:3, smpi/bw-factor 0:1: the links hold measured MPI times, so SMPI's demsim-pingpong
between c0 and c1 gives back the measured 52 us one way for 8 B, and 3 x 52 us + 8 MiB at the
measured 117 MB/s, within 1 %), on which every
container of the map is a host with its core count (a neighbour given a rank container's cores
marked as sharing them); a 2-rank scenario with a memory stress on a
neighbour of the map then runs under SMPI, the stressed rank's load above the other's. With
--container-link 125e6,8e-6 the route between two containers of a node (c1, s1) is 125 MB/s and 8 us (as
sim/routes.c reads it, when built). Bad inputs (a host the probe does not know, a file that is not
a probe, a malformed --container-link) fail with a message. With --cpu-share c1=0.5, c1 alone has
cpu_share 0.5 and its rank's few ms of work fit in the quota's first window (Linux's 0.1 s period);
with c1=0.5,0.0005 its load under SMPI is twice that without it; a bad --cpu-share exits 2.

    check_probed_platform.py --demsim build/smpi/demsim --out DIR
"""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import checking

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
MP = os.path.join(TOP, "platforms", "make_platforms.py")
EXAMPLE = os.path.join(TOP, "validation", "data", "probe-example.json")
sys.path.insert(0, os.path.join(TOP, "platforms"))
import make_platforms  # noqa: E402

MAP = """# c0 on node-a (one core); c1 on node-b (two cores) beside a stressed neighbour s1
hostmap = (
  { container = "c0"; host = "node-a"; cores = "0"; },
  { container = "c1"; host = "node-b"; cores = "0-1"; },   // two cores
  { container = "s1"; host = "node-b"; cores = "1-2"; }     // shares c1's core 1
);
"""

SCENARIO = """name = "probed";
problem = {{ box = 1.0; fill = 0.5; particles = 8000; diameter_ratio = 1.001; }};
material = {{ youngs_modulus = 5.0e6; poisson = 0.45; restitution = 0.3; friction = 0.5; density = 2500.0; }};
time = {{ dt = 1.0e-8; steps = 20; }};
run = {{ ranks = 2; policy = "NOW"; repartition_every = 100; }};
platform = {{ file = "{platform}"; hosts = ["c0", "c1"]; }};
stress = ( {{ host = "s1"; kind = "vm"; workers = 2; bytes = 1.0e9; }} );
output = {{ dir = "{out}"; metrics_every = 10; }};
"""


def main():
    a = checking.args(__doc__)
    check = checking.Checks()

    hostmap = os.path.join(a.out, "map.cfg")
    with open(hostmap, "w") as f:
        f.write(MAP)
    xml = os.path.join(a.out, "platform.xml")
    p = subprocess.run([sys.executable, MP, "--probe", EXAMPLE, "--hostmap", hostmap, "--out", xml],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    check(p.returncode == 0, f"make_platforms --probe failed: {p.stdout}")
    pr = json.load(open(EXAMPLE))
    hosts = {h.get("id"): h for h in ET.parse(xml).getroot().iter("host")}
    props = {k: {q.get("id"): q.get("value") for q in h.iter("prop")} for k, h in hosts.items()}
    links = {l.get("id"): l for l in ET.parse(xml).getroot().iter("link")}
    for n in pr["nodes"]:
        name = n["name"]
        bus = max(n["triad_allcore_Bps"], n.get("streams_allcore_Bps") or 0)  # node-b: the streams' (above its triad)
        check(float(hosts[f"{name}-membus"].get("speed").rstrip("f")) == bus, f"{name}-membus speed")
        clock = n["flops_peak_1core"] / (4 * n["vector_lanes"])
        speed = float(hosts[name].get("speed").rstrip("f"))
        k = n.get("contact_kernel_1core")
        core = min(n["triad_1core_Bps"], n.get("streams_1core_Bps") or n["triad_1core_Bps"], bus)
        if k:  # the probe's contact-force kernel on every core at once: its median less memory, launch and divider time
            rate = (k["flops"] - k["divsqrt"]) / (k["all_cores_median_s"] - k["traffic_B"] / core - 5e-6
                                                  - k["divsqrt"] / n["divider_1core"])
            check(abs(speed / rate - 1) < 1e-5, f"{name} speed {speed}, expected the measured kernel rate {rate}")
            check("MEASURED by this probe" in open(xml).read(), "the measured kernel rate not documented")
        else:  # a probe without it: clock x the platforms' constant
            check(abs(speed / (clock * make_platforms.KERNEL_FLOPS_PER_CYCLE) - 1) < 1e-5, f"{name} speed {speed}")
        check(hosts[name].get("core") == str(n["cores"]), f"{name} cores")
        check(all(f"{name}-{i}" in hosts for i in range(n["cores"])), f"{name}-i single-core hosts")
        # the lower of the triad's and kick-drift's streams' (node-b's file has the streams below its triad;
        # node-a's has none, as a probe file of before the figure)
        check(float(props[name]["core_bw"]) == core, f"{name} core_bw {props[name]['core_bw']}, expected {core}")
        check(float(props[name]["core_gather_bw"]) == n["gather_1core_Bps"], f"{name} core_gather_bw")
        if n.get("divider_1core"):
            check(abs(float(props[name]["divider_rate"]) / n["divider_1core"] - 1) < 1e-5, f"{name} divider_rate")
        # Zoltan's rate where the probe timed it (node-a), none where it did not (node-b: sim/cost.c's counts)
        part = props[name].get("partition_rate")
        if n.get("partition_rate"):
            check(part is not None and abs(float(part) / n["partition_rate"] - 1) < 1e-5,
                  f"{name} partition_rate {part}")
        else:
            check(part is None, f"{name}: partition_rate {part} though the probe has none")
    check(hosts["c0"].get("core") == "1" and props["c0"]["node"] == "node-a", "c0: 1 core on node-a")
    check(props["c0"].get("partition_rate") == props["node-a"].get("partition_rate"), "c0: node-a's Zoltan rate")
    check("partition_rate" not in props["c1"], "c1 on node-b: no Zoltan rate")
    check(hosts["c1"].get("core") == "2" and props["c1"]["node"] == "node-b", "c1: 2 cores on node-b")
    check(props["s1"]["membus"] == "node-b-membus", "s1 shares node-b's bus")
    check(props["s1"].get("shares_cores_with") == "c1", "s1 shares c1's cores")
    check("shares_cores_with" not in props["c0"], "c0 shares no core")
    # network: intra pair 0.6 us one way = 2 veth links; inter 51 us = 2 veth + 2 NIC
    check(abs(float(links["c0-veth"].get("latency").rstrip("s")) - 3e-7) < 1e-12, "veth latency")
    check(abs(float(links["node-a-nic"].get("latency").rstrip("s")) - (5.2e-5 - 6e-7) / 2) < 1e-9, "NIC latency")
    check(float(links["node-a-nic"].get("bandwidth").rstrip("Bps")) == 1.17e8, "NIC bandwidth")
    # measured MPI times in the links: SMPI's factors 1 (3 crossings from the eager limit)
    root = ET.parse(xml).getroot()
    zone_props = {q.get("id"): q.get("value") for q in root.find("zone").findall("prop")}
    config = {q.get("id"): q.get("value") for c in root.findall("config") for q in c.findall("prop")}
    check(zone_props.get("lat_factor") == "0:1;65536:3", f"root zone lat_factor {zone_props.get('lat_factor')}")
    check(config.get("smpi/bw-factor") == "0:1", f"smpi/bw-factor {config.get('smpi/bw-factor')}")

    cfg = os.path.join(a.out, "probed.cfg")
    with open(cfg, "w") as f:
        f.write(SCENARIO.format(platform=xml, out=os.path.join(a.out, "run")))
    p = subprocess.run([a.demsim, "run", cfg, "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    check(p.returncode == 0, f"SMPI run on the probed platform failed: {p.stdout[-2000:]}")
    if p.returncode == 0:
        s = json.load(open(os.path.join(a.out, "run", "summary.json")))
        check([r["host"] for r in s["per_rank"]] == ["c0", "c1"], "ranks on c0, c1")
        check(s["sim_time_s"] > 0, "simulated time")
        check_measured_route(a, cfg, check)

    bad = os.path.join(a.out, "bad-map.cfg")
    with open(bad, "w") as f:
        f.write('hostmap = ( { container = "c0"; host = "elsewhere"; cores = "0"; } );\n')
    p = subprocess.run([sys.executable, MP, "--probe", EXAMPLE, "--hostmap", bad, "--out", xml + ".bad"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    check(p.returncode != 0 and "elsewhere" in p.stdout, f"unknown host not reported: {p.stdout}")
    p = subprocess.run([sys.executable, MP, "--probe", hostmap, "--out", xml + ".bad"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    check(p.returncode != 0, "a file that is not a probe accepted")
    check_container_link(a, hostmap, check)
    check_cpu_share(a, hostmap, check)
    return checking.verdict("check_probed_platform", check.failures)


def check_measured_route(a, cfg, check):
    """SMPI gives back the probe's own figures between c0 (node-a) and c1 (node-b): 8 B one way in
    the measured 52 us (0.6 us of veths + 51.4 us of NICs), 8 MiB at the measured 117 MB/s."""
    tool = os.path.join(os.path.dirname(os.path.abspath(a.demsim)), "demsim-pingpong")
    out = os.path.join(a.out, "pingpong.json")
    p = subprocess.run([a.demsim, "exec", cfg, "--ranks", "2", "--", tool, "--out", out, "--rounds", "1"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    check(p.returncode == 0 and os.path.isfile(out), f"demsim exec of demsim-pingpong: {p.stdout[-1500:]}")
    if p.returncode or not os.path.isfile(out):
        return
    t = {(r["pattern"], r["bytes"]): r["median_s"] for r in json.load(open(out))["rows"]}
    small, large = t[("pingpong", 8)], t[("pingpong", 8 << 20)]
    check(abs(small / 5.2e-5 - 1) < 0.01, f"8 B one way {small * 1e6:.4g} us, expected the measured 52 us")
    want = 3 * 5.2e-5 + (8 << 20) / 1.17e8
    check(abs(large / want - 1) < 0.01, f"8 MiB one way {large * 1e3:.4g} ms, expected {want * 1e3:.4g} ms "
          "(3 x 52 us + 8 MiB at the measured 117 MB/s)")
    print(f"measured route: 8 B one way {small * 1e6:.4g} us, 8 MiB {large * 1e3:.4g} ms")


def check_container_link(a, hostmap, check):
    xml = os.path.join(a.out, "linked.xml")
    p = subprocess.run([sys.executable, MP, "--probe", EXAMPLE, "--hostmap", hostmap, "--container-link", "125e6,8e-6",
                        "--out", xml], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    check(p.returncode == 0, f"--container-link: {p.stdout}")
    routes = os.path.join(os.path.dirname(os.path.abspath(a.demsim)), "demsim-routes")
    if p.returncode == 0 and os.access(routes, os.X_OK):
        r = subprocess.run([routes, xml, "c1", "s1"], capture_output=True, text=True)  # both on node-b
        w = r.stdout.split()
        check(len(w) >= 4 and abs(float(w[2]) - 125e6) < 1 and abs(float(w[3]) - 8e-6) < 1e-12,
              f"--container-link route c1-s1: {r.stdout}{r.stderr}")
    p = subprocess.run([sys.executable, MP, "--probe", EXAMPLE, "--container-link", "fast", "--out", xml + ".bad"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    check(p.returncode == 2 and "BANDWIDTH,LATENCY" in p.stdout, f"--container-link fast: {p.stdout}")


def check_cpu_share(a, hostmap, check):
    """--cpu-share c1=0.5: c1 alone carries cpu_share 0.5 (no cpu_period: Linux's 0.1 s), and under
    SMPI (no stress) its rank's few ms of work fit in the quota's first 50 ms: its loads are those
    with its whole core. c1=0.5,0.0005 adds cpu_period 0.0005: over many periods c1's load is twice
    that with all its cores' time, c0's the same (within 10 %). An unknown container, a share out
    of (0, 1] or a bad period exits 2."""
    xml = os.path.join(a.out, "half.xml")
    p = subprocess.run([sys.executable, MP, "--probe", EXAMPLE, "--hostmap", hostmap, "--cpu-share", "c1=0.5",
                        "--out", xml], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    check(p.returncode == 0, f"--cpu-share c1=0.5: {p.stdout}")
    if p.returncode:
        return
    props = {h.get("id"): {q.get("id"): q.get("value") for q in h.iter("prop")} for h in ET.parse(xml).iter("host")}
    check(props["c1"].get("cpu_share") == "0.5" and "cpu_share" not in props["c0"], "cpu_share on c1 only")
    check("cpu_period" not in props["c1"], "no cpu_period without one given (Linux's default applies)")
    fine = xml + ".period"
    p = subprocess.run([sys.executable, MP, "--probe", EXAMPLE, "--hostmap", hostmap, "--cpu-share", "c1=0.5,0.0005",
                        "--out", fine], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    per = {h.get("id"): {q.get("id"): q.get("value") for q in h.iter("prop")}
           for h in ET.parse(fine).iter("host")} if p.returncode == 0 else {}
    check(per.get("c1", {}).get("cpu_period") == "0.0005" and per["c1"].get("cpu_share") == "0.5",
          f"--cpu-share c1=0.5,0.0005: cpu_period on c1: {p.stdout}")
    loads = {}
    for tag, plat in (("whole", os.path.join(a.out, "platform.xml")), ("half", xml), ("fine", fine)):
        cfg = os.path.join(a.out, f"{tag}.cfg")
        with open(cfg, "w") as f:
            f.write(SCENARIO.format(platform=plat, out=os.path.join(a.out, tag)).split("stress =")[0]
                    + f'output = {{ dir = "{os.path.join(a.out, tag)}"; metrics_every = 10; }};\n')
        p = subprocess.run([a.demsim, "run", cfg, "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        check(p.returncode == 0, f"SMPI run ({tag} c1) failed: {p.stdout[-2000:]}")
        if p.returncode == 0:
            loads[tag] = [r["load_s"] for r in json.load(open(os.path.join(a.out, tag, "summary.json")))["per_rank"]]
    if len(loads) == 3:
        whole, half, fine = loads["whole"], loads["half"], loads["fine"]
        check(whole[1] < 0.025 and half == whole,
              f"c1's work ({whole[1]:.3g} s) fits in the first 50 ms window of Linux's 0.1 s period: its loads as "
              f"with its whole core, {half} against {whole}")
        check(abs(fine[1] / whole[1] / 2 - 1) < 0.1 and abs(fine[0] / whole[0] - 1) < 0.1,
              f"loads with c1 at half its cores' time per 0.5 ms {fine}, with all of it {whole}: c1's not twice, "
              "or c0's changed")
    for bad in ("c9=0.5", "c1=0", "c1=1.5", "c1", "c1=0.5,0", "c1=0.5,x"):
        p = subprocess.run([sys.executable, MP, "--probe", EXAMPLE, "--hostmap", hostmap, "--cpu-share", bad,
                            "--out", xml + ".bad"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        check(p.returncode == 2 and "--cpu-share" in p.stdout, f"--cpu-share {bad}: exit {p.returncode}: {p.stdout}")


if __name__ == "__main__":
    sys.exit(main())
