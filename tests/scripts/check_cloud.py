#!/usr/bin/python3
"""Test (CTest platform_cloud, SMPI build): a cloud description (TOML) becomes a platform.

platforms/make_platforms.py --cloud: platforms/example-cloud.toml (three nodes: an i7-6700 with a
4-core container, an i7-4790 with a 2-core one and its memory given, a P100 node) gives the hosts,
cores, properties and links of make_platforms.py's facts, and a 3-rank SMPI run on it ends; a node
given by its figures (no known model) gets them; platforms/openstack.toml gives openstack.xml byte
for byte (its source); bad descriptions exit with 2 naming the file and the line or key path.

    check_cloud.py --demsim build/smpi/demsim --out DIR
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
sys.path.insert(0, os.path.join(TOP, "platforms"))
import make_platforms  # noqa: E402

GOOD_NODE = '[[nodes]]\nname = "a"\ncpu = "i7-6700"\ncontainers = [{ name = "a-1", cores = 1 }]\n'
# (description, what the message must hold)
BAD = [
    ('name = "x"\n[[nodes]\n', "bad-0.toml:2:"),
    (GOOD_NODE.replace('"i7-6700"', '"i9"'),
     'nodes[0].cpu = \'i9\': unknown CPU model; known: i7-6700, i7-4790, gpu-host; or give clock_ghz, '
     'mem_bw_gbps, simd_lanes'),
    (GOOD_NODE.replace('"i7-6700"', '"i9"\nclock_ghz = 3.0'), "(missing: mem_bw_gbps, simd_lanes;"),
    (GOOD_NODE.replace('"i7-6700"', '"i9"'), "demsim probe"),
    (GOOD_NODE.replace("cores = 1", "cores = 5"), "nodes[0].containers[0].cores = 5: the node's CPU has 4 cores"),
    (GOOD_NODE.replace("cores = 1", "cores = 1, gpu = true"), "nodes[0].containers[0].gpu = true: node a has no gpu"),
    (GOOD_NODE.replace('cpu = "i7-6700"', 'cpu = "i7-6700"\ngpu = "V100"'), "nodes[0].gpu = 'V100': unknown GPU; known: P100"),
    (GOOD_NODE + GOOD_NODE.replace('name = "a"', 'name = "b"'), "nodes[1].containers[0].name: host or router 'a-1' is already"),
    (GOOD_NODE + '[network]\nnic_bandwidth = "fast"\n', "network.nic_bandwidth = 'fast': not a quantity with a unit"),
    (GOOD_NODE + '[network]\nnic_latency = 25\n', "network.nic_latency = 25: not a quantity with a unit"),
    (GOOD_NODE.replace("containers", "cores_per_node = 4\ncontainers"), "nodes[0].cores_per_node: unknown key"),
    ('name = "x"\n', "nodes: at least one node"),
    (GOOD_NODE + '[wan]\nlatency = "10ms"\n', "wan: needs nodes on two sites or more"),
]


def run_mp(*args):
    return subprocess.run([sys.executable, MP] + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def check_example(a, check):
    """The example's platform: its facts from make_platforms.py, and a run on it."""
    xml = os.path.join(a.out, "example.xml")
    p = run_mp("--cloud", os.path.join(TOP, "platforms", "example-cloud.toml"), "--out", xml)
    check(p.returncode == 0, f"--cloud example-cloud.toml failed: {p.stdout}")
    if p.returncode:
        return
    root = ET.parse(xml).getroot()
    hosts = {h.get("id"): h for h in root.iter("host")}
    props = {k: {q.get("id"): q.get("value") for q in h.iter("prop")} for k, h in hosts.items()}
    links = {l.get("id"): l for l in root.iter("link")}
    check(sorted(hosts) == ["a-4", "a-membus", "b-2", "b-membus", "g-gpu", "g-membus"], f"hosts {sorted(hosts)}")
    t6, t4 = make_platforms.NODE_TYPES["i7-6700"], make_platforms.NODE_TYPES["i7-4790"]
    check(hosts["a-4"].get("core") == "4" and hosts["b-2"].get("core") == "2", "cores")
    check(abs(float(hosts["a-4"].get("speed").rstrip("f")) / t6["flops"] - 1) < 1e-5, "a-4 speed")
    check(abs(float(hosts["b-2"].get("speed").rstrip("f")) / t4["flops"] - 1) < 1e-5, "b-2 speed")
    check(float(hosts["a-membus"].get("speed").rstrip("f")) == float(f"{t6['bw']:.6g}"), "a-membus: the i7-6700's memory")
    check(float(hosts["b-membus"].get("speed").rstrip("f")) == 25.6e9, "b-membus: the memory given")
    check(props["g-gpu"]["device"] == "gpu" and float(props["g-gpu"]["gpu_flops"]) == float(f"{make_platforms.GPU['flops']:.6g}"),
          "g-gpu: the P100")
    check(props["b-2"]["membus"] == "b-membus" and props["b-2"]["container"] == "b-2", "b-2 properties")
    check(links["a-nic"].get("bandwidth") == "125MBps" and links["a-4-veth"].get("latency") == make_platforms.NET["veth_lat"],
          "links")
    out = os.path.join(a.out, "run")
    p = subprocess.run([a.demsim, "run", os.path.join(TOP, "scenarios", "case1.cfg"), "--ranks", "3",
                        "--set", f'platform.file="{xml}"', "--set", "platform.hosts=a-4,b-2,g-gpu",
                        "--particles", "3000", "--steps", "5", "--quiet", "--out", out],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    check(p.returncode == 0, f"SMPI run on the example's platform failed: {p.stdout[-2000:]}")
    if p.returncode == 0:
        s = json.load(open(os.path.join(out, "summary.json")))
        check([r["host"] for r in s["per_rank"]] == ["a-4", "b-2", "g-gpu"] and s["sim_time_s"] > 0, "the run's ranks")


def check_explicit(a, check):
    """A CPU given by its figures."""
    path = os.path.join(a.out, "explicit.toml")
    with open(path, "w") as f:
        f.write('[[nodes]]\nname = "z"\ncpu = "Ryzen 7 5800X"\nclock_ghz = 3.8\nmem_bw_gbps = 51.2\nsimd_lanes = 4\n'
                'cores = 8\nllc_mib = 32\ndivider_cycles = 2.5\ncontainers = [{ name = "z-8", cores = 8 }]\n')
    xml = os.path.join(a.out, "explicit.xml")
    p = run_mp("--cloud", path, "--out", xml)
    check(p.returncode == 0, f"explicit figures refused: {p.stdout}")
    if p.returncode == 0:
        h = {x.get("id"): x for x in ET.parse(xml).getroot().iter("host")}
        pr = {q.get("id"): q.get("value") for q in h["z-8"].iter("prop")}
        check(abs(float(h["z-8"].get("speed").rstrip("f")) / (3.8e9 * make_platforms.KERNEL_FLOPS_PER_CYCLE) - 1) < 1e-5, "z-8 speed")
        check(abs(float(pr["llc_bytes"]) / (32 * 2**20) - 1) < 1e-5 and abs(float(pr["divider_rate"]) / (3.8e9 / 2.5) - 1) < 1e-5,
              f"z-8 llc {pr['llc_bytes']}, divider {pr['divider_rate']}")
        check(float(pr["core_bw"]) == make_platforms.CORE_BW_FRACTION * 51.2e9 and pr["simd_lanes"] == "4", "z-8 core_bw, lanes")


def check_bad(a, check):
    for i, (text, expect) in enumerate(BAD):
        path = os.path.join(a.out, f"bad-{i}.toml")
        with open(path, "w") as f:
            f.write(text)
        p = run_mp("--cloud", path, "--out", os.path.join(a.out, "bad.xml"))
        check(p.returncode == 2 and f"{path}:" in p.stdout and expect in p.stdout,
              f"bad-{i}: exit {p.returncode}, expected 2 and {expect!r}: {p.stdout.strip()}")


def main():
    a = checking.args(__doc__)
    check = checking.Checks()

    xml = os.path.join(a.out, "openstack.xml")
    p = run_mp("--cloud", os.path.join(TOP, "platforms", "openstack.toml"), "--out", xml)
    check(p.returncode == 0 and open(xml).read() == open(os.path.join(TOP, "platforms", "openstack.xml")).read(),
          f"openstack.toml does not give openstack.xml: {p.stdout}")
    check_example(a, check)
    check_explicit(a, check)
    check_bad(a, check)
    return checking.verdict("check_cloud", check.failures)


if __name__ == "__main__":
    sys.exit(main())
