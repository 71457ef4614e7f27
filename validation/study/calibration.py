#!/usr/bin/python3
"""The platform's core rate over the time of a comparison's runs (compare_real.py, its host map
and its --emulate path): the contact-force kernel sampled on every core of this machine before
each round of native runs, and a platform written from the probe with the median of those
samples and the probe's own as the node's all-cores time (make_platforms.probed_flops_per_cycle
takes the rate from it). A shared host's speed moves over minutes; one probe before the runs
catches one moment of it. Where a container has part of its cores' time (--cpu-share), the same
kernel is also timed before each round on that container's core in a cgroup of its quota and free
(quota_sample): their CPU times' ratio is the platform's cpu_quota_efficiency (sim/host.h). The
contact search is timed against the same kernel before each round too (search_sample): the
platform's search_rate and search_slot_rate."""
import glob
import json
import os
import re
import socket
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "platforms"))
import make_platforms  # noqa: E402


def is_this_machine(host):
    return host in ("localhost", "127.0.0.1", socket.gethostname(), socket.gethostname().split(".")[0])


def all_local(hostmap):
    """Whether every host of the map is this machine (the samples measure only this one)."""
    return all(is_this_machine(h) for _, h, _ in make_platforms.read_hostmap(hostmap))


def kernel_run(exe, core):
    """calibrate_cost's contact lattice (216,000 particles, ten repetitions) pinned to one core."""
    return ["taskset", "-c", str(core), exe, "--host", "local-0", "--sizes", "60", "--packings", "contact",
            "--reps", "10"]


def kernel_sample(native, out):
    """The contact-force kernel on every core of this machine at once (demsim probe's
    all_cores_median_s, validation/calibrate_cost beside the native demsim): the mean of the
    cores' medians, s, also appended to `out` (JSON lines); None where calibrate_cost is not built
    or fails."""
    exe = os.path.join(os.path.dirname(os.path.abspath(native)), "validation", "calibrate_cost")
    if not os.access(exe, os.X_OK):
        return None
    env = dict(os.environ, POCL_MAX_PTHREAD_COUNT="1")
    procs = [subprocess.Popen(kernel_run(exe, c), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, env=env) for c in sorted(os.sched_getaffinity(0))]
    medians = []
    for p in procs:
        text = p.communicate()[0]
        row = contact_row(text, "forces_all")
        if p.returncode or not row:
            return None
        medians.append(row[1])
    with open(out, "a") as f:
        f.write(json.dumps(dict(medians_s=medians)) + "\n")
    return sum(medians) / len(medians)


