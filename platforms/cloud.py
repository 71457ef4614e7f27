"""A cloud in a few lines: a TOML description of nodes, their containers and the network, turned
into a SimGrid platform by make_platforms.py's own generator (`make_platforms.py --cloud FILE.toml
--out FILE.xml`). Every hardware fact comes from make_platforms.py's tables (NODE_TYPES, GPU,
NET); this file only reads, checks and assembles. The format: platforms/README.md, "Describing a
cloud"; the study's cloud written this way: platforms/openstack.toml.
"""
import os
import re
import tomllib

import make_platforms as mp

GPUS = {"P100": mp.GPU}
# an unknown CPU: the facts to give instead of a model name (required, then optional)
EXPLICIT = ("clock_ghz", "mem_bw_gbps", "simd_lanes")
EXPLICIT_OPTIONAL = ("cores", "llc_mib", "divider_cycles", "gather_gbps", "core_bw_gbps")
NODE_KEYS = {"name", "cpu", "mem_bw_gbps", "gpu", "site", "containers"} | set(EXPLICIT) | set(EXPLICIT_OPTIONAL)
CONTAINER_KEYS = {"name", "cores", "label", "gpu"}
TOP_KEYS = {"name", "description", "network", "wan", "nodes"}
NET_KEYS = {"nic_bandwidth": "nic_bw", "nic_latency": "nic_lat", "veth_bandwidth": "veth_bw", "veth_latency": "veth_lat"}
BANDWIDTH_UNITS = {"Bps": 1, "kBps": 1e3, "KBps": 1e3, "MBps": 1e6, "GBps": 1e9, "TBps": 1e12,
                   "KiBps": 2**10, "MiBps": 2**20, "GiBps": 2**30, "bps": 1 / 8, "kbps": 1e3 / 8,
                   "Kbps": 1e3 / 8, "Mbps": 1e6 / 8, "Gbps": 1e9 / 8, "Tbps": 1e12 / 8}
