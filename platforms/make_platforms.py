#!/usr/bin/python3
"""Writes the SimGrid platforms of demsim (v4.1 DTD) from the hardware facts below.

Run from anywhere: python3 platforms/make_platforms.py. It rewrites openstack.xml, local.xml,
testbed.xml and test-sim.xml next to itself; the generated files are committed.

Model (DESIGN.md, "Memory-bandwidth contention, in SimGrid itself"):
  - every container is a SimGrid host: speed = one core's FP64 rate, core = its pinned cores;
  - every physical node N has a host N-membus whose speed is the node's memory bandwidth in B/s
    (one core: its traffic is shared max-min fairly among the activities put on it);
  - the hardware facts the simulator needs are host properties of each container (read by
    sim/host.c, which fails naming the host and the property when one is missing);
  - network: each container reaches its node's bridge (router N-bridge) through its own virtual
    link (Docker veth); the bridge reaches the switch through the node's NIC. Two containers
    of one node talk through the bridge only.
"""
import json
import os
import re
import socket
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# --- calibration constants (the only ones; each measured, none fitted to a study figure) ----
# 1. KERNEL_FLOPS_PER_CYCLE: FP64 operations per core clock cycle that the DEM contact kernels
#    sustain, divisions and square roots apart (those go through the divider, whose rate is a
#    fact of each core: DIVIDER below). MEASURED on the development machine by
#    `validation/study/hardware.py --calibrate-only`: the contact-force kernel (dem_forces_all, 216,000
#    particles in contact, both cores, best of 10 through validation/calibrate_cost) less the
#    model's memory term (its cache-line traffic over the probe's bus bandwidth) and its
#    divisions and square roots at the probe's divider rate, per core, over the core clock
#    (bwprobe's FMA loop over 32 flop/cycle, AVX-512). Five runs on 2026-12-05 08:42-08:47 UTC
#    (idle), after kick-drift went into lanes of eight and the search row walk and the contact
#    law were inlined (commits 196d25b-41f244c; BENCHMARKS-history.md "Kick-drift in lanes of eight"):
#    3.06, 3.53, 3.10, 3.04, 3.25 -> the median, 3.10 (five runs earlier that day with all but
#    the last of those changes: 3.07, 3.14, 3.12, 3.08, 3.06). Before them, five runs on 2026-12-05 03:43-03:48 UTC
#    (2-core AMD EPYC VM, idle), after the pair pass lost its locked adds and its scalar root
#    (commit c951a45; BENCHMARKS-history.md "The pair pass without its locked adds") and the contact was
#    recounted for it (8 divider lanes, not 9): 1.78, 2.72, 2.77, 2.95, 2.90 -> the median, 2.77
#    (five runs just before, with the old count: 2.57, 2.58, 2.93, 2.92, 2.71). (The kernel before
#    that change: 2.67, 2.76, 2.21, 2.41, 2.37
#    on 2026-12-04 16:58-17:03 UTC, median 2.41, and 2.25, 2.43, 2.80, 2.75 in the hardware
#    checks of 2026-12-05 01:50-03:08 UTC; after the contact kernel's lanes moved into registers
#    and PoCL's vectorizers were switched off, commit 08be2a9. Before that, three runs: 1.67,
#    1.68, 1.67. Before the divider was modelled, three runs on a loaded machine of the same kind
#    on 2026-12-03 gave 0.90, 1.43, 1.63, all flops at one rate.) Gathers, dependent chains and branches,
#    not the vector width, bound the rest of such kernels, so the figure carries over to other
#    x86 cores by their clock (not by their peak). A CPU host's speed is its base clock x
#    KERNEL_FLOPS_PER_CYCLE; a probed node's is measured by its probe where it ran the kernel
#    (kernel_rate, probed_flops_per_cycle).
KERNEL_FLOPS_PER_CYCLE = 3.10
# The P100 runs the same kernels. Its FP64 rate for them comes from a published measurement of
# an OpenCL DEM with tangential history on this GPU: 3.7-5.7 x (geometric middle 4.6 x) a
# two-socket Xeon E5-2630 v4 node (VilniusTech, "Performance evaluation of various discrete
# element models implemented on GPU"; FACTS.md). That node under this model: 20 cores at 2.2 GHz
# x KERNEL_FLOPS_PER_CYCLE, 2 x 68.3 GB/s (4 channels of DDR4-2133 per socket; Intel ARK). The
# study's benchmark step per particle (sim/cost.c: dem_forces_all with 6 partners in contact and
# dem_kick_drift): 1012 flops, of which 50 divisions and square roots (6 x 8 + 2), and 692 B of
# DRAM traffic (the partner gathers hit the cache). The Broadwell divider: vdivpd ymm 16,
# vsqrtpd ymm 28 divider cycles (LLVM's X86SchedBroadwell.td), (2 x 28 + 16) / 12 = 6 cycles per
# lane in the contact's mix (see DIVIDER below). The P100 then takes the node's time / 4.6 per
# particle-step; its memory (644 B at 414 GB/s, below) takes less, so the kernels are compute
# bound there and gpu_flops = 1012 flops / that time (its divisions inside that rate).
BROADWELL_DIVIDER_CYCLES = (2 * 28 + 16) / 12
XEON_STEP_S = ((1012 - 50) / (20 * 2.2e9 * KERNEL_FLOPS_PER_CYCLE) + 50 * BROADWELL_DIVIDER_CYCLES / (20 * 2.2e9)
               + 692 / (2 * 68.3e9))
P100_OVER_XEON = (3.7 * 5.7) ** 0.5
GPU_KERNEL_FLOPS = 1012 / (XEON_STEP_S / P100_OVER_XEON)
GPU_FP64_PEAK = 4.7e12
# 2. CORE_BW_FRACTION: the share of a dual-channel node's achievable bandwidth one core can
#    draw. MEASURED by a published test of a Skylake i7-6700K (rigaya34589.blog.fc2.com, entry
#    660: read bandwidth 25.4 GB/s with 1 thread, 42.0 GB/s with 4 threads) -> 0.60; applied to
#    the i7-6700 and, as an ESTIMATE, to the Haswell i7-4790.
CORE_BW_FRACTION = 0.60
# (the third constant, the network's per-hop latency, is in NET below.)

# --- memory-system facts (each with its source; not calibration constants) -------------------
# Cache line of the x86 cores: 64 B (Intel 64 and IA-32 Architectures Optimization Reference
# Manual). Last-level cache: 8 MB on both the i7-6700 and the i7-4790 (Intel ARK), shared by
# the node's 4 cores: a container is given its cores' share (the neighbours use the rest).
CACHE_LINE = 64
LLC_PER_CORE = 8 * 1024 * 1024 / 4
# Loaded DRAM latency over idle latency against bus utilisation: Intel MLC measurement of a
# 2-channel DDR4 single-socket server, 93 ns idle, 109 ns at 50 %, 124 ns at 80 %, 135 ns
# saturated (FD.io CSIT calibration reports; FACTS.md). No desktop i7 curve is published, so
# the shape is taken for both node types (ESTIMATE for the DDR3 i7-4790).
LOADED_LATENCY = "0:1,0.5:1.172,0.8:1.333,1:1.452"
# A core gathers missed lines at (line fill buffers x 64 B) / idle DRAM latency (Little's law):
# Skylake 12 and Haswell 10 fill buffers (Intel optimization manual); idle latency 42 cycles +
# 51 ns on the i7-6700, 36 cycles + 57 ns on Haswell (7-cpu.com; FACTS.md).
def gather_bw(fill_buffers, cycles, ns, ghz):
    return fill_buffers * CACHE_LINE / ((cycles / ghz + ns) * 1e-9)
