#!/usr/bin/python3
"""Emulator check (native build, `demsim run --emulate`): routes, refusals, the cloud end to end.

  tests/scripts/check_emulate.py --demsim build/native/demsim --out DIR --part routes
  tests/scripts/check_emulate.py --demsim build/native/demsim --out DIR --part cloud

routes (no root needed): demsim-routes on platforms/openstack.xml against hand-computed figures
(two containers on two nodes: veth 2.5 GB/s 10 us + NIC 125 MB/s 25 us + NIC + veth, so 125 MB/s
and 70 us; two on one node: veth + veth, 2.5 GB/s and 20 us); a container set that needs more
cores than this machine has exits with 2 naming both counts; without root (run as nobody, when
this check runs as root) it exits with 2 saying so; the SMPI build, when there, refuses
--emulate with 2 naming the native build.

cloud (root and `ip netns`; else exit 77): two 1-core containers on two nodes of openstack.xml
running scenarios/bench-contact.cfg with 2 ranks. A long run is started, the shaping read back
from tc in each container's namespace (rate per destination, the delay where the kernel has
netem) and its TCP congestion control (CUBIC, whatever the host runs), the ranks seen in their cpuset cgroups, then the launcher is sent SIGINT: it must end
and leave no namespace, link, cgroup or process with its prefix. The same after SIGTERM once the
reader of its output is gone (`demsim exec ... -- sleep`, its stdout's pipe closed). Then a short run (20,000
particles, 20 steps) must end well, each rank on its own core, report each container's CPU time
(a positive number, from its cpuacct cgroup) and each wire's, and leave nothing either.
Then `demsim exec ... --emulate -- demsim-pingpong`: an 8 MiB message one way at 80-102 % of the
route's shaped 125 MB/s (the shaping holds, and TCP fills it), and nothing left behind. Then
`validation/study/compare_real.py scenarios/emulated/network-pair.cfg --emulate` at a tiny size
(20,000 particles, 10 steps, NOW, contact, two SMPI runs): its compare_real.json has the 42 message rows and the
DEM's, the ghost bytes alike emulated and simulated (the same decomposition), every time positive,
the MPI stack measured on the instant platform (0 to 1 ms) and in platform-stack.xml;
and with `--hostmap scenarios/emulated/hostmap-pair.cfg --cpu-share c1=0.5,0.01` (this machine probed,
c1 at half a core per 10 ms, the core rate sampled before the round): computing and total time
compared, the sample and c1's cpu_share and cpu_period in the platform, the quota's efficiency
sampled on c1's core (in the platform and the report, its cgroup removed), the contact search sampled
against the force kernel (the platform's search_rate and search_slot_rate), the emulated run's report of
c1's throttled periods (some of them, none for c0), and the emulator's dry run writing that quota
(10000 and 5000 us) for c1's cgroup.
routes also runs `demsim exec` in the SMPI build (when there) on the same two containers: the
simulated ping-pong's 8 MiB - 4 MiB difference gives the route's 125 MB/s times SMPI's
bandwidth factor for large messages (within 90-100 %), and a message takes longer than the last
smaller one from 8 KiB up; exec without `-- PROGRAM` exits 2; on openstack.xml with a 20 us MPI
stack and a rendezvous stack of 150 us + 20 us per MiB (validation/study/mpistack.py) 8 B, 1 KiB,
64 KiB and 8 MiB one way are the closed form stack + 70 us + size / (125 MB/s x the bandwidth
factor) below 64 KiB, 3 x 70 us + the rendezvous stack + the size term from there, within 1 %.
Where the kernel has no netem, cloud also reads back demsim-wire: the NFQUEUE rule of each
namespace, the wire process with the route's 70 us and 125 MB/s in the cloud's wire cgroup, on
its container's core (and, where iptables has u32, the pure acknowledgements' rule before it,
their queue held by the other container's wire), an
8 B message one way no faster than the 70 us it holds, the htb classes behind it with a burst of
about 1 MB (so that they never hold what the wire releases), and no wire process left behind.
Exits 1 naming what did not hold."""
import glob
import json
import os
import re
import signal
import subprocess
import sys
import time

import checking

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
PLATFORM = os.path.join(SOURCE, "platforms", "openstack.xml")
SCENARIO = os.path.join(SOURCE, "scenarios", "bench-contact.cfg")
HOSTS = ["n1-cn6700-1", "n2-cn6700-1"]


def emulate_cmd(demsim, out, hosts, steps, particles=20000):
    return [demsim, "run", SCENARIO, "--emulate", "--quiet", "--ranks", str(len(hosts)), "--particles",
            str(particles), "--steps", str(steps), "--out", out, "--set", "platform.file=" + PLATFORM,
            "--set", "platform.hosts=" + ",".join(hosts)]