def search_sample(native, out):
    """The contact search over calibrate_cost's apart and contact lattices in turns with the
    contact-force kernel, one PoCL thread on this machine's first core (calibrate_cost
    --search-turns, as demsim probe runs it: probe.json's search_1core), appended to `out` (JSON
    lines): each search's median ratio to the kernel, which make_platforms.search_rates turns into
    the platform's search_rate and search_slot_rate at the sampled core rate. Ratios of one turn,
    so a host whose speed moves between the samples gives the same; None where it fails."""
    exe = os.path.join(os.path.dirname(os.path.abspath(native)), "validation", "calibrate_cost")
    if not os.access(exe, os.X_OK):
        return None
    p = subprocess.run(["taskset", "-c", str(min(os.sched_getaffinity(0))), exe, "--search-turns", "1", "--sizes",
                        "60", "--reps", "15"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       env=dict(os.environ, POCL_MAX_PTHREAD_COUNT="1"))
    m = re.search(r"search-turns (\S+) particles, slots apart (\S+) contact (\S+) \|.*median of (\d+) turns: "
                  r"apart (\S+) contact (\S+)", p.stdout)
    if p.returncode or not m:
        return None
    d = dict(zip(("particles", "apart_slots", "contact_slots", "turns", "apart_over_forces", "contact_over_forces"),
                 (float(x) for x in m.groups())))
    with open(out, "a") as f:
        f.write(json.dumps(d) + "\n")
    return d


def read_search(out):
    """The search samples of a search_sample file ([] when none)."""
    return [json.loads(l) for l in open(out)] if os.path.isfile(out) else []


def merge_search(node, samples):
    """The node's search_1core from the search samples and the probe's own: the median of each
    ratio over them. True when changed."""
    own = node.get("search_1core")
    every = samples + ([own] if own else [])
    if not samples:
        return False
    node["search_1core"] = dict(samples[0], turns=sum(int(d["turns"]) for d in every), samples=len(every),
                                apart_over_forces=statistics.median(d["apart_over_forces"] for d in every),
                                contact_over_forces=statistics.median(d["contact_over_forces"] for d in every))
    return True


def read_samples(out):
    """The samples (s, the mean of the cores' medians) a kernel_sample file holds."""
    if not os.path.isfile(out):
        return []
    return [sum(d["medians_s"]) / len(d["medians_s"]) for d in map(json.loads, open(out)) if d.get("medians_s")]


def contact_row(text, kernel, column=10):
    """(particles, median s) of a kernel's row of the contact lattice in calibrate_cost's output, or
    None; column 11 for its CPU time's median instead of its wall time's."""
    for line in text.splitlines():
        f = line.replace("|", " ").split()
        if len(f) > column and f[0] == "contact" and f[2] == kernel:
            return float(f[1]), float(f[column]) * 1e-6
    return None


CPU_CGROUPS = "/sys/fs/cgroup/cpu"  # cgroup v1's cpu controller, as the emulator uses it


def kernel_cpu_time(exe, core, cgroup=None):
    """The contact-force kernel's CPU time a call (s, the median of calibrate_cost's repetitions,
    one PoCL thread) on `core`, in the cpu cgroup folder `cgroup` or free; None where it fails."""
    cmd = kernel_run(exe, core)
    if cgroup:
        cmd = ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup] + cmd
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       env=dict(os.environ, POCL_MAX_PTHREAD_COUNT="1"))
    row = contact_row(p.stdout, "forces_all", 11)
    return row[1] if p.returncode == 0 and row else None


def quota_sample(native, hostmap, shares, out):
    """Before a round of emulated runs, for each container with part of its cores' time (shares
    {container: (s, period or None)}): the contact-force kernel's CPU time a call on the
    container's first core, free and in a cpu cgroup of its quota (s x period per period, Linux's
    default period when None), the two in turn (the free one first in every other sample), the
    other cores idle. Appended to `out` as JSON lines; read_quota gives the ratios. Needs root and
    cgroup v1's cpu controller; without them nothing is measured (a note says so). The cgroup is
    removed also when the measurement fails or is interrupted."""
    exe = os.path.join(os.path.dirname(os.path.abspath(native)), "validation", "calibrate_cost")
    if not shares or not os.access(exe, os.X_OK):
        return
    if os.geteuid() != 0 or not os.path.isdir(CPU_CGROUPS):
        print(f"calibration: the quota's efficiency is not measured (needs root and {CPU_CGROUPS})", file=sys.stderr)
        return
    cores = {c: min(make_platforms.core_set(cs)) for c, _, cs in make_platforms.read_hostmap(hostmap)}
    done = len(open(out).readlines()) if os.path.isfile(out) else 0
    for name, (share, period) in shares.items():
        if name not in cores or share >= 1:
            continue
        period = period or 0.1
        cg = os.path.join(CPU_CGROUPS, f"demsim-quota-sample-{os.getpid()}")
        os.mkdir(cg)
        try:
            with open(os.path.join(cg, "cpu.cfs_period_us"), "w") as f:
                f.write(str(round(period * 1e6)))
            with open(os.path.join(cg, "cpu.cfs_quota_us"), "w") as f:
                f.write(str(round(share * period * 1e6)))
            t = {}
            for where in (("free", "quota") if done % 2 == 0 else ("quota", "free")):
                t[where] = kernel_cpu_time(exe, cores[name], cg if where == "quota" else None)
        finally:
            os.rmdir(cg)
        if t["free"] and t["quota"]:
            with open(out, "a") as f:
                f.write(json.dumps(dict(container=name, share=share, period=period, core=cores[name],
                                        free_s=t["free"], quota_s=t["quota"])) + "\n")


