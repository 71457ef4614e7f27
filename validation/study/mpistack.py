"""The MPI stack's own cost on an emulated cloud, measured, and the SMPI options that give it to
the model (`compare_real.py --emulate`).

SMPI's defaults model an MPI message as f(size) x the route's latency + size / (g(size) x its
bandwidth), with f and g (smpi/lat-factor, smpi/bw-factor) fitted once on another cluster's MPI
ping-pongs: f = 2.01 for small messages stands for that cluster's software stack. On the emulated
cloud the route's latency is a wire's (demsim-wire or netem holds each packet that long), and the
software stack is this machine's: Open MPI's TCP transport, the namespaces' veths and the wire's
own queue. So the stack is measured here, on the same emulated cloud with every link's latency
set to 0 and no CPU quota (platform-instant.xml: the same containers, cores and rates; a
container's quota is the model's own, sim/quota.c), and given to SMPI
the way SimGrid's calibration guide does, as overheads of the sender and the receiver
(smpi/os, and smpi/ois for a nonblocking send, and smpi/or: half of it each side) with the
latency counted once (the root zone's lat_factor,
which sim/netfactor.cpp reads: SMPI refuses smpi/lat-factor beside its callback); the wire's
latency and rate then come from the platform file as they are. Nothing here is read from the runs compared:
  - the stack: the median over the rounds of the one-way time of messages of 8 B to 1 KiB on the
    instant platform, less SMPI's time for them there (the frames' serialization at the rate);
    above 1 KiB and below the eager limit, the least-squares line through the one-way
    (pingpong) differences (a message of several segments costs more: 30 us at 2 KiB, 60-80 us
    at 4-32 KiB here; the two-way exchange's are larger, both directions' segments then sharing
    the two cores, a contention and not a message's stack);
  - from Open MPI's eager limit (a rendezvous: a header, the receiver's answer, then the data),
    the least-squares line through the one-way differences of 64 KiB to 8 MiB: SMPI charges
    the overheads to its detached sends only (below smpi/send-is-detached-thresh, also 64 KiB),
    so this band goes to the root zone's stack_time instead, which sim/netfactor.cpp adds to the
    route's latency (about 0.18 ms at 64 KiB, 0.4 ms at 8 MiB here). The two-way pattern is left
    out of it: there, from the eager limit, each direction's control messages wait behind the
    other's data in the pair's one TCP connection, a wait and not the stack;
  - f = make_platforms.MEASURED_LAT_FACTOR: 1, and 3 from Open MPI's eager limit (a rendezvous
    crosses the route three times);
  - g = TCP's payload per Ethernet frame over the frame's bytes on the wire (an MSS of MTU less
    the IPv4 and TCP headers with timestamps, over MTU plus the header, FCS, preamble and gap that
    demsim-wire counts, as a 1 Gbit/s Ethernet puts them on its wire).
"""
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "platforms"))
from make_platforms import MEASURED_LAT_FACTOR, MPI_EAGER_LIMIT as EAGER_LIMIT  # noqa: E402
from make_platforms import MPI_RENDEZVOUS_CROSSINGS as RENDEZVOUS_CROSSINGS  # noqa: E402,F401



def _wire_constant(name):
    """A constant of the emulated wire, read where it is stated (solver/run/wireline.h)."""
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    text = open(os.path.join(top, "solver", "run", "wireline.h")).read()
    return int(re.search(rf"#define {name} (\d+)", text).group(1))


MTU = _wire_constant("DEM_WIRE_MTU")
FRAMING = _wire_constant("DEM_WIRE_FRAMING")  # Ethernet header, FCS, preamble, inter-frame gap
IP_TCP_HEADERS = 20 + 32   # IPv4 and TCP with the timestamps option (Linux's default)
STACK_SIZES = (8, 1024)    # the small messages that measure the stack (bytes, both ends included)


def bandwidth_factor():
    return (MTU - IP_TCP_HEADERS) / (MTU + FRAMING)


def platform_of(args, extra):
    """The platform file the runs use: the last --set platform.file=... of extra, else the scenario's."""
    plat = next((e.split("=", 1)[1] for e in reversed(extra) if e.startswith("platform.file=")), None)
    if not plat:
        m = re.search(r'file\s*=\s*"([^"]+)"', open(args.scenario).read())
        plat = m and os.path.join(os.path.dirname(os.path.abspath(args.scenario)), m.group(1))
    return plat


def instant(src, dst):
    """dst: the platform src with every link's latency 0 and no CPU quota (a host's cpu_share and
    cpu_period props dropped): the stack is the software's, and a throttled rank's waits, which the
    model charges by its own quota (sim/quota.c) in the DEM runs, would otherwise be counted in it
    again (at half a core per 10 ms they made the rendezvous band 1 ms at 64 KiB)."""
    text = re.sub(r'(<link\b[^>]*?\blatency=")[^"]*(")', r"\g<1>0\g<2>", open(src).read())
    text = re.sub(r'[ \t]*<prop id="cpu_(?:share|period)" value="[^"]*"/>\n?', "", text)
    with open(dst, "w") as f:
        f.write(text)
    return dst


