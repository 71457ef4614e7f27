#!/usr/bin/env bash
# Speed and memory of the simulator itself (issue: the modelled cloud), plus the single-process
# figures (issue: foundation). Every figure is printed with the command that produced it, the
# date and the load average, as BENCHMARKS.md records them.
#   validation/bench/bench_smpi.sh [a] [b] [c] [d]        (default: a b c d)
#   a  8 simulated ranks at 100,000 particles under SMPI, STEPS_A steps (default 500): wall time
#      against the 1-rank native run of the same problem (bench-contact.cfg); target <= 1.15
#   b  64 simulated ranks at 500,000 particles, STEPS_B steps (default 5): peak RSS against the
#      1-rank SMPI run and the 1-rank native run; target <= 1.3. Start-up (wall_s - wall_loop_s)
#      reported too.
#   c  scenarios/case1.cfg (500,000 particles, 4 ranks, openstack.xml), CASE1_STEPS steps
#      (default 1000; 10000 is the full study). Below 10,000 the full run is extrapolated:
#      set-up + loop x 10000 / CASE1_STEPS (stated as such). Target: <= 30 min.
#   d  validation/bench/bench_single.sh (native build, one process): bench-apart / bench-contact
#      particle-steps/s and 500k peak RSS per particle.
# REPEAT=R (environment) repeats a and b R times, interleaved (native, SMPI, native, SMPI, ...):
# the machine is shared, so only ratios of runs made back to back mean much; every run is listed.
# Builds: DEMSIM_SMPI_BUILD (default build/smpi) and DEMSIM_NATIVE_BUILD (default build/native).
# Peak RSS comes from /usr/bin/time (%M, the largest resident set of any process of the run:
# under SMPI all simulated ranks live in the one smpimain process).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
smpi=${DEMSIM_SMPI_BUILD:-$top/build/smpi}
native=${DEMSIM_NATIVE_BUILD:-$top/build/native}
repeat=${REPEAT:-1}
steps_a=${STEPS_A:-500}
steps_b=${STEPS_B:-5}
case1_steps=${CASE1_STEPS:-1000}
parts=${*:-a b c d}
for b in "$smpi/demsim" "$native/demsim"; do
  [ -x "$b" ] || { echo "missing $b: build both presets first (README)" >&2; exit 2; }
done
out=${BENCH_OUT:-$(mktemp -d)}
mkdir -p "$out"
py=/usr/bin/python3

load() { cut -d' ' -f1-3 /proc/loadavg; }
stamp() { date -u '+%Y-%m-%d %H:%M UTC'; }
field() { $py -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }

# A scenario like bench-contact.cfg with `ranks` ranks spread over local-0 and local-1 (the
# command line cannot carry a 64-entry host list).
ranks_cfg() { # ranks file
  $py - "$1" "$2" "$top" <<'EOF'
import re, sys
n, path, top = int(sys.argv[1]), sys.argv[2], sys.argv[3]
src = open(top + "/scenarios/bench-contact.cfg").read()
hosts = ", ".join('"local-%d"' % (i % 2) for i in range(n))
src = re.sub(r"platform = \{.*?\};", 'platform = { file = "%s/platforms/local.xml"; hosts = [%s]; };' % (top, hosts), src)
src = re.sub(r"ranks = 1;", "ranks = %d;" % n, src)
open(path, "w").write(src)
EOF
}

# run LABEL CMD...: runs CMD under /usr/bin/time, prints one line: label, wall, CPU, peak RSS,
# the summary's wall_s / wall_loop_s, and the command; leaves $out/LABEL.json (the summary)
run() {
  local label=$1; shift
  local dir=$out/$label
  rm -rf "$dir"
  local l0; l0=$(load)
  /usr/bin/time -f '%e %U %S %M' -o "$out/$label.time" "$@" --out "$dir" --quiet >"$out/$label.log" 2>&1 ||
    { echo "FAILED: $*" >&2; tail -5 "$out/$label.log" >&2; return 1; }
  read -r wall user sys rss <"$out/$label.time"
  cp "$dir/summary.json" "$out/$label.json"
  printf '%-14s wall %8.2f s  cpu %8.2f s  peak RSS %8.1f MB  in-app wall %8.2f s  loop %8.2f s  load %s  [%s]\n' \
    "$label" "$wall" "$(echo "$user + $sys" | bc -l)" "$(echo "$rss / 1024" | bc -l)" \
    "$(field "$dir/summary.json" wall_s)" "$(field "$dir/summary.json" wall_loop_s)" "$l0" \
    "$(echo "$* --out DIR --quiet" | sed "s|$top/||g")"
  echo "$label $wall $rss $(field "$dir/summary.json" wall_s) $(field "$dir/summary.json" wall_loop_s) $(echo "$user + $sys" | bc -l)" >>"$out/runs.txt"
}