def read_quota(out):
    """{container: [free over quota CPU time a call]} of a quota_sample file ({} when none)."""
    res = {}
    if os.path.isfile(out):
        for d in map(json.loads, open(out)):
            res.setdefault(d["container"], []).append(d["free_s"] / d["quota_s"])
    return res


def probe_binning(k, probe_dir):
    """A probe.json of before binning_rate (make_platforms.binning_rate): the binning row of its own
    calibrate_cost runs, every core at once, read from the outputs beside it. True when filled."""
    if k.get("binning_particles") or not k:
        return False
    rows = [contact_row(open(p).read(), "binning")
            for p in sorted(glob.glob(os.path.join(probe_dir, "calibrate-contact-all-*.txt")))]
    if not rows or None in rows:
        return False
    k["binning_particles"] = rows[0][0]
    k["binning_all_cores_median_s"] = sum(r[1] for r in rows) / len(rows)
    return True


def interleaved_platform(outdir, probe_json, hostmap, samples, container_link=None, cpu_shares=None, quota=None,
                         search=()):
    """OUTDIR/platform.xml from the probe and the host map, its node's contact-force kernel time on
    all cores replaced by the median of the probe's and the samples (written as
    OUTDIR/probe-interleaved.json); the probe's own where there are none. A probe of before its
    binning figure takes it from its own calibrate_cost outputs (probe_binning); quota (read_quota)
    gives the containers' quota efficiency; search (read_search) the search's ratios to the kernel
    (merge_search). Returns (the probe file the platform came from, the platform)."""
    pr = json.load(open(probe_json))
    k = (pr["nodes"][0].get("contact_kernel_1core") or {}) if len(pr["nodes"]) == 1 else {}
    changed = probe_binning(k, os.path.dirname(os.path.abspath(probe_json)))
    changed |= len(pr["nodes"]) == 1 and merge_search(pr["nodes"][0], list(search))
    if samples and k.get("all_cores_median_s"):
        k["interleaved_s"] = samples
        k["all_cores_median_s"] = statistics.median(samples + [k["all_cores_median_s"]])
        changed = True
    if changed:
        probe_json = os.path.join(outdir, "probe-interleaved.json")
        with open(probe_json, "w") as f:
            json.dump(pr, f, indent=1)
    platform_xml = os.path.join(outdir, "platform.xml")
    with open(platform_xml, "w") as f:
        f.write(make_platforms.from_probe(probe_json, hostmap, container_link, cpu_shares, quota))
    print(f"platform: {platform_xml}", flush=True)
    return probe_json, platform_xml


def rate_line(probe_json):
    """What the platform's core rate was taken from."""
    nodes = json.load(open(probe_json))["nodes"]
    k = (nodes[0].get("contact_kernel_1core") or {}) if len(nodes) == 1 else {}
    if k.get("interleaved_s"):
        return ("Core rate: the contact-force kernel on every core at once, the median of the probe's "
                f"and {len(k['interleaved_s'])} samples taken before each round of runs: "
                + ", ".join(f"{x * 1e3:.3g}" for x in k["interleaved_s"])
                + f" ms -> {k['all_cores_median_s'] * 1e3:.3g} ms.")
    return "Core rate: from the probe's contact-force kernel (make_platforms.probed_flops_per_cycle)."


def search_line(probe_json):
    """What the platform's search rates were taken from ("" where it has none)."""
    nodes = json.load(open(probe_json))["nodes"]
    s = nodes[0].get("search_1core") if len(nodes) == 1 else None
    if not s:
        return ""
    return (f"Contact search: {s['apart_over_forces']:.3g} (apart) and {s['contact_over_forces']:.3g} (contact) x the "
            f"contact-force kernel, the median of {s.get('samples', 1)} measurement(s) of turns "
            "(calibrate_cost --search-turns: search-samples.jsonl, the probe's), at the core rate's kernel time: the "
            "platform's search_rate and search_slot_rate.")