# The divider: FP64 divisions and square roots (sim/cost.c counts 6 square roots and 3 divisions
# per particle contact) go through a unit that is not pipelined like the adders and multipliers,
# and whose cycles per lane differ between cores (sim/cost.h: sim_cost_cpu_flops). Divider cycles
# per 256-bit instruction (4 lanes), from LLVM's scheduling models, which follow Intel's
# optimization manual and measurements (llvm/lib/Target/X86/X86SchedSkylakeClient.td,
# X86SchedHaswell.td: the FPDivider resource cycles of WriteFDiv64Y and WriteFSqrt64Y):
#   Skylake: vdivpd ymm 8, vsqrtpd ymm 12;  Haswell: vdivpd ymm 28, vsqrtpd ymm 28
# (Haswell's divider is 128 bits wide and slower per lane). In the contact's mix of 2 square roots
# per division, cycles per lane: Skylake (2 x 12 + 8) / 12 = 2.67, Haswell (2 x 28 + 28) / 12 = 7.
SKYLAKE_DIVIDER_CYCLES = (2 * 12 + 8) / 12
HASWELL_DIVIDER_CYCLES = (2 * 28 + 28) / 12
# This machine's (AMD EPYC, 2 cores, AVX-512): validation/probes/bwprobe.c's divider loop (2 square
# roots per division, 8 lanes) on one core, 6 runs on 2026-12-04: 4.33-4.46e9 lanes/s (0.78
# cycles per lane at 3.4-3.5 GHz, a divider 3.4 x Skylake's per cycle).
LOCAL_DIVIDER_RATE = 4.4e9
# FP64 lanes of a core's vector datapath (simd_lanes; sim/cost.h: sim_cost_cpu_flops): the
# kernels written in lanes of eight achieve KERNEL_FLOPS_PER_CYCLE with every instruction doing
# this many lanes; scalar code (the search, the binning, the external forces) does one per
# instruction, so its flops weigh this many. Skylake and Haswell: two 256-bit FMA units, 4 FP64
# lanes per instruction (Intel 64 and IA-32 Architectures Optimization Reference Manual, the
# Skylake and Haswell microarchitecture chapters: 2 x 256-bit FMA ports). Measured on the
# development machine of 2026-12-05 (AMD EPYC, Zen 4: 512-bit instructions issue as two 256-bit
# halves) by validation/probes/bwprobe.c, vector FMA loop over the same loop in scalar code: 58.7 /
# 14.7 GF/s = 3.99 (a Zen 5 core: 7.9, where it overstates scalar code's weight; BENCHMARKS.md).
SIMD_LANES_AVX2 = 4
FLAT_LATENCY = "0:1"
LOCAL_LLC = 16 * 1024 * 1024

# --- hardware facts ------------------------------------------------------------------------
# name: (comment, node bandwidth B/s, per-core bandwidth B/s, effective core flop/s)
NODE_TYPES = {
    "i7-6700": dict(
        cores=4, bw=34.13e9, core_bw=CORE_BW_FRACTION * 34.13e9, flops=3.40e9 * KERNEL_FLOPS_PER_CYCLE,
        gather_bw=gather_bw(12, 42, 51, 3.4), divider=3.40e9 / SKYLAKE_DIVIDER_CYCLES, lanes=SIMD_LANES_AVX2,
        doc=[
            "i7-6700 (Skylake, 4 cores, 3.40 GHz base; Intel ARK datasheet).",
            "Memory: DDR4-2133 dual channel, 34.13 GB/s (the study; 2 x 8 B x 2133 MT/s).",
            f"Host speed = 3.40 GHz x KERNEL_FLOPS_PER_CYCLE ({KERNEL_FLOPS_PER_CYCLE}, measured, see make_platforms.py)",
            f"= {3.4 * KERNEL_FLOPS_PER_CYCLE:.2f} GF/s per core for the DEM kernels (the AVX2 FMA peak, 54.4 GF/s, is never reached).",
            "Per-core bandwidth = CORE_BW_FRACTION (0.60, measured on a Skylake i7-6700K) x 34.13",
            "= 20.5 GB/s. Nothing here is fitted to the study's results: its case-1 load ratio",
            "(3.3) is a prediction of the model (validation/REPORT.md).",
            f"Divider (divisions, square roots): 3.40 GHz / {SKYLAKE_DIVIDER_CYCLES:.2f} cycles per lane = "
            f"{3.4 / SKYLAKE_DIVIDER_CYCLES:.2f} G lanes/s per core",
            "(Skylake: vdivpd ymm 8, vsqrtpd ymm 12 divider cycles; LLVM's Skylake scheduling model).",
            "simd_lanes 4: two 256-bit FMA units (Intel optimization manual); scalar code's flops weigh 4.",
        ]),
    "i7-4790": dict(
        cores=4, bw=29.87e9, core_bw=CORE_BW_FRACTION * 29.87e9, flops=3.60e9 * KERNEL_FLOPS_PER_CYCLE,
        gather_bw=gather_bw(10, 36, 57, 3.6), divider=3.60e9 / HASWELL_DIVIDER_CYCLES, lanes=SIMD_LANES_AVX2,
        doc=[
            "i7-4790 (Haswell, 4 cores, 3.60 GHz base; Intel ARK datasheet).",
            "Memory: DDR3-1866 dual channel, 29.87 GB/s (the study).",
            f"Host speed = 3.60 GHz x KERNEL_FLOPS_PER_CYCLE = {3.6 * KERNEL_FLOPS_PER_CYCLE:.2f} GF/s per core.",
            "Per-core bandwidth = CORE_BW_FRACTION x 29.87 = 17.9 GB/s: ESTIMATE (the Skylake",
            "fraction; no single-core figure of this node was measured).",
            f"Divider: 3.60 GHz / {HASWELL_DIVIDER_CYCLES:.2f} cycles per lane = {3.6 / HASWELL_DIVIDER_CYCLES:.2f} G lanes/s per core",
            "(Haswell: vdivpd ymm and vsqrtpd ymm 28 divider cycles each, a 128-bit divider; LLVM's",
            "Haswell scheduling model): the DEM's contacts cost more cycles here than on Skylake.",
            "simd_lanes 4: two 256-bit FMA units (Intel optimization manual).",
        ]),
    "gpu-host": dict(
        cores=4, bw=34.13e9, core_bw=CORE_BW_FRACTION * 34.13e9, flops=3.40e9 * KERNEL_FLOPS_PER_CYCLE,
        gather_bw=gather_bw(12, 42, 51, 3.4), divider=3.40e9 / SKYLAKE_DIVIDER_CYCLES, lanes=SIMD_LANES_AVX2,
        doc=[
            "The GPU node's host CPU is not described by the study: ESTIMATE, taken equal to an",
            "i7-6700 node (bandwidth, per-core bandwidth, core rate, divider, lanes). Only host-side work (packing,",
            "binning, partitioning, output) runs on it.",
        ]),
}

# OpenCL enqueue-to-start overhead of a CPU runtime: ESTIMATE (a few microseconds).
CPU_LAUNCH_LATENCY = 5e-6

GPU = dict(
    flops=GPU_KERNEL_FLOPS, bw=549e9 * 552 / 732, gather_bw=72 * 2**30 * 549 / 732, pcie=12.0e9,
    latency=10e-6, sector=32, l2=4 * 1024 * 1024,
    doc=[
        "NVIDIA Tesla P100 PCIe 12 GB: FP64 peak 4.7 TF/s (NVIDIA datasheet); for the DEM kernels",
        f"{GPU_KERNEL_FLOPS / 1e9:.0f} GF/s ({GPU_KERNEL_FLOPS / GPU_FP64_PEAK:.1%} of peak): a published DEM measurement on a P100,",
        "4.6 x a 20-core Xeon E5-2630 v4 node, through this model of that node (make_platforms.py). HBM2 549 GB/s (the study,",
        "datasheet of the 12 GB card); streamed data at 75.4 % of it, 414 GB/s (BabelStream triad",
        "552 of 732 GB/s on the 16 GB card); gathers that miss the 4 MB L2 (datasheet), in 32 B",
        "sectors, at 72 GiB/s x 549/732 = 58 GB/s (Spatter random 8-byte gathers on a P100).",
        "PCIe 3.0 x16 pinned copies: 12.0 GB/s (11.7-12.2 measured host to device, Microway).",
        "Launch latency 10 us per kernel or copy: ESTIMATE (an empty CUDA kernel takes about 3 us;",
        "no OpenCL figure on NVIDIA is published).",
    ])

NET = dict(
    nic_bw="125MBps", nic_lat="25us",
    veth_bw="2.5GBps", veth_lat="10us",
    doc=[
        "Network: 1 Gbps Ethernet through one switch (the study): each node's NIC is a 125 MB/s",
        "full-duplex link, 25 us to the switch (ESTIMATE: about 100 us round trip between two",
        "nodes, usual for 1 GbE with a Docker network). Each container's veth to its node's bridge:",
        "2.5 GB/s, 10 us (ESTIMATE of a Linux bridge between co-located containers).",
    ])

# B/s a container writes to (and reads from) its storage: checkpoints. ESTIMATE: the study does
# not say what disks the nodes have; 200 MB/s is a sequential write between a 7200 rpm SATA disk's
# (~150 MB/s) and a SATA SSD's (~500 MB/s), through the container's volume.
STORAGE_BW = 200e6
STORAGE_DOC = ["storage_bw 200 MB/s (checkpoints): ESTIMATE, a SATA disk's sequential write (between a",
               "7200 rpm disk's ~150 MB/s and a SATA SSD's ~500 MB/s); the study does not name the disks."]

# B/s of fresh memory a container's OS maps at its first write (a page fault and a zeroed 4 KiB
# page each; sim/clock.c charges the solver's new memory with it). Study's containers: Docker on
# bare-metal Linux, ESTIMATE from a published measurement of one minor fault on an Intel Core i7
# (11th generation, Linux 6.6, rdtsc around the first write of an anonymous page, 100 runs):
# median 1,013 ns (ddumbying.vercel.app/experiments/pagefault-latency) -> 4 KiB / 1.013 us.
FIRST_TOUCH_BW = 4096 / 1.013e-6
FIRST_TOUCH_DOC = [f"first_touch_bw {FIRST_TOUCH_BW / 1e9:.2f} GB/s (new memory, a page fault per 4 KiB): ESTIMATE, a",
                   "published median of 1.0 us per minor fault on a Core i7 under Linux 6.6 (bare metal)."]