ratio() { # label-numerator label-denominator column (2: wall, 3: rss, 6: CPU) -> min over repeats
  $py - "$out/runs.txt" "$1" "$2" "$3" <<'EOF'
import sys
rows = [l.split() for l in open(sys.argv[1])]
num = [float(r[int(sys.argv[4]) - 1]) for r in rows if r[0].startswith(sys.argv[2] + "#")]
den = [float(r[int(sys.argv[4]) - 1]) for r in rows if r[0].startswith(sys.argv[3] + "#")]
pairs = [a / b for a, b in zip(num, den)]
print("%.3f (pairs: %s; best-of runs: %.3f)" % (min(pairs), " ".join("%.3f" % p for p in pairs), min(num) / min(den)))
EOF
}

echo "# bench_smpi.sh $(stamp), $(nproc) cores, load $(load), commit $(git -C "$top" rev-parse --short HEAD)"
echo "# smpi build: ${smpi#$top/}, native build: ${native#$top/}, outputs in $out"
: >"$out/runs.txt"

if [[ " $parts " == *" a "* ]]; then
  echo "## (a) 8 simulated ranks vs 1 native rank, 100,000 particles, $steps_a steps (target <= 1.15)"
  ranks_cfg 8 "$out/ranks8.cfg"
  for r in $(seq "$repeat"); do
    run "a-native#$r" "$native/demsim" run "$top/scenarios/bench-contact.cfg" --particles 100000 --steps "$steps_a"
    run "a-smpi8#$r" "$smpi/demsim" run "$out/ranks8.cfg" --particles 100000 --steps "$steps_a"
  done
  echo "(a) wall ratio SMPI 8 ranks / native 1 rank: $(ratio a-smpi8 a-native 2)"
  echo "(a) CPU ratio (user + sys; less sensitive to other work on the machine): $(ratio a-smpi8 a-native 6)"
fi

if [[ " $parts " == *" b "* ]]; then
  echo "## (b) 64 simulated ranks vs 1 rank, 500,000 particles, $steps_b steps: peak RSS (target <= 1.3)"
  ranks_cfg 64 "$out/ranks64.cfg"
  for r in $(seq "$repeat"); do
    run "b-native1#$r" "$native/demsim" run "$top/scenarios/bench-contact.cfg" --particles 500000 --steps "$steps_b"
    run "b-smpi1#$r" "$smpi/demsim" run "$top/scenarios/bench-contact.cfg" --particles 500000 --steps "$steps_b"
    run "b-smpi64#$r" "$smpi/demsim" run "$out/ranks64.cfg" --particles 500000 --steps "$steps_b"
  done
  echo "(b) peak RSS 64 ranks / 1 SMPI rank: $(ratio b-smpi64 b-smpi1 3)"
  echo "(b) peak RSS 64 ranks / 1 native rank: $(ratio b-smpi64 b-native1 3)"
  echo "(b) start-up (in-app wall_s - wall_loop_s) and total wall: see the lines above"
fi

if [[ " $parts " == *" c "* ]]; then
  echo "## (c) case1.cfg, 500,000 particles, 4 ranks, $case1_steps of 10,000 steps (target <= 30 min)"
  run "c-case1#1" "$smpi/demsim" run "$top/scenarios/case1.cfg" --steps "$case1_steps"
  $py - "$out/c-case1#1.json" "$out/c-case1#1.time" "$case1_steps" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1])); wall = float(open(sys.argv[2]).read().split()[0]); n = int(sys.argv[3])
setup = wall - s["wall_loop_s"]
full = setup + s["wall_loop_s"] * 10000 / n
kind = "measured" if n >= 10000 else "extrapolated from %d steps: set-up %.0f s + loop %.0f s x %g" % (
    n, setup, s["wall_loop_s"], 10000 / n)
print("(c) case1 full scale: %.0f s = %.1f min (%s)" % (full, full / 60, kind))
EOF
fi

if [[ " $parts " == *" d "* ]]; then
  echo "## (d) single process (native build): validation/bench/bench_single.sh, load $(load)"
  "$top/validation/bench/bench_single.sh"
fi
echo "# done $(stamp), load $(load)"