def check_routes(a, failures):
    tool = os.path.join(os.path.dirname(os.path.abspath(a.demsim)), "demsim-routes")
    p = subprocess.run([tool, PLATFORM, "n1-cn6700-1", "n2-cn6700-1", "n1-cn6700-2a"], capture_output=True,
                       text=True)
    got = {tuple(w[:2]): (float(w[2]), float(w[3])) for w in (l.split() for l in p.stdout.splitlines()) if len(w) == 4}
    across, within = (125e6, 25e-6 * 2 + 10e-6 * 2), (2.5e9, 10e-6 * 2)
    want = {("n1-cn6700-1", "n2-cn6700-1"): across, ("n2-cn6700-1", "n1-cn6700-1"): across,
            ("n2-cn6700-1", "n1-cn6700-2a"): across, ("n1-cn6700-2a", "n2-cn6700-1"): across,
            ("n1-cn6700-1", "n1-cn6700-2a"): within, ("n1-cn6700-2a", "n1-cn6700-1"): within}
    if p.returncode or got.keys() != want.keys():
        failures.append(f"demsim-routes: expected the 6 ordered pairs, got rc {p.returncode}:\n{p.stdout}{p.stderr}")
    for pair, (bw, lat) in want.items():
        g = got.get(pair)
        if g and (abs(g[0] - bw) > 1e-6 * bw or abs(g[1] - lat) > 1e-12):
            failures.append(f"demsim-routes {pair}: {g}, expected bandwidth {bw} B/s and latency {lat} s")
    p = subprocess.run([tool, "--cores", PLATFORM, "n1-cn6700-4", "n1-cn6700-1"], capture_output=True, text=True)
    if p.stdout.split() != ["n1-cn6700-4", "4", "1", "0.1", "n1-cn6700-1", "1", "1", "0.1"]:
        failures.append(f"demsim-routes --cores: expected 4 and 1 cores, all their time, Linux's 0.1 s period, "
                        f"got:\n{p.stdout}{p.stderr}")
    p = subprocess.run([tool, PLATFORM, "n1-cn6700-1", "nowhere"], capture_output=True, text=True)
    if p.returncode != 2 or "nowhere" not in p.stderr:
        failures.append(f"demsim-routes with a host not in the platform: rc {p.returncode}, expected 2:\n{p.stderr}")


def check_refusals(a, failures):
    online = os.cpu_count()
    big = ["n1-cn6700-4", "n2-cn6700-4", "n3-cn6700-4"]  # 12 cores
    p = subprocess.run(emulate_cmd(a.demsim, os.path.join(a.out, "big"), big, 2), capture_output=True, text=True)
    if p.returncode != 2 or "need 12 cores" not in p.stderr or f"has {online}" not in p.stderr:
        failures.append(f"3 4-core containers: rc {p.returncode}, expected 2 and 'need 12 cores' and 'has {online}':"
                        f"\n{p.stderr}")
    if os.geteuid() == 0 and subprocess.run(["which", "setpriv"], capture_output=True).returncode == 0:
        nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        p = subprocess.run(nobody + emulate_cmd(a.demsim, "/tmp", HOSTS, 2), capture_output=True, text=True)
        if p.returncode != 2 or "needs root" not in p.stderr:
            failures.append(f"--emulate as nobody: rc {p.returncode}, expected 2 saying it needs root:\n{p.stderr}")
    smpi = os.path.join(SOURCE, "build", "smpi", "demsim")
    if os.access(smpi, os.X_OK):
        p = subprocess.run(emulate_cmd(smpi, os.path.join(a.out, "smpi"), HOSTS, 2), capture_output=True, text=True)
        if p.returncode != 2 or "native build" not in p.stderr:
            failures.append(f"SMPI build with --emulate: rc {p.returncode}, expected 2 naming the native build:"
                            f"\n{p.stderr}")