# This machine's (validation/probes/bwprobe.c --first-touch: 256 MiB of a fresh anonymous mapping
# written a byte per page, best of 3, CPU 0 and CPU 1, on 2026-12-05): 0.36-0.38 GB/s, 11 us a
# page -- a guest of the PVM hypervisor (dmesg), whose page faults leave the guest -- an order
# of magnitude above bare metal; with 2 MiB pages (madvise MADV_HUGEPAGE) 17 GB/s.
LOCAL_FIRST_TOUCH_BW = 0.37e9


def host_xml(hid, speed, cores, props, indent="    "):
    lines = [f'{indent}<host id="{hid}" speed="{speed:.6g}f" core="{cores}">']
    for k, v in props:
        lines.append(f'{indent}  <prop id="{k}" value="{v}"/>')
    lines.append(f"{indent}</host>")
    return lines


def container_props(container, node, node_type, core_bw, device="cpu", latency=CPU_LAUNCH_LATENCY,
                    llc=None, cores=1, gather=None, divider=None, first_touch=FIRST_TOUCH_BW, partition=None,
                    lanes=None, binning=None, permute=None, search=None):
    if device == "gpu":
        line, llc = GPU["sector"], GPU["l2"]
    else:
        line, llc = CACHE_LINE, llc if llc is not None else LLC_PER_CORE * cores
    props = [("container", container), ("node", node), ("node_type", node_type),
             ("membus", f"{node}-membus"), ("core_bw", f"{core_bw:.6g}"),
             ("core_gather_bw", f"{gather if gather else core_bw:.6g}"),
             ("cache_line", f"{line:.6g}"), ("llc_bytes", f"{llc:.6g}"),
             ("device", device), ("launch_latency", f"{latency:.6g}"),
             ("storage_bw", f"{STORAGE_BW:.6g}")]
    if divider:
        props.append(("divider_rate", f"{divider:.6g}"))
    if first_touch:
        props.append(("first_touch_bw", f"{first_touch:.6g}"))
    if partition:
        props.append(("partition_rate", f"{partition:.6g}"))
    if binning:
        props.append(("binning_rate", f"{binning:.6g}"))
    if permute:
        props.append(("permute_bw", f"{permute:.6g}"))
    if search:
        props += [("search_rate", f"{search[0]:.6g}"), ("search_slot_rate", f"{search[1]:.6g}")]
    if lanes:
        props.append(("simd_lanes", f"{lanes:.6g}"))
    if device == "gpu":
        props += [("gpu_flops", f"{GPU['flops']:.6g}"), ("gpu_bw", f"{GPU['bw']:.6g}"),
                  ("gpu_gather_bw", f"{GPU['gather_bw']:.6g}"), ("pcie_bw", f"{GPU['pcie']:.6g}")]
    return props


def comment(lines, indent="  "):
    lines = [l.replace("--", "- -") for l in lines]  # XML forbids "--" inside a comment
    return [f"{indent}<!-- " + lines[0]] + [f"{indent}     " + l for l in lines[1:-1]] + \
        ([f"{indent}     " + lines[-1] + " -->"] if len(lines) > 1 else []) if len(lines) > 1 \
        else [f"{indent}<!-- {lines[0]} -->"]