def overheads(stack):
    """SMPI's "size:base:per-byte;..." for one side of the stack: half of each band's time (a band
    (size, base s, per byte s) applies above its size up to the next one's); nothing from Open
    MPI's eager limit, as SMPI charges no overhead to a send that is not detached (rendezvous()
    gives that band). stack: the bands, or one figure (s) for every message below the limit."""
    bands = [(0, stack, 0.0)] if isinstance(stack, (int, float)) else stack
    return ";".join(f"{size}:{base / 2:.6g}:{per / 2:.6g}" for size, base, per in bands
                    if size < EAGER_LIMIT - 1) + f";{EAGER_LIMIT - 1}:0:0"


def rendezvous(stack):
    """The root zone's stack_time (sim/netfactor.h) for the bands from the eager limit, whole (one
    way: the route's latency is raised by it); None without such a band."""
    bands = [] if isinstance(stack, (int, float)) else [b for b in stack if b[0] >= EAGER_LIMIT - 1]
    return ";".join(f"{size}:{base:.6g}:{per:.6g}" for size, base, per in bands) or None


def with_stack(src, stack, dst=None):
    """dst (default: src's name with -stack): the platform src with SMPI's options for the stack
    (overheads(): its bands, or one figure in s a message; a <config> before its first zone; the
    bands from the eager limit as the root zone's stack_time)."""
    dst = dst or re.sub(r"\.xml$", "", src) + "-stack.xml"
    side = overheads(stack)
    small = stack if isinstance(stack, (int, float)) else stack[0][1]
    config = ("\n  <!-- the MPI stack measured on the emulated cloud (validation/study/mpistack.py): "
              f"{small * 1e6:.1f} us a small message one way -->\n  <config>\n"
              f'    <prop id="smpi/os" value="{side}"/>\n'
              f'    <prop id="smpi/ois" value="{side}"/>\n'
              f'    <prop id="smpi/or" value="{side}"/>\n'
              f'    <prop id="smpi/bw-factor" value="0:{bandwidth_factor():.6g}"/>\n  </config>')
    factor = f'\n    <prop id="lat_factor" value="{MEASURED_LAT_FACTOR}"/>'  # sim/netfactor.h
    if rendezvous(stack):
        factor += f'\n    <prop id="stack_time" value="{rendezvous(stack)}"/>'
    text = open(src).read()
    m, z = re.search(r"<platform\b[^>]*>", text), re.search(r"<zone\b[^>]*>", text)
    if not m or not z:
        raise ValueError(f"{src}: no <platform> or <zone> element")
    with open(dst, "w") as f:
        f.write(text[:m.end()] + config + text[m.end():z.end()] + factor + text[z.end():])
    return dst


def _line(pts):
    """(base, per byte): the least-squares line through [(bytes, s)], None under two sizes."""
    if len({x for x, _ in pts}) < 2:
        return None
    per, base = statistics.linear_regression([x for x, _ in pts], [y for _, y in pts])
    return base, per


def stack_bands(measured, simulated):
    """The stack's one-way time by size, [(0, small, 0), (STACK_SIZES[1], base, per byte),
    (EAGER_LIMIT - 1, base, per byte)]: the median over the small messages (both patterns) of the
    measured time on the instant platform less SMPI's there; above them, up to the eager limit
    and from it, the least-squares line through the one-way (pingpong) differences. The two-way
    exchange's differences of 2-32 KiB are 1.5-2.5 times the one-way ones on the emulated cloud
    (both directions' segments then share the two cores: BENCHMARKS.md, "The emulated wire's
    acknowledgements"); a message's stack is its one-way cost, and the exchange rows show the rest.
    measured, simulated: {(pattern, bytes): row}."""
    lo, hi = STACK_SIZES
    diff = {k: measured[k]["median_s"] - simulated[k]["median_s"] for k in measured if k in simulated}
    bands = [(0, statistics.median(d for k, d in diff.items() if lo <= k[1] <= hi), 0.0)]
    mid = _line([(k[1], d) for k, d in diff.items() if hi < k[1] < EAGER_LIMIT and k[0] == "pingpong"])
    if mid:
        bands.append((hi, *mid))
    big = _line([(k[1], d) for k, d in diff.items() if k[1] >= EAGER_LIMIT and k[0] == "pingpong"])
    if big:
        bands.append((EAGER_LIMIT - 1, *big))
    return bands


def neutral(src, dst):
    """dst: src with SMPI's stack options neutral (no overheads, f = 1, the bandwidth factor above),
    for SMPI's own time on the instant platform."""
    return with_stack(src, 0.0, dst)