def exec_pingpong(demsim, out, emulate, platform=PLATFORM):
    """`demsim exec` of demsim-pingpong on the two containers: (rc, output, rows by (pattern, bytes))."""
    tool = os.path.join(os.path.dirname(os.path.abspath(demsim)), "demsim-pingpong")
    os.makedirs(out, exist_ok=True)
    result = os.path.join(out, "pingpong.json")
    cmd = [demsim, "exec", SCENARIO] + (["--emulate"] if emulate else []) + [
        "--ranks", "2", "--out", out, "--set", "platform.file=" + platform, "--set", "platform.hosts=" + ",".join(HOSTS),
        "--", tool, "--out", result, "--rounds", "1"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    text = p.communicate(timeout=300)[0]
    rows = {}
    if p.returncode == 0 and os.path.isfile(result):
        with open(result) as f:
            rows = {(r["pattern"], r["bytes"]): r["median_s"] for r in json.load(f)["rows"]}
    return p.returncode, text, rows, p.pid


def slope_bandwidth(rows):
    return (8 << 20) / 2 / (rows[("pingpong", 8 << 20)] - rows[("pingpong", 4 << 20)])


def check_exec_smpi(a, failures):
    smpi = os.path.join(SOURCE, "build", "smpi", "demsim")
    if not os.access(smpi, os.X_OK):
        return
    rc, text, rows, _ = exec_pingpong(smpi, os.path.join(a.out, "exec-smpi"), False)
    if rc or len(rows) != 42:
        failures.append(f"demsim exec (SMPI): rc {rc}, {len(rows)} rows, expected 0 and 42:\n{text[-2000:]}")
        return
    bw = slope_bandwidth(rows)
    if not 0.90 * 125e6 <= bw <= 125e6:
        failures.append(f"demsim exec (SMPI): 4-8 MiB bandwidth {bw:.4g} B/s, expected 90-100 % of 125 MB/s")
    sizes = sorted(b for p, b in rows if p == "pingpong" and b >= 8192)
    if any(rows[("pingpong", y)] <= rows[("pingpong", x)] for x, y in zip(sizes, sizes[1:])):
        failures.append("demsim exec (SMPI): ping-pong times do not rise with the size from 8 KiB")
    p = subprocess.run([smpi, "exec", SCENARIO, "--ranks", "2"], capture_output=True, text=True)
    if p.returncode != 2 or "PROGRAM" not in p.stderr:
        failures.append(f"demsim exec without a program: rc {p.returncode}, expected 2 naming PROGRAM:\n{p.stderr}")
    print(f"exec (SMPI): 4-8 MiB bandwidth {bw / 1e6:.4g} MB/s; 8 B one way {rows[('pingpong', 8)] * 1e6:.4g} us")
    check_stack_smpi(a, smpi, failures)


def check_stack_smpi(a, smpi, failures):
    """mpistack.with_stack's options reach SMPI (smpi/os, smpi/or, smpi/bw-factor, and the root zone's
    lat_factor and stack_time through sim/netfactor.cpp): a one-way message is then, in closed form,
    the stack + the route's 70 us + size / (125 MB/s x the bandwidth factor) below 64 KiB, and from
    64 KiB (rendezvous; SMPI's send is no longer detached and charges no overheads) 3 x 70 us + the
    rendezvous band's stack + the size term."""
    sys.path.insert(0, os.path.join(SOURCE, "validation", "study"))
    import mpistack
    rdv_base, rdv_per = 150e-6, 20e-6 / (1 << 20)
    bands = [(0, 20e-6, 0.0), (mpistack.EAGER_LIMIT - 1, rdv_base, rdv_per)]
    plat = mpistack.with_stack(PLATFORM, bands, os.path.join(a.out, "openstack-stack.xml"))
    rc, text, rows, _ = exec_pingpong(smpi, os.path.join(a.out, "exec-smpi-stack"), False, plat)
    if rc or len(rows) != 42:
        failures.append(f"demsim exec (SMPI, stack platform): rc {rc}, {len(rows)} rows:\n{text[-2000:]}")
        return
    g = mpistack.bandwidth_factor()
    for size in (8, 1024, 65536, 8 << 20):
        eager = size < mpistack.EAGER_LIMIT  # SMPI charges smpi/os and smpi/or to its detached (eager) sends only
        stack = 20e-6 if eager else rdv_base + rdv_per * size
        crossings = 1 if eager else mpistack.RENDEZVOUS_CROSSINGS
        want = stack + crossings * 70e-6 + size / (125e6 * g)
        got = rows[("pingpong", size)]
        if abs(got / want - 1) > 0.01:
            failures.append(f"SMPI on the stack platform: {size} B one way {got * 1e6:.5g} us, expected "
                            f"{want * 1e6:.5g} us (stack {stack * 1e6:.4g} us + {crossings} x 70 us + size at "
                            f"125 MB/s x {g:.4f})")
    print(f"exec (SMPI, 20 us stack, rendezvous 150 us + 20 us a MiB): 8 B one way {rows[('pingpong', 8)] * 1e6:.4g} us, 8 MiB "
          f"{rows[('pingpong', 8 << 20)] * 1e3:.4g} ms")


def check_exec_emulated(a, failures):
    rc, text, rows, pid = exec_pingpong(a.demsim, os.path.join(a.out, "exec"), True)
    left = leftovers(f"dsim{pid}-")
    if rc or len(rows) != 42:
        failures.append(f"demsim exec --emulate: rc {rc}, {len(rows)} rows, expected 0 and 42:\n{text[-2000:]}")
        return
    bw = (8 << 20) / rows[("pingpong", 8 << 20)]
    if not 0.80 * 125e6 <= bw <= 1.02 * 125e6:
        failures.append(f"demsim exec --emulate: 8 MiB at {bw:.4g} B/s, expected 80-102 % of the shaped 125 MB/s")
    if "no netem" in text and "latency is added by demsim-wire" in text and rows[("pingpong", 8)] < 70e-6:
        failures.append(f"demsim exec --emulate: 8 B one way in {rows[('pingpong', 8)] * 1e6:.4g} us, under the "
                        "route's 70 us that demsim-wire holds")
    if left:
        failures.append(f"demsim exec --emulate: left behind: {left}")
    print(f"exec --emulate: 8 MiB at {bw / 1e6:.4g} MB/s, 8 B one way {rows[('pingpong', 8)] * 1e6:.4g} us, "
          f"left behind: {left or 'nothing'}")


def check_compare_emulated(a, failures):
    out = os.path.join(a.out, "compare")
    cmd = ["/usr/bin/python3", os.path.join(SOURCE, "validation", "study", "compare_real.py"),
           os.path.join(SOURCE, "scenarios", "emulated", "network-pair.cfg"), "--emulate", "--out", out,
           "--repeats", "1", "--sim-repeats", "2", "--steps", "10", "--particles", "20000", "--lattices", "contact",
           "--policies", "NOW", "--native", a.demsim]
    smpi = os.path.join(SOURCE, "build", "smpi", "demsim")
    if not os.access(smpi, os.X_OK):
        print("compare_real --emulate: skipped (no SMPI build)")
        return
    p = subprocess.run(cmd + ["--smpi", smpi], capture_output=True, text=True, timeout=600)
    if p.returncode:
        failures.append(f"compare_real --emulate: rc {p.returncode}:\n{(p.stdout + p.stderr)[-3000:]}")
        return
    with open(os.path.join(out, "compare_real.json")) as f:
        rows = json.load(f)["rows"]
    messages = [r for r in rows if r["what"] == "message time (s)"]
    ghosts = [r for r in rows if r["what"] == "ghost bytes per rank per step"]
    if len(messages) != 42 or len(ghosts) != 1 or ghosts[0]["measured"] != ghosts[0]["predicted"]:
        failures.append(f"compare_real --emulate: {len(messages)} message rows (42 expected), ghost rows {ghosts}")
    if any(not (r["measured"] > 0 and r["predicted"] > 0) for r in rows):
        failures.append("compare_real --emulate: a time that is not positive")
    # two SMPI runs a row (noise seeds 0 and 1): the one kept lies within their spread
    dem = [r for r in rows if r["what"] != "message time (s)"]
    if not dem or any(not r["predicted_spread"][0] <= r["predicted"] <= r["predicted_spread"][1] for r in dem) or \
            not os.path.isfile(os.path.join(out, "runs", "smpi", "contact-NOW-seed1", "summary.json")):
        failures.append(f"compare_real --emulate --sim-repeats 2: no second SMPI run, or a prediction outside its "
                        f"spread: {[(r['what'], r['predicted'], r.get('predicted_spread')) for r in dem]}")
    stack = json.load(open(os.path.join(out, "stack.json")))["stack_one_way_s"]
    plat = open(os.path.join(out, "platform-stack.xml")).read()
    if not 0 < stack < 1e-3 or f'id="smpi/os" value="0:{stack / 2:.6g}:0;' not in plat or 'id="lat_factor"' not in plat:
        failures.append(f"compare_real --emulate: MPI stack {stack} s (0 to 1 ms expected), or platform-stack.xml "
                        "without its smpi/os (half of it) and lat_factor")
    print(f"compare_real --emulate: {len(rows)} rows, ghost bytes {ghosts[0]['measured'] if ghosts else '?'}, "
          f"MPI stack {stack * 1e6:.1f} us")


def check_compare_emulated_probed(a, failures):
    """compare_real.py --emulate --hostmap: this machine probed (--quick), c1 at half a core, the core
    rate sampled before the round; the computing and total rows compared (an error), the platform's
    cpu_share and cpu_period, the sample and the report's lines; the emulator's dry run writes that
    quota into c1's cgroup."""
    out = os.path.join(a.out, "compare-probed")
    smpi = os.path.join(SOURCE, "build", "smpi", "demsim")
    if not os.access(smpi, os.X_OK):
        print("compare_real --emulate --hostmap: skipped (no SMPI build)")
        return
    cmd = ["/usr/bin/python3", os.path.join(SOURCE, "validation", "study", "compare_real.py"),
           os.path.join(SOURCE, "scenarios", "emulated", "network-pair.cfg"), "--emulate", "--out", out,
           "--hostmap", os.path.join(SOURCE, "scenarios", "emulated", "hostmap-pair.cfg"), "--quick",
           "--container-link", "125e6,8e-6", "--cpu-share", "c1=0.5,0.01", "--repeats", "1", "--steps", "10",
           "--particles", "20000", "--lattices", "contact", "--policies", "NOW", "--native", a.demsim, "--smpi", smpi,
           "--", "--set", "platform.hosts=c0,c1"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode:
        failures.append(f"compare_real --emulate --hostmap: rc {p.returncode}:\n{(p.stdout + p.stderr)[-3000:]}")
        return
    rows = json.load(open(os.path.join(out, "compare_real.json")))["rows"]
    compared = [r for r in rows if r["what"].startswith(("computing", "total time")) and r.get("error_percent") is not None]
    text = open(os.path.join(out, "EMULATED.md")).read()
    k = json.load(open(os.path.join(out, "probe-interleaved.json")))["nodes"][0]["contact_kernel_1core"]
    plat = open(os.path.join(out, "platform.xml")).read()
    if len(compared) != 2 or "Part of a core: c1 gets 0.5" not in text or "Core rate:" not in text \
            or len(k.get("interleaved_s", [])) != 1 or '<prop id="cpu_share" value="0.5"/>' not in plat \
            or '<prop id="cpu_period" value="0.01"/>' not in plat:
        failures.append(f"compare_real --emulate --hostmap: compared rows {compared}, samples {k.get('interleaved_s')}")
    # the quota's efficiency: one sample before the round (c1's core, free and in a 5/10 ms cgroup),
    # its ratio in the platform and the report, the sample's cgroup gone
    qpath = os.path.join(out, "quota-samples.jsonl")
    q = [json.loads(ln) for ln in open(qpath)] if os.path.isfile(qpath) else []
    eff = re.search(r'<prop id="cpu_quota_efficiency" value="([0-9.e+-]+)"/>', plat)
    if len(q) != 1 or q[0]["container"] != "c1" or q[0]["core"] != 1 or not q[0]["free_s"] > 0 \
            or not q[0]["quota_s"] > 0 or not eff or abs(float(eff.group(1)) - min(1.0, q[0]["free_s"] / q[0]["quota_s"])) > 1e-3 \
            or "cpu_quota_efficiency" not in text or glob.glob("/sys/fs/cgroup/cpu/demsim-quota-sample-*"):
        failures.append(f"compare_real --emulate --hostmap: quota samples {q}, platform's efficiency "
                        f"{eff and eff.group(1)}, left {glob.glob('/sys/fs/cgroup/cpu/demsim-quota-sample-*')}")
    # the contact search against the force kernel: one sample before the round, merged with the
    # probe's own into the platform's search rates and the report's line
    spath = os.path.join(out, "search-samples.jsonl")
    ss = [json.loads(ln) for ln in open(spath)] if os.path.isfile(spath) else []
    if len(ss) != 1 or not 0 < ss[0]["apart_over_forces"] < ss[0]["contact_over_forces"] \
            or '<prop id="search_rate"' not in plat or '<prop id="search_slot_rate"' not in plat \
            or "Contact search:" not in text:
        rates = re.findall(r'id="search_[a-z_]*rate" value="[^"]*"', plat)
        failures.append(f"compare_real --emulate --hostmap: search samples {ss}, platform's search rates {rates}")
    # the emulator gives c1 the platform's quota: 5 ms of every 10 ms (cgroup v1 takes microseconds)
    p = subprocess.run([a.demsim, "run", os.path.join(SOURCE, "scenarios", "emulated", "network-pair.cfg"), "--emulate",
                        "--dry-run", "--set", f"platform.file={os.path.join(out, 'platform.xml')}", "--set",
                        "platform.hosts=c0,c1", "--set",
                        f"native.hostmap={os.path.join(SOURCE, 'scenarios', 'emulated', 'hostmap-pair.cfg')}"],
                       capture_output=True, text=True)
    quota = [ln.split()[1] for ln in p.stdout.splitlines() if ln.startswith("echo") and "/cpu.cfs_" in ln]
    if p.returncode or quota != ["10000", "5000"]:
        failures.append(f"--emulate --dry-run: c1's cpu.cfs_period_us and cpu.cfs_quota_us {quota}, expected 10000 and "
                        f"5000:\n{p.stdout[-2000:]}{p.stderr[-1000:]}")
    logs = glob.glob(os.path.join(out, "runs", "emulated", "*", "demsim.log"))
    used = cpu_report(open(logs[0]).read()) if logs else {}
    throttled = {c: u[1] for c, u in used.items()}
    if throttled.get("c1") is None or throttled["c1"] <= 0 or throttled.get("c0") is not None:
        failures.append(f"compare_real --emulate --hostmap: c1's throttled periods expected in the run's report, none "
                        f"for c0; got {used} from {logs[:1]}")
    print(f"compare_real --emulate --hostmap: {len(compared)} computing/total rows compared, "
          f"sample {k.get('interleaved_s')}, quota samples {q}, throttled periods {throttled}")


def leftovers(prefix):
    """What a run with this prefix ("dsim<pid>-") left: namespaces, links, cgroups, processes."""
    left = [l.split()[0] for l in subprocess.run(["ip", "netns", "list"], capture_output=True,
                                                 text=True).stdout.splitlines() if l.startswith(prefix)]
    left += [l.split(":")[1].strip() for l in subprocess.run(["ip", "-o", "link"], capture_output=True,
                                                             text=True).stdout.splitlines() if prefix in l]
    left += glob.glob(f"/sys/fs/cgroup/cpuset/{prefix}*") + glob.glob(f"/sys/fs/cgroup/cpu/{prefix}*")
    return left + [f"demsim-wire pid {p}" for p in wire_pids(prefix)]


def tc_show(ns, what):
    return subprocess.run(["tc", "-n", ns, what, "show", "dev", "eth0"], capture_output=True, text=True).stdout


def read_shaping(prefix, failures):
    """Each container's classes (1 Gbit to the other: 125 MB/s) and, with netem, its 70 us delay."""
    for i in range(2):
        ns = f"{prefix}{i}"
        classes, qdiscs, filters = tc_show(ns, "class"), tc_show(ns, "qdisc"), tc_show(ns, "filter")
        other = 2 - i  # the other container's class, 1:(j+1)
        m = re.search(rf"class htb 1:{other:x} .*?rate (\S+) ceil (\S+)", classes)
        if not m or m.group(1) != "1Gbit":
            failures.append(f"{ns}: expected class 1:{other:x} at rate 1Gbit (125 MB/s), got:\n{classes}")
        if f"flowid 1:{other:x}" not in filters:
            failures.append(f"{ns}: expected a filter to flowid 1:{other:x}, got:\n{filters}")
        if "netem" in qdiscs and not re.search(r"netem \S+: parent 1:%x .*delay 70us" % other, qdiscs):
            failures.append(f"{ns}: expected netem delay 70us under 1:{other:x}, got:\n{qdiscs}")
        if "netem" not in qdiscs:
            read_wire(prefix, i, other, failures)
            # the wire serializes; htb behind it must not hold a GSO packet's successor again
            # (run/containers.c: WIRE_HTB_BURST, 1 MB)
            b = re.search(rf"class htb 1:{other:x} .*?burst (\d+)b cburst (\d+)b", classes)
            if not b or min(int(b.group(1)), int(b.group(2))) < (1 << 20) - 1000:
                failures.append(f"{ns}: expected class 1:{other:x}'s burst and cburst of about 1 MB behind "
                                f"demsim-wire, got:\n{classes}")
        routes = subprocess.run(["ip", "-n", ns, "route", "show", "dev", "eth0"], capture_output=True,
                                text=True).stdout
        m_cc = re.search(r"congctl (\S+)", routes)
        cc = m_cc.group(1) if m_cc else "the host's"
        have = open("/proc/sys/net/ipv4/tcp_available_congestion_control").read().split()
        if "cubic" in have and cc != "cubic":
            failures.append(f"{ns}: TCP congestion control on the route to the containers {cc}, expected cubic "
                            f"(Linux's default):\n{routes}")
        print(f"{ns}: class 1:{other:x} {m.group(0) if m else '?'}; TCP {cc};",
              "netem delay" if "netem" in qdiscs else "no netem in this kernel: rate only")


def wire_pids(prefix):
    """demsim-wire's processes for this cloud (zombies, with no command line, not counted)."""
    return [x for x in subprocess.run(["pgrep", "-f", f"demsim-wire --netns {prefix}"], capture_output=True,
                                      text=True).stdout.split()]


def wire_lines(prefix):
    """The command lines and cores of the cloud's wire cgroup's processes."""
    try:
        procs = open(f"/sys/fs/cgroup/cpuset/{prefix}wire/cgroup.procs").read().split()
    except OSError:
        procs = []
    out = []
    for p in procs:
        try:
            out.append((open(f"/proc/{p}/cmdline").read().replace("\0", " "), sorted(os.sched_getaffinity(int(p)))))
        except OSError:
            pass
    return out


def read_wire(prefix, i, other, failures):
    """Without netem: container i's packets to the other go to netfilter queue `other` (iptables
    NFQUEUE), where container i's demsim-wire, in the cloud's wire cgroup, on its container's core,
    holds them for 70 us at 125 MB/s; where iptables has u32, the ones without payload (TCP's pure
    acknowledgements) go first to queue 100 + `other`, held by the other container's wire, on the
    other core, the same 70 us and 125 MB/s (run/containers.c: build_wire, start_wires)."""
    ns = f"{prefix}{i}"
    rules = subprocess.run(["ip", "netns", "exec", ns, "iptables", "-t", "mangle", "-S"], capture_output=True,
                           text=True).stdout
    if not re.search(rf"-A POSTROUTING -d \S+/32 -o eth0 -j NFQUEUE --queue-num {other}\b", rules):
        failures.append(f"{ns}: expected an NFQUEUE rule to queue {other} (demsim-wire), got:\n{rules}")
    lines = wire_lines(prefix)
    # one wire a container, on its own core (the containers take cores in order: container i core i)
    data = [c for l, c in lines if f"--netns {ns} {other}=7e-05,125000000" in l]
    if data != [[i]]:
        failures.append(f"{ns}: expected one demsim-wire ... --netns {ns} {other}=7e-05,125000000 in {prefix}wire "
                        f"on core {i} alone (--cpus), got: {lines}")
    if len(lines) != 2:
        failures.append(f"expected one demsim-wire for each of the two containers, got: {lines}")
    ack = re.search(rf"-A POSTROUTING -d \S+/32 -o eth0 -p tcp -m u32 ! --u32 \S+ -j NFQUEUE --queue-num "
                    rf"{100 + other}\b", rules)
    if ack:
        acks = [c for l, c in lines if f"--netns {ns} {100 + other}=7e-05,125000000" in l]
        if acks != [[1 - i]]:
            failures.append(f"{ns}: expected the other container's demsim-wire to hold --netns {ns} "
                            f"{100 + other}=7e-05,125000000 (the acknowledgements), on core {1 - i}, got: {lines}")
        if rules.index(ack.group(0)) > rules.index(f"--queue-num {other} "):
            failures.append(f"{ns}: expected the acknowledgements' rule before the data's, got:\n{rules}")
    print(f"{ns}: no netem: NFQUEUE to queue {other}, demsim-wire {'running' if data else 'MISSING'}; "
          f"acknowledgements {'to queue %d, the other wire' % (100 + other) if ack else 'with the data (no u32 match)'}")


def cgroup_pids(prefix, i):
    try:
        with open(f"/sys/fs/cgroup/cpuset/{prefix}{i}/cgroup.procs") as f:
            return f.read().split()
    except OSError:
        return []


def check_interrupt(a, failures):
    """A long run: the cloud read back while the ranks run, then SIGINT to the launcher."""
    p = subprocess.Popen(emulate_cmd(a.demsim, os.path.join(a.out, "long"), HOSTS, 100000), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    prefix = f"dsim{p.pid}-"
    deadline = time.time() + 60
    while p.poll() is None and time.time() < deadline and not (cgroup_pids(prefix, 0) and cgroup_pids(prefix, 1)):
        time.sleep(0.2)
    if p.poll() is not None or not (cgroup_pids(prefix, 0) and cgroup_pids(prefix, 1)):
        failures.append(f"long run: the ranks never appeared in both containers' cgroups:\n{p.communicate()[0]}")
    else:
        time.sleep(2)  # mpirun's ranks under way
        read_shaping(prefix, failures)
    p.send_signal(signal.SIGINT)
    try:
        out = p.communicate(timeout=60)[0]
    except subprocess.TimeoutExpired:
        p.kill()
        out = p.communicate()[0]
        failures.append("SIGINT: the launcher did not end within 60 s")
    if p.returncode == 0 or "stopped by signal" not in out:
        failures.append(f"SIGINT: rc {p.returncode}, expected a failure saying it was stopped:\n{out[-2000:]}")
    left = leftovers(prefix)
    if left:
        failures.append(f"SIGINT: left behind: {left}")
    print(f"SIGINT: rc {p.returncode}, left behind: {left or 'nothing'}")


def check_reader_gone(a, failures):
    """The reader of the launcher's output gone (a script killed), then SIGTERM: the teardown's report
    meets a closed pipe, and the cloud must still be removed (SIGPIPE used to end it first)."""
    cmd = [a.demsim, "exec", SCENARIO, "--emulate", "--ranks", "2", "--out", os.path.join(a.out, "reader-gone"),
           "--set", "platform.file=" + PLATFORM, "--set", "platform.hosts=" + ",".join(HOSTS), "--", "/bin/sleep", "120"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    prefix = f"dsim{p.pid}-"
    deadline = time.time() + 60
    while p.poll() is None and time.time() < deadline and not (cgroup_pids(prefix, 0) and cgroup_pids(prefix, 1)):
        time.sleep(0.2)
    up = p.poll() is None and cgroup_pids(prefix, 0) and cgroup_pids(prefix, 1)
    p.stdout.close()
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        failures.append("reader gone: the launcher did not end within 60 s of SIGTERM")
    if not up:
        failures.append("reader gone: the containers never held the program")
    if p.returncode in (0, -signal.SIGPIPE):
        failures.append(f"reader gone: rc {p.returncode}, expected the failure of a stopped run")
    left = leftovers(prefix)
    if left:
        failures.append(f"reader gone: left behind: {left}")
    print(f"reader gone, then SIGTERM: rc {p.returncode}, left behind: {left or 'nothing'}")


def check_short_run(a, failures):
    out = os.path.join(a.out, "short")
    p = subprocess.Popen(emulate_cmd(a.demsim, out, HOSTS, 20), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    text = p.communicate(timeout=240)[0]
    left = leftovers(f"dsim{p.pid}-")
    if p.returncode:
        failures.append(f"short run: rc {p.returncode}:\n{text[-3000:]}")
        return
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    cpus = sorted(r.get("cpus") for r in s.get("per_rank", []))
    if s.get("ranks") != 2 or s.get("steps") != 20 or cpus != ["0", "1"]:
        failures.append(f"short run: expected 2 ranks, 20 steps, cpus 0 and 1; got {s.get('ranks')}, "
                        f"{s.get('steps')}, {cpus}")
    if left:
        failures.append(f"short run: left behind: {left}")
    used = cpu_report(text)
    wires = re.findall(r"^demsim-wire (\S+): CPU time ([0-9.]+) s", text, re.M)
    if sorted(used) != sorted(HOSTS) or not all(u[0] > 0 for u in used.values()) or \
            (wires_held(text) and sorted(w for w, _ in wires) != sorted(HOSTS)):
        failures.append(f"short run: each container's CPU time (and each wire's) expected, got {used} and {wires}")
    print(f"short run: {s.get('ranks')} ranks, cpus {cpus}, wall {s.get('wall_s')}, CPU time {used}, "
          f"left behind: {left or 'nothing'}")


def cpu_report(text):
    """{container: (CPU time s, throttled periods or None)} from the emulator's report at the end of a run."""
    got = {}
    for m in re.finditer(r"^emulated cloud: (\S+) \(cores [^)]*\): CPU time ([0-9.]+) s(?:; throttled in (\d+) of "
                         r"(\d+) periods)?", text, re.M):
        got[m.group(1)] = (float(m.group(2)), int(m.group(3)) if m.group(3) else None)
    return got


def wires_held(text):
    """Whether demsim-wire held the routes of this run (its per-queue lines are there)."""
    return re.search(r"^demsim-wire \S+: queue ", text, re.M) is not None


def main():
    a = checking.args(__doc__, lambda ap: ap.add_argument("--part", choices=["routes", "cloud"], required=True))
    failures = []
    if a.part == "routes":
        check_routes(a, failures)
        check_refusals(a, failures)
        check_exec_smpi(a, failures)
        return checking.tally("check_emulate routes", failures, "OK")
    if os.geteuid() != 0 or subprocess.run(["ip", "netns", "list"], capture_output=True).returncode:
        print("check_emulate cloud: skipped (needs root and `ip netns`)")
        return 77
    check_interrupt(a, failures)
    check_reader_gone(a, failures)
    check_short_run(a, failures)
    check_exec_emulated(a, failures)
    check_compare_emulated(a, failures)
    check_compare_emulated_probed(a, failures)
    return checking.tally("check_emulate cloud", failures, "OK")


if __name__ == "__main__":
    sys.exit(main())