def platform(zone, header, nodes, net=NET, wan=None):
    """nodes: list of (node, node_type, [(host, container, cores, device, props overrides)],
    node_bw, core_flops, core_bw, extra comment lines); a node's "switch" (default "switch") is
    its site's. wan: (latency s, bandwidth B/s) of one full-duplex link between each pair of
    consecutive switches (the sites' gateways), or None."""
    out = ["<?xml version='1.0'?>", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">']
    out += comment(header, indent="")
    switches = list(dict.fromkeys(n.get("switch", "switch") for n in nodes))
    out += ['<platform version="4.1">']
    if net.get("bw_factor"):
        out += ["  <config>", f'    <prop id="smpi/bw-factor" value="{net["bw_factor"]}"/>', "  </config>"]
    out += [f'  <zone id="{zone}" routing="Floyd">']
    if net.get("lat_factor"):
        out += [f'    <prop id="lat_factor" value="{net["lat_factor"]}"/>']
    out += [f'    <router id="{sw}"/>' for sw in switches]
    routes = []  # the DTD wants every route after the resources
    if wan:
        for k in range(len(switches) - 1):
            a, b = switches[k], switches[k + 1]
            out.append(f'    <link id="wan-{k}" bandwidth="{wan[1]:.6g}Bps" latency="{wan[0]:.6g}s" '
                       f'sharing_policy="SPLITDUPLEX">{WIDE_AREA_PROP}</link>')
            routes.append(f'    <route src="{a}" dst="{b}"><link_ctn id="wan-{k}" direction="UP"/></route>')
    for n in nodes:
        out.append("")
        out += comment(n["doc"], indent="    ")
        out += host_xml(f"{n['name']}-membus", n["bw"], 1,
                        [("node", n["name"]), ("node_type", n["type"]),
                         ("loaded_latency", n.get("latency", LOADED_LATENCY))])
        out.append(f'    <router id="{n["name"]}-bridge"/>')
        out.append(f'    <link id="{n["name"]}-nic" bandwidth="{net["nic_bw"]}" '
                   f'latency="{net["nic_lat"]}" sharing_policy="SPLITDUPLEX"/>')
        routes.append(f'    <route src="{n["name"]}-bridge" dst="{n.get("switch", "switch")}">'
                      f'<link_ctn id="{n["name"]}-nic" direction="UP"/></route>')
        for c in n["containers"]:
            out += host_xml(c["host"], c.get("flops", n["flops"]), c["cores"], c["props"])
            out.append(f'    <link id="{c["host"]}-veth" bandwidth="{net["veth_bw"]}" '
                       f'latency="{net["veth_lat"]}" sharing_policy="SPLITDUPLEX"/>')
            routes.append(f'    <route src="{c["host"]}" dst="{n["name"]}-bridge">'
                          f'<link_ctn id="{c["host"]}-veth" direction="UP"/></route>')
    out += [""] + routes
    out += ["  </zone>", "</platform>", ""]
    return "\n".join(out)


# The study's cloud: its nodes and containers are described in openstack.toml (the source of
# openstack.xml and of twosite.xml's two sites), read by cloud.py with the facts above.
STUDY_CLOUD = os.path.join(HERE, "openstack.toml")


def cloud_module():
    """platforms/cloud.py (the description files' reader), wherever this module was loaded from."""
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    import cloud
    return cloud


def openstack():
    return cloud_module().cloud(STUDY_CLOUD)


def study_nodes(prefix="", switch="switch"):
    """The study's eight nodes and their containers (openstack.toml), names prefixed (a second site's copy)."""
    return cloud_module().nodes(STUDY_CLOUD, prefix, switch)


# A wide-area link: SMPI's latency factor (fitted on a LAN: the MPI stack and the switch) does not
# multiply its latency, which is propagation (sim/netfactor.cpp).
WIDE_AREA_PROP = '<prop id="wide_area" value="1"/>'

# Two sites (twosite()): the WAN between their gateways, defaults of the committed platform.
# 10 ms one way: ESTIMATE for two data centres about 1,000 km apart (light in fibre covers
# 1,000 km in 5 ms; fibre routes run 1.5-2x the great-circle distance). 1 Gbit/s: ESTIMATE, a
# site uplink of the study's own Ethernet rate. validation/study/sites.py sweeps both.
WAN_LATENCY = 0.010
WAN_BANDWIDTH = 125e6


def twosite(wan_latency=WAN_LATENCY, wan_bandwidth=WAN_BANDWIDTH):
    """Two copies of the study's OpenStack LAN joined by one WAN link between their switches:
    site A is openstack()'s cloud (same host names), site B the same nodes with "b-" in front."""
    header = [
        "Two OpenStack sites, each the study's cloud (openstack.xml: nodes, containers, 1 Gbps LAN),",
        "joined by one wide-area link between their switches (routers switch and b-switch).",
        "Written by platforms/make_platforms.py (function twosite(); --twosite writes other WANs).",
        "Site A: the hosts of openstack.xml. Site B: the same with 'b-' in front (b-n1-cn6700-4, ...).",
        f"WAN: {wan_latency:g} s one way, {wan_bandwidth:.6g} B/s each way (full duplex). Defaults",
        "10 ms and 125 MB/s (1 Gbit/s): ESTIMATES, two data centres about 1,000 km apart (light in fibre:",
        "5 ms per 1,000 km, routes 1.5-2x longer) and a site uplink at the study's Ethernet rate.",
        "The WAN link has the property wide_area = 1: SMPI's latency factor (fitted on a LAN) multiplies",
        "the route's other links only (sim/netfactor.cpp). Everything else as openstack.xml (its header",
        "lists the sources).",
    ]
    nodes = study_nodes() + study_nodes("b-", "b-switch")
    return platform("twosite", header, nodes, wan=(wan_latency, wan_bandwidth))


def simple_node(name, ntype, bw, flops, core_bw, containers, doc, latency=0.0, llc=None,
                curve=LOADED_LATENCY, gather=None, divider=None, first_touch=FIRST_TOUCH_BW, partition=None,
                lanes=None):
    cs = []
    for host, cores, cname in containers:
        cs.append(dict(host=host, cores=cores,
                       props=container_props(cname, name, ntype, core_bw, latency=latency, llc=llc,
                                             cores=cores, gather=gather, divider=divider,
                                             first_touch=first_touch, partition=partition, lanes=lanes)))
    return dict(name=name, type=ntype, bw=bw, flops=flops, containers=cs, doc=doc, latency=curve)


def local():
    header = [
        "This development machine: 2 cores, one memory bus. ALL FIGURES ARE ESTIMATES, to be",
        "replaced by the probe's measurements (validation/study/hardware.py writes local-calibrated.xml).",
        "Written by platforms/make_platforms.py.",
        "Memory bandwidth 26 GB/s: bus traffic of the triad of these 2-core machines (18-20 GB/s as",
        "STREAM counts it, FACTS.md, x 4/3 for write-allocate). Per-core bandwidth 18 GB/s, missed",
        "gathers 4 GB/s per core (validation/probes/bwprobe.c --gather on such a machine: 3.8 GB/s).",
        "Last-level cache 16 MiB: ESTIMATE (half the 32 MiB L3 the VM reports; other tenants share it).",
        "Core rate for the DEM kernels: 3.0 GHz (bwprobe's FMA loop: 48 GF/s at 16 flop/cycle, AVX2)",
        "x KERNEL_FLOPS_PER_CYCLE.",
        f"Divider {LOCAL_DIVIDER_RATE / 1e9:.3g} G lanes/s per core (validation/probes/bwprobe.c's divide / square-root loop).",
        f"simd_lanes {SIMD_LANES_AVX2}: bwprobe's vector FMA loop over its scalar one (make_platforms.py).",
        "launch_latency 5 us: ESTIMATE (OpenCL CPU runtime).",
        f"first_touch_bw {LOCAL_FIRST_TOUCH_BW / 1e9:.2f} GB/s: new memory costs 11 us a 4 KiB page on this VM (PVM guest;",
        "validation/probes/bwprobe.c --first-touch), against about 1 us on bare metal.",
    ] + STORAGE_DOC + [
        "Hosts: local-0 and local-1 are one core each (one rank per core); local is both cores.",
    ]
    node = simple_node("local", "local", 26e9, 3.0e9 * KERNEL_FLOPS_PER_CYCLE, 18e9,
                       [("local-0", 1, "local-1core"), ("local-1", 1, "local-1core"),
                        ("local", 2, "local-2core")],
                       ["the machine: node 'local', memory bus local-membus"],
                       latency=CPU_LAUNCH_LATENCY, llc=LOCAL_LLC, gather=4e9, divider=LOCAL_DIVIDER_RATE,
                       first_touch=LOCAL_FIRST_TOUCH_BW, lanes=SIMD_LANES_AVX2)
    return platform("local", header, [node])


def testbed():
    header = [
        "A small generic cloud for the test suite, not a model of any real machine (the study's",
        "cloud is openstack.xml). Written by platforms/make_platforms.py.",
        "8 single-core containers node-0..node-7 at 1 Gf/s on a 1 Gbps switch: node-0..3 are",
        "co-located on physical node pa (one memory bus, pa-membus, 10 GB/s), node-4..7 on pb",
        "(pb-membus). One core draws at most 5 GB/s. No launch latency.",
    ] + STORAGE_DOC + FIRST_TOUCH_DOC
    nodes = [simple_node("pa", "testbed", 10e9, 1e9, 5e9,
                         [(f"node-{i}", 1, "testbed-1") for i in range(0, 4)],
                         ["physical node pa: node-0..3 share pa-membus"]),
             simple_node("pb", "testbed", 10e9, 1e9, 5e9,
                         [(f"node-{i}", 1, "testbed-1") for i in range(4, 8)],
                         ["physical node pb: node-4..7 share pb-membus"])]
    for n in nodes:
        n["latency"] = FLAT_LATENCY
    return platform("testbed", header, nodes)


def test_sim():
    header = [
        "Platform of the sim/ tests (tests/test_sim_*.c): round figures, so that the tests can",
        "work out the expected times by hand. Not a model of any machine.",
        "Written by platforms/make_platforms.py. Core speed 1 Tf/s (except node s): kernels are",
        "memory bound here.",
    ]
    F = 1e12
    nodes = [
        simple_node("a", "test", 10e9, F, 10e9, [("a-1x", 1, "T-1"), ("a-1y", 1, "T-1")],
                    ["node a: two 1-core containers; one core alone saturates a-membus"]),
        simple_node("b", "test", 10e9, F, 10e9, [("b-1x", 1, "T-1")],
                    ["node b: one 1-core container (to compare a-1x with a rank on another node)"]),
        simple_node("c", "test", 10e9, F, 4e9,
                    [("c-1", 1, "T-1"), ("c-2", 2, "T-2"), ("c-4", 4, "T-4")],
                    ["node c: 4 GB/s per core, 10 GB/s node: 1, 2, 4 cores draw 4, 8, 10 GB/s;",
                     "c-2's Zoltan measured at 1e7 particle-levels/s (partition_rate), its binning at",
                     "1e7 particles/s (binning_rate), its store's permutation at 1e9 B/s (permute_bw),",
                     "its contact search at 1e6 particles/s and 1e7 slots/s (search_rate, search_slot_rate)"]),
        simple_node("s", "test", 10e9, 1e9, 4e9, [("s-4", 4, "T-4")],
                    ["node s: slow cores (1 Gf/s) for compute-bound kernels"]),
        simple_node("d", "test", 10e9, F, 3e9, [("d-dem", 2, "T-2"), ("d-stress", 2, "T-2")],
                    ["node d: DEM container + stressed container, 3 GB/s per core"]),
        simple_node("e", "test", 10e9, F, 3e9, [("e-dem", 2, "T-2"), ("e-stress", 2, "T-2")],
                    ["node e: as d, for a second stress"]),
        simple_node("f", "test", 10e9, F, 3e9, [("f-dem", 2, "T-2"), ("f-stress", 2, "T-2")],
                    ["node f: as d, for a third stress"]),
    ]
    g = cloud_module().node(dict(name="g", cpu="gpu-host", gpu="P100", containers=[
        dict(name="g-gpu", cores=4, label="CN-GPU", gpu=True)]), 0, cloud_module().strict)[0]
    g["bw"], g["flops"] = 10e9, F
    for c in g["containers"]:
        c["props"] = [(k, {"node_type": "test", "core_bw": "5e+09", "launch_latency": "1e-05",
                           "gpu_flops": "1e+12", "gpu_bw": "1e+11", "pcie_bw": "1e+10",
                           "gpu_gather_bw": "1e+10", "llc_bytes": "1e+06"}.get(k, v))
                      for k, v in c["props"]]
    g["doc"] = ["node g: a GPU container: 1 Tf/s, 100 GB/s streamed, 10 GB/s gathered, 1 MB L2, "
                "32 B sectors, PCIe 10 GB/s, 10 us latency"]
    nodes.append(g)
    k = simple_node("k", "test", 10e9, 1e9, 3e9, [("k-dem", 1, "T-1"), ("k-stress", 1, "T-1")],
                    ["node k: k-stress's core is k-dem's (shares_cores_with), 1 Gf/s cores, 3 GB/s per core"])
    k["containers"][1]["props"].append(("shares_cores_with", "k-dem"))
    nodes.append(k)
    nodes.append(simple_node("l", "test", 10e9, F, 2e9, [("l-dem", 2, "T-2"), ("l-stress", 1, "T-1")],
                             ["node l: loaded latency 2x at half the bus used, 3x when full"],
                             curve="0:1,0.5:2,1:3"))
    nodes[2]["containers"][1]["props"] += [("partition_rate", "1e+07"), ("binning_rate", "1e+07"),
                                           ("permute_bw", "1e+09"), ("search_rate", "1e+06"),
                                           ("search_slot_rate", "1e+07")]
    for n in nodes[:-1]:
        n["latency"] = FLAT_LATENCY
    x = simple_node("x", "test", 10e9, F, 1e9, [("x-bad", 1, "T-1")],
                    ["node x: x-bad has a malformed core_bw, for the error-message test"])
    x["containers"][0]["props"] = [(k, "10GBps" if k == "core_bw" else v)
                                   for k, v in x["containers"][0]["props"]]
    nodes.append(x)
    h = simple_node("h", "test", 10e9, 1e9, 3e9, [("h-whole", 1, "T-1"), ("h-half", 1, "T-1")],
                    ["node h: h-half has half its core's time (cpu_share 0.5, a CFS quota per 10 ms), "
                     "h-whole all of it"], curve=FLAT_LATENCY)
    h["containers"][1]["props"] += [("cpu_share", "0.5"), ("cpu_period", "0.01")]
    nodes.append(h)
    return platform("test-sim", header, nodes)


# --- a platform from `demsim probe` (a user's own cluster) ----------------------------------
PROBE_FORMAT = "demsim-probe-1"


def read_hostmap(path):
    """[(container, host, cores)] of a native.hostmap file (libconfig, as scenarios/README.md
    describes it). `demsim run --dry-run` validates the file; this reads its flat entries only."""
    text = re.sub(r"(#|//)[^\n]*", "", open(path).read())
    out = []
    for body in re.findall(r"\{([^{}]*)\}", text):
        kv = dict(re.findall(r'(\w+)\s*[=:]\s*"([^"]*)"', body))
        if "container" in kv and "host" in kv and "cores" in kv:
            out.append((kv["container"], kv["host"], kv["cores"]))
    if not out:
        raise SystemExit(f"make_platforms.py: {path}: no hostmap entries "
                         '({ container = "..."; host = "..."; cores = "..."; })')
    return out


def core_set(cores):
    out = set()
    for part in cores.split(","):
        lo, _, hi = part.strip().partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def probe_node_of(host, nodes):
    """The probed node a host map entry names: by name, short name, or this machine."""
    names = {n["name"]: n for n in nodes}
    short = host.split(".")[0]
    if host in names or short in names:
        return names.get(host) or names[short]
    me = socket.gethostname().split(".")[0]
    if host in ("localhost", "localhost.localdomain") or host.startswith("127.") or short == me:
        if me in names:
            return names[me]
        if len(nodes) == 1:
            return nodes[0]
    raise SystemExit(f"make_platforms.py: host map host '{host}' is not a probed node "
                     f"(probed: {', '.join(names)})")


# Open MPI 4.1's TCP transport sends a message from its eager limit (btl_tcp_eager_limit, 64 KiB)
# by rendezvous: the first fragment waits for the receiver's acknowledgement before the rest goes,
# three crossings of the route.
MPI_EAGER_LIMIT = 65536
MPI_RENDEZVOUS_CROSSINGS = 3
# A route whose latency is a measured MPI one-way time (the stack included) is crossed once by an
# eager message and three times by a rendezvous (sim/netfactor.h reads it as the root zone's
# lat_factor); SMPI's default table (2.01 for small messages, 11.6 from 64 KiB) stands for another
# cluster's stack on top of a wire's latency.
MEASURED_LAT_FACTOR = f"0:1;{MPI_EAGER_LIMIT}:{MPI_RENDEZVOUS_CROSSINGS}"


def probe_network(pairs):
    """NET from the ping-pongs: intra-node pairs give the veth (two per path), inter-node pairs
    the NIC (path: veth, NIC, NIC, veth). Missing kinds keep the estimates of NET. Where any pair
    was measured, the links' latencies are MPI one-way times and their bandwidths MPI's 8 MiB
    rate: the platform then takes SMPI's factors as 1 (MEASURED_LAT_FACTOR, bandwidth factor 1)."""
    def median(xs):
        xs = sorted(xs)
        return xs[len(xs) // 2] if xs else None
    intra = [p for p in pairs if p["same_node"]]
    inter = [p for p in pairs if not p["same_node"]]
    net = dict(NET)
    doc = []
    veth_lat = None
    if intra:
        veth_lat = median([p["latency_s"] for p in intra]) / 2
        bw = median([p["bandwidth_Bps"] for p in intra])
        net["veth_lat"], net["veth_bw"] = f"{veth_lat:.6g}s", f"{bw:.6g}Bps"
        doc.append(f"container links (veth): MEASURED, {len(intra)} intra-node pair(s): one-way latency "
                   f"{2 * veth_lat * 1e6:.3g} us = 2 links, bandwidth {bw / 1e9:.3g} GB/s (MPI ping-pong, 8 MiB).")
    else:
        doc.append("container links (veth): ESTIMATE (no intra-node pair probed): " + net["veth_bw"] + ", " + net["veth_lat"])
    if inter:
        one_way = median([p["latency_s"] for p in inter])
        vl = veth_lat if veth_lat is not None else float(NET["veth_lat"].rstrip("us")) * 1e-6
        nic_lat = max(one_way - 2 * vl, 0.0) / 2
        bw = median([p["bandwidth_Bps"] for p in inter])
        net["nic_lat"], net["nic_bw"] = f"{nic_lat:.6g}s", f"{bw:.6g}Bps"
        doc.append(f"node links (NIC): MEASURED, {len(inter)} inter-node pair(s): one-way latency {one_way * 1e6:.3g} us "
                   f"= 2 veth + 2 NIC links, bandwidth {bw / 1e6:.4g} MB/s (MPI ping-pong, 8 MiB).")
    else:
        doc.append("node links (NIC): ESTIMATE (no inter-node pair probed): " + net["nic_bw"] + ", " + net["nic_lat"])
    if intra or inter:
        net["lat_factor"], net["bw_factor"] = MEASURED_LAT_FACTOR, "0:1"
        doc.append(f"SMPI's factors: latency {MEASURED_LAT_FACTOR} (lat_factor, the root zone's), bandwidth 1 "
                   "(smpi/bw-factor): the links hold measured MPI times, the stack included (SMPI's defaults would "
                   "count a stack again).")
    net["doc"] = doc
    return net


def measured_core_bw(triad_1core, streams_1core, node_bw):
    """One core's bandwidth for the DEM kernels on a measured machine: the lower of bwprobe's
    triad (three streams) and its --streams (kick-drift's six in, three out: as many as the
    kernels keep open), at most the node's; without the streams figure (a probe of before it),
    the triad's. Used by probed platforms and validation/study/hardware.py's calibrated one."""
    return min(triad_1core, streams_1core or triad_1core, node_bw)


def clock_and_lanes(peak, scalar, register_lanes, scalar_over_lanes=None):
    """A probed core's clock and simd_lanes (peak: bwprobe's vector FMA loop's flop/s, scalar: the
    same loop in scalar code, register_lanes: the vector register's FP64 lanes, scalar_over_lanes:
    validation/calibrate_cost --reference 1, the C reference's pair pass over the kernel's on the
    same particles, where measured). Two FMA units do 2 flop a cycle each in scalar code, so the
    clock is scalar / 4. simd_lanes is what the model says it is: how many times longer the DEM's
    scalar code takes than its code in lanes for the same flops. scalar_over_lanes measures that
    directly and is taken where there; the FMA loops' ratio (the lanes the datapath carries: 4 on a
    256-bit one, whatever the register width) bounds it and stands in for it where not (`demsim
    probe`'s platforms). The two agree on a core whose datapath the kernels fill (Zen 4: 4) but not
    on a wider one (Zen 5: 8 against 2.6; the kernels run no faster per cycle there:
    platforms/README.md, simd_lanes). Without the scalar loop (a probe of before it): peak over 2
    FMA units x the register's lanes x 2 flop (too many lanes where a datapath is narrower), no
    lanes."""
    if not scalar:
        return peak / (4.0 * register_lanes), None
    datapath = peak / scalar
    if scalar_over_lanes:
        return scalar / 4.0, min(max(scalar_over_lanes, 1.0), datapath)
    return scalar / 4.0, datapath


def kernel_rate(time_s, flops, traffic, divsqrt, bw, divider, cores=1):
    """The core's flop/s for the DEM kernels from the contact-force kernel's measured time on
    `cores` cores (validation/calibrate_cost's dem_forces_all row: its model flops, DRAM traffic
    and divisions and square roots): the time less the model's memory term (traffic / bw), the
    launch latency and the divider's share (divsqrt / (cores x divider lanes/s)) is its compute;
    the other flops over it, per core. Over the core's clock it is KERNEL_FLOPS_PER_CYCLE as
    measured there (validation/study/hardware.py; demsim probe's contact_kernel_1core)."""
    compute = time_s - traffic / bw - CPU_LAUNCH_LATENCY - divsqrt / (cores * divider)
    if compute <= 0:
        raise ValueError(f"kernel_rate: {time_s:.4g} s leaves no compute time after the memory and divider terms")
    return (flops - divsqrt) / (cores * compute)


def node_bw(n):
    """A probed node's memory bus: the higher of what its cores drew all at once with the triad and
    with kick-drift's streams (streams_allcore_Bps, absent in a probe of before it): the bus carried
    at least that. On the 2-core development VM the streams drew 55.7 GB/s where the triad drew 45.5;
    with the triad's figure the model shared the bus between two ranks' streaming kernels too
    tightly (the apart path's computing predicted 23 % slow, 6 % with the streams' figure:
    validation/compare-real/emulated-probed)."""
    return max(n["triad_allcore_Bps"], n.get("streams_allcore_Bps") or 0.0)


def probed_flops_per_cycle(n, core_bw, clock):
    """KERNEL_FLOPS_PER_CYCLE of a probed node: measured by its probe where it ran the
    contact-force kernel (contact_kernel_1core), else the constant; with a line that says which.
    The time taken is the kernel's median (what a run meets on a shared host; the best is the least
    disturbed repetition) with every core of the node running it at once (all_cores_median_s: the
    containers of a node are busy together in a run, and cores that share a package, its caches or
    a physical core under a VM slow each other beyond the memory bus the model shares), else on
    one core alone. Its memory term is the idle one, so the bus's loaded latency under the other
    cores (a few per cent of such a kernel) is counted in the rate too."""
    k = n.get("contact_kernel_1core")
    if not k or not k.get("median_s") or not n.get("divider_1core"):
        return KERNEL_FLOPS_PER_CYCLE, (f"KERNEL_FLOPS_PER_CYCLE {KERNEL_FLOPS_PER_CYCLE} (the platforms' constant: this "
                                        "probe did not run the contact-force kernel)")
    together = k.get("all_cores_median_s")
    t = together or k["median_s"]
    fpc = kernel_rate(t, k["flops"], k["traffic_B"], k["divsqrt"], core_bw, n["divider_1core"]) / clock
    alone = kernel_rate(k["median_s"], k["flops"], k["traffic_B"], k["divsqrt"], core_bw, n["divider_1core"]) / clock
    how = (f"every one of its {k.get('all_cores')} cores running it at once, median {t * 1e3:.3g} ms (one core alone: "
           f"{k['median_s'] * 1e3:.3g} ms, {alone:.3g} flops per cycle)" if together else
           f"one core, median {t * 1e3:.3g} ms (best {k['best_s'] * 1e3:.3g} ms)")
    return fpc, (f"kernel flops per cycle {fpc:.3g}, MEASURED by this probe: the contact-force kernel, "
                 f"{k['particles']:.0f} particles, {how}, less its memory and divider terms "
                 f"(make_platforms.kernel_rate; the constant: {KERNEL_FLOPS_PER_CYCLE})")


def binning_rate(n):
    """Particles/s of the host's cell binning on one core, from the probe's calibrate_cost run of the
    contact lattice (its binning row: every core at once where measured, else one core alone);
    None in a probe.json of before it."""
    k = n.get("contact_kernel_1core") or {}
    t = k.get("binning_all_cores_median_s") or k.get("binning_median_s")
    return k["binning_particles"] / t if t and k.get("binning_particles") else None


def permute_bw(n):
    """B/s of rows the store's in-place permutation moves on one core, from the probe's calibrate_cost run
    of the contact lattice (its permute row: every core at once where measured, else one core alone);
    None in a probe.json of before it."""
    k = n.get("contact_kernel_1core") or {}
    t = k.get("permute_all_cores_median_s") or k.get("permute_median_s")
    return k["permute_bytes"] / t if t and k.get("permute_bytes") else None


def search_rates(n):
    """(particles/s, slots/s) of the contact search on one core (search_rate, search_slot_rate,
    sim/host.h) and a line saying how, from the probe's search turns (search_1core: calibrate_cost
    --search-turns): the median ratio of each search, over the apart and the contact lattice, to
    the contact-force kernel in the same turn, times the kernel's time the core's rate comes from
    (probed_flops_per_cycle), so that the search and the rate are of the same state of the host.
    Two packings, two unknowns: the apart lattice's search examines every particle's candidates and
    keeps few, the contact lattice's writes about six slots a particle more. (None, line) in a
    probe.json of before it, or where the difference is not positive (a disturbed run)."""
    s, k = n.get("search_1core"), n.get("contact_kernel_1core") or {}
    t = k.get("all_cores_median_s") or k.get("median_s")
    if not s or not t:
        return None, "contact search: not in this probe (charged by sim/cost.c's counts at the core's rate)."
    t_a, t_c = s["apart_over_forces"] * t, s["contact_over_forces"] * t
    per_slot = (t_c - t_a) / (s["contact_slots"] - s["apart_slots"])
    per_particle = (t_a - s["apart_slots"] * per_slot) / s["particles"]
    if not per_slot > 0 or not per_particle > 0:
        return None, (f"contact search: measured but not used (apart {t_a * 1e3:.3g} ms, contact {t_c * 1e3:.3g} ms: "
                      "no positive cost per slot); charged by sim/cost.c's counts.")
    return (1 / per_particle, 1 / per_slot), (
        f"contact search {per_particle * 1e9:.3g} ns a particle (its candidates examined) and {per_slot * 1e9:.3g} ns "
        f"a slot written (search_rate, search_slot_rate): over calibrate_cost's apart and contact lattices of "
        f"{s['particles']:.0f} particles, {s['apart_over_forces']:.3g} and {s['contact_over_forces']:.3g} x the "
        f"contact-force kernel (medians of {s['turns']} turns), times its {t * 1e3:.3g} ms above.")


def probe_node(n, containers):
    """One probed node: its bus, per-core figures and containers [(host id, cores, name, the
    containers whose cores it shares)]."""
    cores = n["cores"]
    bw = node_bw(n)
    core_bw = measured_core_bw(n["triad_1core_Bps"], n.get("streams_1core_Bps"), bw)
    scalar = n.get("scalar_flops_1core")  # absent in a probe.json of before it
    clock, lanes = clock_and_lanes(n["flops_peak_1core"], scalar, n["vector_lanes"])
    fpc, fpc_doc = probed_flops_per_cycle(n, core_bw, clock)
    flops = clock * fpc
    llc = n.get("llc_bytes") or LLC_PER_CORE * cores
    rates = ", ".join(f"{k['cores']} core(s) {k['particle_steps_per_s']:.3g}" for k in n.get("kernel_rate", []))
    stressed = n.get("triad_1core_stressed_Bps")
    divider = n.get("divider_1core")  # absent in a probe.json of before the divider: one flop each
    part = n.get("partition_rate")  # absent (or null: one core, no mpirun) in a probe.json of before it
    binning = binning_rate(n)
    permute = permute_bw(n)
    search, search_doc = search_rates(n)
    doc = [f"node {n['name']}: {n.get('cpu_model', '?')}, {cores} cores; MEASURED by demsim probe:",
           f"memory bus {bw / 1e9:.3g} GB/s (the higher of the triad's bus traffic and kick-drift's streams, all cores"
           f" at once); one core {core_bw / 1e9:.3g} GB/s"
           " (the lower of the triad and kick-drift's streams)"
           + (f", {stressed / 1e9:.3g} GB/s beside {n.get('stress')}" if stressed else "") + ";",
           f"missed gathers {n['gather_1core_Bps'] / 1e9:.3g} GB/s per core; FP64 peak {n['flops_peak_1core'] / 1e9:.3g} GF/s per core"
           f" ({n['vector_lanes']} lanes a register" + (f", {lanes:.3g} a cycle: scalar {scalar / 1e9:.3g} GF/s" if lanes else "")
           + f"), so a {clock / 1e9:.3g} GHz clock and {flops / 1e9:.3g} GF/s for the DEM kernels",
           f"({fpc_doc}); last-level cache {llc / 2**20:.3g} MiB"
           + ("" if n.get("llc_bytes") else " (ESTIMATE: not readable)") + ".",
           (f"divider {divider / 1e9:.3g} G lanes/s per core (divisions and square roots)." if divider else
            "divider: not in this probe (divisions and square roots charged as one flop each)."),
           f"DEM kernels (contact lattice, particle-steps/s): {rates or 'not measured'}.",
           (f"Zoltan RCB {part / 1e6:.3g} M particle-levels/s per core in the solver's call (partition_rate: the best "
            f"of the probe's two-rank runs of {n.get('partition_particles') or 0:.0f} particles)." if part else
            "Zoltan: not in this probe (charged by sim/cost.c's counts at the core's rate)."),
           (f"cell binning {binning / 1e6:.3g} M particles/s per core (binning_rate: calibrate_cost's binning row of "
            "the contact lattice, every core at once)." if binning else
            "binning: not in this probe (charged by sim/cost.c's counts at the core's rate)."),
           (f"the store's permutation {permute / 1e9:.3g} GB/s of moved rows per core (permute_bw: calibrate_cost's "
            "permute row of the contact lattice, every core at once)." if permute else
            "permutation: not in this probe (charged by sim/cost.c's counts at the core's rate)."),
           search_doc,
           "loaded_latency: ESTIMATE (the published Intel MLC curve of openstack.xml; not probed);",
           f"launch_latency {CPU_LAUNCH_LATENCY:g} s: ESTIMATE."] + STORAGE_DOC + FIRST_TOUCH_DOC
    cs = []
    for host, ncores, cname, shares in containers:
        props = container_props(cname, n["name"], "probed", core_bw, latency=CPU_LAUNCH_LATENCY,
                                llc=llc * ncores / cores, gather=n["gather_1core_Bps"], divider=divider, lanes=lanes,
                                partition=part, binning=binning, permute=permute, search=search)
        if shares:
            props.append(("shares_cores_with", ",".join(shares)))
        cs.append(dict(host=host, cores=ncores, props=props))
    return dict(name=n["name"], type="probed", bw=bw, flops=flops, containers=cs, doc=doc,
                latency=LOADED_LATENCY)


def container_link(text):
    """(bandwidth B/s, one-way latency s) of a --container-link BANDWIDTH,LATENCY value, None for
    none; ValueError naming what is expected for a malformed one."""
    if not text:
        return None
    try:
        link = tuple(float(x) for x in text.split(","))
    except ValueError:
        link = ()
    if len(link) != 2 or not link[0] > 0 or not link[1] >= 0:
        raise ValueError(f"--container-link {text}: expected BANDWIDTH,LATENCY (B/s, s), e.g. 125e6,8e-6")
    return link


def cpu_shares(items):
    """{container: (share, period or None)} of --cpu-share CONTAINER=S[,PERIOD] values (PERIOD: the
    quota's period in s, property cpu_period; without it Linux's default); ValueError naming a
    malformed one."""
    out = {}
    for item in items:
        name, _, value = item.partition("=")
        share_s, _, period_s = value.partition(",")
        try:
            share, period = float(share_s), float(period_s) if period_s else None
        except ValueError:
            share, period = -1.0, None
        if not name or not 0 < share <= 1 or (period is not None and not period > 0):
            raise ValueError(f"--cpu-share {item}: expected CONTAINER=S[,PERIOD] with 0 < S <= 1 and PERIOD > 0 "
                             "seconds, e.g. c1=0.5 or c1=0.5,0.01")
        out[name] = (share, period)
    return out


def kernel_tick():
    """s: the scheduler tick of the kernel this runs on, 1/CONFIG_HZ from its build configuration
    (/proc/config.gz, else /boot/config-RELEASE), at which CFS enforces a quota (sim/quota.h); None
    where neither is readable."""
    import gzip
    release = os.uname().release
    for path, opener in (("/proc/config.gz", gzip.open), (f"/boot/config-{release}", open)):
        try:
            with opener(path, "rt") as f:
                for line in f:
                    if line.startswith("CONFIG_HZ="):
                        return 1.0 / int(line.split("=", 1)[1])
        except (OSError, ValueError):
            continue
    return None


def share_props(out_nodes, placed, cpu_shares, quota_efficiency, notes):
    """The properties of the host map's containers with part of their cores' time (from_probe)."""
    for name, (share, period) in (cpu_shares or {}).items():
        hosts = [c for nd in out_nodes for c in nd["containers"] if c["host"] == name and name in {p[0] for p in placed}]
        if not hosts:
            print(f"make_platforms.py: --cpu-share {name}={share}: no container '{name}' in the host map", file=sys.stderr)
            raise SystemExit(2)
        hosts[0]["props"].append(("cpu_share", f"{share:.6g}"))
        if period is not None:
            hosts[0]["props"].append(("cpu_period", f"{period:.6g}"))
        tick = kernel_tick()
        if tick:
            hosts[0]["props"].append(("cpu_tick", f"{tick:.6g}"))
            notes.append(f"{name}'s cpu_tick: CONFIG_HZ of the kernel this platform was written on "
                         f"({os.uname().release}), the emulator's, which enforces the quota at its tick.")
        ratios = (quota_efficiency or {}).get(name)
        if ratios and share < 1:
            eff = min(1.0, statistics.median(ratios))
            hosts[0]["props"].append(("cpu_quota_efficiency", f"{eff:.4g}"))
            notes.append(f"{name}'s cpu_quota_efficiency: MEASURED, the contact-force kernel's CPU time a call free "
                         f"over in a cgroup of its quota, on its core ({len(ratios)} sample(s), one before each round "
                         "of runs, validation/study/calibration.py quota_sample): "
                         + ", ".join(f"{r:.3g}" for r in ratios) + f" -> median {eff:.4g} (at most 1).")


def from_probe(probe_path, hostmap=None, container_link=None, cpu_shares=None, quota_efficiency=None):
    """A platform of the probed cluster: per node N, host N (all its cores) and N-0..N-(c-1) (one
    core each), plus the host map's containers (their names, on their node, with their cores).
    container_link (bandwidth B/s, one-way latency s): each container's link to its node instead of
    the probed one, so that two containers of a node are joined as by that network (two links of
    the bandwidth and half the latency): the platform of an emulated cloud (`demsim --emulate`
    shapes each route to it) on the probed machine's cores. cpu_shares {container: (s, period)}: that
    host map container gets the part s of its cores' time (property cpu_share, and cpu_period when
    period is not None: a CFS quota under the emulator, its schedule in the simulation; and cpu_tick,
    the scheduler tick of the kernel this runs on, the emulator's, which enforces the quota).
    quota_efficiency {container: [ratios]}: the work's rate under that quota over its free rate,
    measured (validation/study/calibration.py quota_sample): their median, at most 1, is the
    property cpu_quota_efficiency (sim/host.h)."""
    pr = json.load(open(probe_path))
    if pr.get("format") != PROBE_FORMAT:
        raise SystemExit(f"make_platforms.py: {probe_path}: not a demsim probe file "
                         f"(format '{pr.get('format')}', expected '{PROBE_FORMAT}')")
    nodes = pr["nodes"]
    extra = {n["name"]: [] for n in nodes}
    placed = [(c, probe_node_of(h, nodes)["name"], core_set(cores)) for c, h, cores in
              (read_hostmap(hostmap) if hostmap else [])]
    for container, node, cores in placed:
        # containers given the same cores time-share them (a noisy neighbour on a rank's cores)
        shares = [c for c, nd, cs in placed if c != container and nd == node and cs & cores]
        extra[node].append((container, len(cores), container, shares))
    out_nodes, notes = [], []
    for n in nodes:
        cs = [(n["name"], n["cores"], f"{n['name']}-all", [])] + \
             [(f"{n['name']}-{i}", 1, f"{n['name']}-1core", []) for i in range(n["cores"])]
        taken = {c[0] for c in cs}
        cs += [c for c in extra[n["name"]] if c[0] not in taken]
        out_nodes.append(probe_node(n, cs))
    share_props(out_nodes, placed, cpu_shares, quota_efficiency, notes)
    net = probe_network(pr.get("pairs", []))
    if container_link:
        bw, lat = container_link
        net["veth_bw"], net["veth_lat"] = f"{bw:.6g}Bps", f"{lat / 2:.6g}s"
        net["doc"].append(f"container links: GIVEN (--container-link), not probed: a route between two containers of a "
                          f"node is {bw / 1e6:.4g} MB/s and {lat * 1e6:.3g} us one way (two links), as an emulated "
                          "network shapes it.")
    header = [f"A cluster probed by `{pr.get('command', 'demsim probe')}` on {pr.get('date', '?')}.",
              "Written by platforms/make_platforms.py --probe from " + os.path.basename(probe_path) + ".",
              f"Nodes: {', '.join(n['name'] for n in nodes)}. Per node N: host N (all cores), N-0.. (one core each)"
              + (", and the host map's containers." if hostmap else "."),
              "Every figure below is MEASURED on that host at that date unless marked ESTIMATE."] + net["doc"] + notes
    return platform("probed", header, out_nodes, net)


# --- several sites joined by a wide-area network (the work-stealing workload) -------------
# Host speed of the sites' nodes, in cycles/s of a core like this machine's (the unit of
# workloads/nqueens under SMPI: smpirun --cfg=smpi/host-speed:THIS_MACHINE_HZ turns the measured
# CPU time of every computation into this machine's cycles, which a host of speed S runs in
# cycles / S seconds). 1 GHz: ESTIMATE, a round reference core; the sweep
# (validation/study/worksteal.py) passes its own.
SITE_HOST_SPEED = 1e9


def site_host(site, node):
    """Host names: the site is everything before the last '-' (workloads/nqueens --sites hosts)."""
    return f"site{site}-node{node}"


def sites(n_sites, nodes_per_site, wan_latency_s, wan_bandwidth_Bps, host_speed=SITE_HOST_SPEED,
          net=NET):
    """n_sites LANs of nodes_per_site single-core hosts joined by a full mesh of WAN links.

    Each site is a zone like the study's network (NET): every node's NIC is a 125 MB/s full-duplex
    link, 25 us to the site's switch (router siteK-switch, the site's gateway). Every pair of
    sites has its own full-duplex WAN link of the given one-way latency and bandwidth, between
    the two switches: the emulated WAN of the Satin measurements (van Nieuwpoort, Kielmann and
    Bal, PPoPP 2001), where each pair of clusters had its own link of set latency and bandwidth
    (up to 100 ms and down to 100 KB/s; the per-pair links are recalled from the paper, not
    checked against its text: ESTIMATE). A full mesh rather than a star through one WAN router:
    two sites' traffic then never shares a wide-area link."""
    if n_sites < 1 or nodes_per_site < 1 or wan_latency_s < 0 or wan_bandwidth_Bps <= 0 or host_speed <= 0:
        raise ValueError("sites(): n_sites and nodes_per_site >= 1, wan_latency_s >= 0, "
                         "wan_bandwidth_Bps and host_speed > 0")
    header = [
        f"{n_sites} site(s) of {nodes_per_site} single-core node(s) joined by a wide-area network.",
        "Written by platforms/make_platforms.py --sites (function sites()).",
        f"Nodes: {host_speed:.6g} cycles/s each (one core; workloads/nqueens/README.md, the unit).",
        "Each site: 1 Gbps Ethernet through one switch, as the study's network (NET): each node's NIC",
        f"is a {net['nic_bw']} full-duplex link, {net['nic_lat']} to the site's switch (router siteK-switch,",
        "the site's gateway).",
        f"WAN: a full mesh, one full-duplex link per pair of sites, {wan_latency_s:g} s one way,",
        f"{wan_bandwidth_Bps:.6g} B/s: the emulated WAN of van Nieuwpoort, Kielmann and Bal (PPoPP",
        "2001), one link of set latency and bandwidth per pair of clusters (up to 100 ms, down to 100 KB/s).",
        "WAN links have the property wide_area = 1: SMPI's latency factor (fitted on a LAN) multiplies",
        "the route's other links only (sim/netfactor.cpp).",
    ]
    out = ["<?xml version='1.0'?>", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">']
    out += comment(header, indent="")
    out += ['<platform version="4.1">', '  <zone id="wan" routing="Full">']
    for k in range(n_sites):
        out += [f'    <zone id="site{k}" routing="Floyd">', f'      <router id="site{k}-switch"/>']
        routes = []
        for j in range(nodes_per_site):
            h = site_host(k, j)
            out += host_xml(h, host_speed, 1, [("site", f"site{k}")], indent="      ")
            out.append(f'      <link id="{h}-nic" bandwidth="{net["nic_bw"]}" latency="{net["nic_lat"]}" '
                       'sharing_policy="SPLITDUPLEX"/>')
            routes.append(f'      <route src="{h}" dst="site{k}-switch">'
                          f'<link_ctn id="{h}-nic" direction="UP"/></route>')
        out += routes + ["    </zone>"]
    links, routes = [], []
    for a in range(n_sites):
        for b in range(a + 1, n_sites):
            links.append(f'    <link id="wan-{a}-{b}" bandwidth="{wan_bandwidth_Bps:.6g}Bps" '
                         f'latency="{wan_latency_s:.6g}s" sharing_policy="SPLITDUPLEX">{WIDE_AREA_PROP}</link>')
            routes.append(f'    <zoneRoute src="site{a}" dst="site{b}" gw_src="site{a}-switch" '
                          f'gw_dst="site{b}-switch"><link_ctn id="wan-{a}-{b}" direction="UP"/></zoneRoute>')
    out += links + routes + ["  </zone>", "</platform>", ""]
    return "\n".join(out)


def write_cloud(ap, a):
    """--cloud FILE --out XML: exit 0 with the platform written, 2 naming what is wrong."""
    if not a.out or a.probe or a.hostmap or a.sites is not None or a.twosite:
        ap.error("--cloud needs --out and goes without --probe, --hostmap, --sites and --twosite")
    cloud = cloud_module()
    try:
        text = cloud.cloud(a.cloud)
    except cloud.CloudError as e:
        print(f"make_platforms.py: {e}", file=sys.stderr)
        raise SystemExit(2)
    with open(a.out, "w") as f:
        f.write(text)
    print(f"make_platforms.py: wrote {a.out}")
    raise SystemExit(0)


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description="Writes demsim's SimGrid platforms. Without options: the committed "
                                 "ones next to this script. With --probe: a platform of a probed cluster. "
                                 "With --sites: sites joined by a WAN.")
    ap.add_argument("--cloud", help="a cloud description (TOML: nodes, containers, network; platforms/README.md, "
                    "'Describing a cloud'; platforms/openstack.toml): its platform, with --out")
    ap.add_argument("--probe", help="probe.json written by `demsim probe`")
    ap.add_argument("--hostmap", help="a native.hostmap file: its containers become hosts of the platform")
    ap.add_argument("--cpu-share", action="append", default=[], metavar="CONTAINER=S[,PERIOD]",
                    help="with --probe and --hostmap: that container gets the part S (0 < S <= 1) of its cores' time "
                         "as a CFS quota per PERIOD seconds (properties cpu_share, cpu_period; without PERIOD "
                         "Linux's default; repeatable)")
    ap.add_argument("--container-link", help="with --probe: BANDWIDTH,LATENCY (B/s, s one way) of the route between "
                    "two containers of a node, instead of the probed one (an emulated network's; e.g. 125e6,8e-6)")
    ap.add_argument("--out", help="the platform file to write (with --probe or --sites)")
    ap.add_argument("--sites", type=int, help="a multi-site platform of this many sites (function sites())")
    ap.add_argument("--nodes-per-site", type=int, default=4, help="with --sites: single-core nodes per site (4)")
    ap.add_argument("--wan-latency", type=float, default=0.01, help="with --sites: WAN one-way latency, s (0.01)")
    ap.add_argument("--wan-bandwidth", type=float, default=1e6, help="with --sites: WAN bandwidth, B/s (1e6)")
    ap.add_argument("--host-speed", type=float, default=SITE_HOST_SPEED,
                    help=f"with --sites: node speed, cycles/s ({SITE_HOST_SPEED:g})")
    ap.add_argument("--hostfile", help="with --sites: also write a hostfile, one line per node")
    ap.add_argument("--twosite", action="store_true",
                    help="two study clouds joined by a WAN (function twosite()), with --out, --wan-latency "
                         f"and --wan-bandwidth (defaults here: {WAN_LATENCY:g} s, {WAN_BANDWIDTH:g} B/s)")
    a = ap.parse_args()
    if a.cloud:
        write_cloud(ap, a)
    if a.twosite:
        if a.sites is not None or a.probe or a.hostmap or not a.out:
            ap.error("--twosite needs --out and goes without --sites, --probe and --hostmap")
        lat = a.wan_latency if "--wan-latency" in sys.argv else WAN_LATENCY
        bw = a.wan_bandwidth if "--wan-bandwidth" in sys.argv else WAN_BANDWIDTH
        if lat < 0 or bw <= 0:
            ap.error("--wan-latency >= 0 and --wan-bandwidth > 0")
        with open(a.out, "w") as f:
            f.write(twosite(lat, bw))
        print(f"make_platforms.py: wrote {a.out}")
        raise SystemExit(0)
    if a.sites is not None:
        if a.probe or a.hostmap or not a.out:
            ap.error("--sites needs --out and goes without --probe and --hostmap")
        try:
            text = sites(a.sites, a.nodes_per_site, a.wan_latency, a.wan_bandwidth, a.host_speed)
        except ValueError as e:
            ap.error(str(e))
        with open(a.out, "w") as f:
            f.write(text)
        if a.hostfile:
            with open(a.hostfile, "w") as f:
                f.write("".join(site_host(k, j) + "\n" for k in range(a.sites) for j in range(a.nodes_per_site)))
        print(f"make_platforms.py: wrote {a.out}")
        raise SystemExit(0)
    if a.probe:
        try:
            link, shares = container_link(a.container_link), cpu_shares(a.cpu_share)
        except ValueError as e:
            ap.error(str(e))
        text = from_probe(a.probe, a.hostmap, link, shares)
        out = a.out or os.path.join(os.path.dirname(os.path.abspath(a.probe)), "platform.xml")
        with open(out, "w") as f:
            f.write(text)
        print(f"make_platforms.py: wrote {out}")
        raise SystemExit(0)
    if a.hostmap or a.out or a.hostfile:
        ap.error("--hostmap and --out go with --probe (or --sites)")
    for name, text in (("openstack.xml", openstack()), ("local.xml", local()),
                       ("testbed.xml", testbed()), ("test-sim.xml", test_sim()), ("twosite.xml", twosite())):
        with open(os.path.join(HERE, name), "w") as f:
            f.write(text)