LATENCY_UNITS = {"s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
GENERIC_DOC = [
    "Host speed = FP64 rate of one core (flop/s); core = pinned cores of the container.",
    "N-membus speed = memory bandwidth of node N (B/s). Container properties: container (the",
    "study's name), node, node_type, membus, core_bw (B/s one core can draw), device (cpu|gpu),",
    "launch_latency (s per kernel or copy enqueued), and for the GPU gpu_flops (flop/s),",
    "gpu_bw (B/s), pcie_bw (B/s).",
]
TAIL_DOC = ["CPU containers: launch_latency 5 us, ESTIMATE of an OpenCL CPU runtime's enqueue cost."]
SHARED_DOC = ["Memory is not isolated between co-located containers (the study): they share N-membus."]


class CloudError(Exception):
    """A bad description: the message names the file and the line or the key path."""


def strict(msg):
    """The fail() of a description written in code (make_platforms.test_sim()): raise."""
    raise CloudError(msg)


def known_cpus():
    return [k for k in mp.NODE_TYPES]


def unit_value(text, units, path, fail):
    """A SimGrid quantity ("125MBps", "25us") as a number in base units, or fail naming path."""
    m = re.fullmatch(r"\s*([0-9.]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]+)\s*", text) if isinstance(text, str) else None
    if not m or m.group(2) not in units:
        fail(f"{path} = {text!r}: not a quantity with a unit ({', '.join(units)}), e.g. \"{'125MBps' if 'Bps' in units else '25us'}\"")
    try:
        v = float(m.group(1)) * units[m.group(2)]
    except ValueError:
        fail(f"{path} = {text!r}: not a number")
    if v <= 0 and units is BANDWIDTH_UNITS:
        fail(f"{path} = {text!r}: must be above 0")
    return v


def number(d, key, path, fail, minimum=0.0, integer=False, required=True):
    if key not in d:
        if required:
            fail(f"{path}: {key} missing")
        return None
    v = d[key]
    ok = isinstance(v, int) if integer else isinstance(v, (int, float))
    if isinstance(v, bool) or not ok or v <= minimum:
        fail(f"{path}.{key} = {v!r}: must be {'an integer' if integer else 'a number'} above {minimum:g}")
    return v


def unknown_keys(d, allowed, path, fail):
    for k in d:
        if k not in allowed:
            fail(f"{path + '.' if path else ''}{k}: unknown key (known: {', '.join(sorted(allowed))})")


def explicit_cpu(nd, path, fail):
    """The facts of a CPU given by its figures rather than a model name."""
    missing = [k for k in EXPLICIT if k not in nd]
    if missing:
        cpu = f" = {nd['cpu']!r}: unknown CPU model" if "cpu" in nd else ": no cpu"
        fail(f"{path}.cpu{cpu}; known: {', '.join(known_cpus())}; or give {', '.join(EXPLICIT)} "
             f"(missing: {', '.join(missing)}; optional: {', '.join(EXPLICIT_OPTIONAL)}) "
             "or measure the node with `demsim probe` (make_platforms.py --probe)")
    ghz = number(nd, "clock_ghz", path, fail)
    bw = number(nd, "mem_bw_gbps", path, fail) * 1e9
    lanes = number(nd, "simd_lanes", path, fail, minimum=0.999)
    cores = number(nd, "cores", path, fail, integer=True, required=False) or 4
    llc = number(nd, "llc_mib", path, fail, required=False)
    div = number(nd, "divider_cycles", path, fail, required=False)
    gather = number(nd, "gather_gbps", path, fail, required=False)
    core_bw = number(nd, "core_bw_gbps", path, fail, required=False)
    t = dict(bw=bw, core_bw=core_bw * 1e9 if core_bw else mp.CORE_BW_FRACTION * bw,
             flops=ghz * 1e9 * mp.KERNEL_FLOPS_PER_CYCLE, gather_bw=gather * 1e9 if gather else None,
             divider=ghz * 1e9 / div if div else None, lanes=lanes, cores=cores,
             llc_per_core=llc * 2**20 / cores if llc else mp.LLC_PER_CORE)
    t["doc"] = [f"{nd.get('cpu', 'CPU')} ({cores} cores): GIVEN in the description: {ghz:g} GHz x KERNEL_FLOPS_PER_CYCLE,",
                f"memory {bw / 1e9:g} GB/s, simd_lanes {lanes:g}; per-core bandwidth "
                + (f"{core_bw:g} GB/s (given)" if core_bw else "CORE_BW_FRACTION x memory") + "; gathers "
                + (f"{gather:g} GB/s (given)" if gather else "at the per-core bandwidth") + "; divider "
                + (f"{div:g} cycles a lane (given)" if div else "none (divisions charged as one flop)") + "; LLC "
                + (f"{llc:g} MiB (given)." if llc else "2 MiB a core (ESTIMATE, as the i7s).")]
    return t


def cpu_facts(nd, path, fail):
    """The node's CPU: a known part (NODE_TYPES, its memory optionally given) or explicit facts."""
    cpu = nd.get("cpu")
    if cpu is not None and not isinstance(cpu, str):
        fail(f"{path}.cpu = {cpu!r}: must be a string (a CPU model)")
    if cpu not in mp.NODE_TYPES:
        return cpu or "explicit", explicit_cpu(nd, path, fail)
    given = [k for k in EXPLICIT + EXPLICIT_OPTIONAL if k in nd and k != "mem_bw_gbps"]
    if given:
        fail(f"{path}.{given[0]}: cpu = {cpu!r} is a known part with its datasheet facts; give either the model or "
             "its figures (mem_bw_gbps alone may replace its memory)")
    t = dict(mp.NODE_TYPES[cpu], llc_per_core=mp.LLC_PER_CORE)
    if "mem_bw_gbps" in nd:
        bw = number(nd, "mem_bw_gbps", path, fail) * 1e9
        t.update(bw=bw, core_bw=mp.CORE_BW_FRACTION * bw)
    return cpu, t


def container(c, node, cpu, t, gpu, path, fail):
    """One container of a node: its host dict for make_platforms.platform()."""
    if not isinstance(c, dict):
        fail(f"{path}: must be a table {{ name = \"...\", cores = N }}")
    unknown_keys(c, CONTAINER_KEYS, path, fail)
    if not isinstance(c.get("name"), str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", c["name"]):
        fail(f"{path}.name = {c.get('name')!r}: a host name (letters, digits, '-', '_', '.') is required")
    cores = number(c, "cores", path, fail, integer=True)
    if cores > t.get("cores", 4):
        fail(f"{path}.cores = {cores}: the node's CPU has {t.get('cores', 4)} cores")
    label = c.get("label", c["name"])
    if not isinstance(label, str):
        fail(f"{path}.label = {label!r}: must be a string")
    if not isinstance(c.get("gpu", False), bool):
        fail(f"{path}.gpu = {c['gpu']!r}: true or false")
    if c.get("gpu"):
        if not gpu:
            fail(f"{path}.gpu = true: node {node} has no gpu (give the node gpu = \"P100\")")
        props = mp.container_props(label, node, cpu, t["core_bw"], "gpu", gpu["latency"],
                                   gather=t["gather_bw"], divider=t["divider"], lanes=t["lanes"])
    else:
        props = mp.container_props(label, node, cpu, t["core_bw"], llc=t["llc_per_core"] * cores, cores=cores,
                                   gather=t["gather_bw"], divider=t["divider"], lanes=t["lanes"])
    return dict(host=c["name"], cores=cores, props=props)


def node(nd, i, fail):
    path = f"nodes[{i}]"
    if not isinstance(nd, dict):
        fail(f"{path}: must be a table ([[nodes]])")
    unknown_keys(nd, NODE_KEYS, path, fail)
    name = nd.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        fail(f"{path}.name = {name!r}: a node name (letters, digits, '-', '_', '.') is required")
    cpu, t = cpu_facts(nd, path, fail)
    gpu = nd.get("gpu")
    if gpu is not None and gpu not in GPUS:
        fail(f"{path}.gpu = {gpu!r}: unknown GPU; known: {', '.join(GPUS)}")
    cs = nd.get("containers")
    if not isinstance(cs, list) or not cs:
        fail(f"{path}.containers: a list of containers ({{ name = \"...\", cores = N }}) is required")
    site = nd.get("site")
    if site is not None and (not isinstance(site, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", site)):
        fail(f"{path}.site = {site!r}: a site name (letters, digits, '-', '_', '.')")
    out = dict(name=name, type=cpu, bw=t["bw"], flops=t["flops"],
               containers=[container(c, name, cpu, t, GPUS.get(gpu), f"{path}.containers[{k}]", fail)
                           for k, c in enumerate(cs)],
               doc=[f"node {name}: {cpu}; containers " + ", ".join(c["name"] for c in cs)]
               + ([f"memory {t['bw'] / 1e9:g} GB/s (given in the description)"] if "mem_bw_gbps" in nd and cpu in mp.NODE_TYPES else []),
               switch=f"{site}-switch" if site else "switch")
    return out, (cpu, t), gpu


def network(d, fail):
    net = dict(mp.NET)
    if not isinstance(d, dict):
        fail("network: must be a table ([network])")
    unknown_keys(d, set(NET_KEYS), "network", fail)
    for key, field in NET_KEYS.items():
        if key in d:
            unit_value(d[key], BANDWIDTH_UNITS if "bandwidth" in key else LATENCY_UNITS, f"network.{key}", fail)
            net[field] = d[key].strip()
    if d:
        net["doc"] = [f"Network: as described: each node's NIC {net['nic_bw']}, {net['nic_lat']} to its switch "
                      f"(full duplex); each container's veth {net['veth_bw']}, {net['veth_lat']} to its node's bridge."]
    return net


def wan(d, fail):
    if not isinstance(d, dict):
        fail("wan: must be a table ([wan])")
    unknown_keys(d, {"latency", "bandwidth"}, "wan", fail)
    lat = unit_value(d["latency"], LATENCY_UNITS, "wan.latency", fail) if "latency" in d else mp.WAN_LATENCY
    bw = unit_value(d["bandwidth"], BANDWIDTH_UNITS, "wan.bandwidth", fail) if "bandwidth" in d else mp.WAN_BANDWIDTH
    return lat, bw


def check_unique(nodes, fail):
    seen = {}
    for i, n in enumerate(nodes):
        ids = [n["name"] + "-membus", n["name"] + "-bridge", n["switch"]] + [c["host"] for c in n["containers"]]
        for k, h in enumerate(ids):
            where = f"nodes[{i}]" + (".name" if k < 2 else ".site" if k == 2 else f".containers[{k - 3}].name")
            if h in seen and not (k == 2 and seen[h][1] == "switch"):
                fail(f"{where}: host or router '{h}' is already {seen[h][0]}")
            seen.setdefault(h, (where, "switch" if k == 2 else "host"))


def header(path, desc, parts, gpus, net, fail):
    if isinstance(desc, str):
        desc = desc.strip("\n").split("\n")
    if not isinstance(desc, list) or not all(isinstance(x, str) for x in desc):
        fail("description: a string or a list of strings")
    out = desc[:1] + [f"Written by platforms/make_platforms.py from {os.path.basename(path)}: edit that file",
                      "(and the hardware facts in make_platforms.py), not this one."] + desc[1:] + [""] + GENERIC_DOC + [""]
    for cpu, t in parts.values():
        out += t["doc"] + [""]
    for g in gpus:
        out += GPUS[g]["doc"] + [""]
    return out + net["doc"] + TAIL_DOC + mp.STORAGE_DOC + mp.FIRST_TOUCH_DOC + SHARED_DOC


def load(path):
    """The description at path as a dict, or CloudError naming the file and the line."""
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except OSError as e:
        raise CloudError(f"{path}: cannot read it: {e.strerror}")
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        where = f"{path}:{m.group(1)}:{m.group(2)}" if m else path
        what = re.sub(r" \(at line.*", "", str(e))
        raise CloudError(f"{where}: not valid TOML: {what}")


def nodes(path, prefix="", switch="switch"):
    """The nodes of the description at path for make_platforms.platform(), node and container names
    prefixed and all on one switch (a site's copy of a cloud: make_platforms.twosite())."""
    d = load(path)

    def fail(msg):
        raise CloudError(f"{path}: {msg}")

    out = []
    for i, nd in enumerate(d.get("nodes", [])):
        nd = dict(nd, name=prefix + nd["name"], containers=[dict(c, name=prefix + c["name"]) for c in nd["containers"]])
        n = node(nd, i, fail)[0]
        n["switch"] = switch
        out.append(n)
    return out


def cloud(path):
    """The SimGrid platform (XML text) of the description at path."""
    d = load(path)

    def fail(msg):
        raise CloudError(f"{path}: {msg}")

    unknown_keys(d, TOP_KEYS, "", fail)
    zone = d.get("name", os.path.splitext(os.path.basename(path))[0])
    if not isinstance(zone, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", zone):
        fail(f"name = {zone!r}: a zone name (letters, digits, '-', '_', '.')")
    if not isinstance(d.get("nodes"), list) or not d["nodes"]:
        fail("nodes: at least one node ([[nodes]] with name, cpu and containers) is required")
    nodes, parts, gpus = [], {}, []
    for i, nd in enumerate(d["nodes"]):
        n, (cpu, t), gpu = node(nd, i, fail)
        nodes.append(n)
        parts.setdefault(cpu if cpu in mp.NODE_TYPES else f"{cpu}@{i}", (cpu, t))
        if gpu and gpu not in gpus:
            gpus.append(gpu)
    check_unique(nodes, fail)
    net = network(d.get("network", {}), fail)
    switches = list(dict.fromkeys(n["switch"] for n in nodes))
    if "wan" in d and len(switches) < 2:
        fail("wan: needs nodes on two sites or more (nodes' site)")
    link = wan(d.get("wan", {}), fail) if len(switches) > 1 else None
    head = header(path, d.get("description", [f"A cloud described in {os.path.basename(path)}."]), parts, gpus, net, fail)
    return mp.platform(zone, head, nodes, net, wan=link)
