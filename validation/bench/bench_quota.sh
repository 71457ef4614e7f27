#!/usr/bin/env bash
# What a CPU quota costs the work itself: one rank alone in container c1 of
# scenarios/emulated/network-pair.cfg (no ghost exchange, the other core idle), on an emulated cloud,
# at a whole core and at half a core per 10 ms (a CFS quota), interleaved pairs.
#   sudo validation/bench/bench_quota.sh [PAIRS]        (3 by default; root: demsim run --emulate)
# The platforms are the committed comparisons' (validation/compare-real/emulated-probed/1 and
# emulated-half/1): the emulator takes the container's cores and quota from them. Per run: the
# rank's load (summary.json per_rank load_s) and c1's CPU time (the emulator's report, its
# cpuacct cgroup). The model's quota gives a load ratio of 1 / share = 2 and a CPU time ratio of 1;
# the ratios of each pair and their median are printed.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
pairs=${1:-3}
demsim=$top/build/native/demsim
[ -x "$demsim" ] || { echo "build the native preset first: cmake --preset native && cmake --build --preset native" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench_quota.sh: needs root (demsim run --emulate)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() { # $1 = whole | half, $2 = pair: prints "load cpu"
  local plat=$top/validation/compare-real/emulated-probed/1/platform.xml d=$out/$1-$2
  [ "$1" = half ] && plat=$top/validation/compare-real/emulated-half/1/platform.xml
  "$demsim" run "$top/scenarios/emulated/network-pair.cfg" --policy NOW --emulate --set problem.diameter_ratio=1.001 \
    --particles 250000 --steps 100 --ranks 1 --set platform.hosts=c1 --set "platform.file=$plat" --out "$d" --quiet \
    > "$d.log" 2>&1
  /usr/bin/python3 - "$d/summary.json" "$d.log" <<'PY'
import json, re, sys
load = json.load(open(sys.argv[1]))["per_rank"][0]["load_s"]
cpu = re.search(r"^emulated cloud: c1 .*CPU time ([0-9.]+) s", open(sys.argv[2]).read(), re.M)
print(load, cpu.group(1) if cpu else "nan")
PY
}
printf '%-5s %10s %10s %10s %10s %12s %12s\n' pair load-whole load-half cpu-whole cpu-half load-ratio cpu-ratio
ratios=()
for p in $(seq 1 "$pairs"); do
  first=whole second=half
  [ $((p % 2)) = 0 ] && first=half second=whole
  declare -A r
  r[$first]=$(run $first "$p")
  r[$second]=$(run $second "$p")
  read -r lw cw <<< "${r[whole]}"
  read -r lh ch <<< "${r[half]}"
  lr=$(echo "$lh / $lw" | bc -l) cr=$(echo "$ch / $cw" | bc -l)
  printf '%-5s %10.2f %10.2f %10.2f %10.2f %12.2f %12.2f\n' "$p" "$lw" "$lh" "$cw" "$ch" "$lr" "$cr"
  ratios+=("$lr $cr")
done
printf '%s\n' "${ratios[@]}" | /usr/bin/python3 -c "
import statistics, sys
r = [tuple(map(float, l.split())) for l in sys.stdin if l.strip()]
print('median: load ratio %.2f (model 2.00), CPU time ratio %.2f (model 1.00); spread %.2f-%.2f and %.2f-%.2f' % (
    statistics.median(x for x, _ in r), statistics.median(y for _, y in r), min(x for x, _ in r), max(x for x, _ in r),
    min(y for _, y in r), max(y for _, y in r)))"
