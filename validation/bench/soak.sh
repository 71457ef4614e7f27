#!/usr/bin/env bash
# Soak test at the study's size: every case of the study x NOW / RW / RW5 under SMPI with the
# OpenCL kernels, 500,000 particles, 500 steps, a repartition every 50 steps (ten intervals),
# each run TRIES times. One line per run (exit status, crash or not, wall time, peak memory of
# the process, simulated time, repartitions), then the totals. Exit status 1 when any run
# crashed or failed.
#
#   validation/bench/soak.sh                         # 6 cases x 3 policies x 3 tries (about an hour on 2 cores)
#   TRIES=1 STEPS=100 validation/bench/soak.sh case1 case2
#
# Arguments: scenario names under scenarios/ (default: one per case of the study: case1, case2,
# case3, case4-stress5, case5-stress1, case6-ratio50). Environment: TRIES (3), PARTICLES
# (500000), STEPS (500), EVERY (50, steps between repartitions), POLICIES ("NOW RW RW5"),
# DEMSIM_SMPI_BUILD (build/smpi), SOAK_OUT (outputs and logs; default a new temporary folder).
# A crash is a run killed by a signal (smpirun reports "Execution failed with code 134/139")
# or one whose log shows an assertion, an abort or a segmentation fault.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
case ${1:-} in -h|--help) sed -n '2,16p' "$0"; exit 0;; esac
smpi=${DEMSIM_SMPI_BUILD:-$top/build/smpi}
[ -x "$smpi/demsim" ] || { echo "soak.sh: missing $smpi/demsim: build the smpi preset first (README)" >&2; exit 2; }
tries=${TRIES:-3} particles=${PARTICLES:-500000} steps=${STEPS:-500} every=${EVERY:-50}
policies=${POLICIES:-NOW RW RW5}
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(case1 case2 case3 case4-stress5 case5-stress1 case6-ratio50)
for c in "${cases[@]}"; do
  [ -f "$top/scenarios/$c.cfg" ] || { echo "soak.sh: no scenario scenarios/$c.cfg" >&2; exit 2; }
done
out=${SOAK_OUT:-$(mktemp -d)}
mkdir -p "$out"
field() { # summary.json key -> value (4 decimals for a real number), or - when there is none
  /usr/bin/python3 -c "import json,sys; v=json.load(open(sys.argv[1])).get(sys.argv[2], '-')
print('%.4f' % v if isinstance(v, float) else v)" "$1" "$2" 2>/dev/null || echo -
}

echo "# soak.sh $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, commit $(git -C "$top" rev-parse --short HEAD)," \
     "$particles particles, $steps steps, repartition every $every, $tries tries; logs in $out"
printf '%-16s %-4s %3s %4s %-6s %9s %10s %10s %5s\n' scenario pol try rc status wall_s peak_MB sim_s parts
runs=0 crashes=0 failures=0 maxrss=0 total=0
for try in $(seq "$tries"); do
  for c in "${cases[@]}"; do
    for pol in $policies; do
      label=$c-$pol-$try dir=$out/$c-$pol-$try
      rm -rf "$dir"
      rc=0
      /usr/bin/time -f '%e %M' -o "$out/$label.time" "$smpi/demsim" run "$top/scenarios/$c.cfg" \
        --particles "$particles" --steps "$steps" --repartition-every "$every" --policy "$pol" \
        --out "$dir" --quiet >"$out/$label.log" 2>&1 || rc=$?
      read -r wall rss < <(tail -1 "$out/$label.time")
      status=ok
      if grep -qE 'Assertion|Aborted|Segmentation fault|failed with code (134|139|136)|core dumped' "$out/$label.log"; then
        status=CRASH crashes=$((crashes + 1))
      elif [ "$rc" != 0 ]; then
        status=FAIL failures=$((failures + 1))
      fi
      runs=$((runs + 1))
      total=$(echo "$total + $wall" | bc -l)
      [ "$rss" -gt "$maxrss" ] && maxrss=$rss
      printf '%-16s %-4s %3s %4s %-6s %9.1f %10.1f %10s %5s\n' "$c" "$pol" "$try" "$rc" "$status" "$wall" \
        "$(echo "$rss / 1024" | bc -l)" "$(field "$dir/summary.json" sim_time_s)" \
        "$(field "$dir/summary.json" repartitions)"
      [ "$status" = ok ] || tail -3 "$out/$label.log" | sed 's/^/    | /'
    done
  done
done
printf '# %d runs: %d crashes, %d other failures; peak memory %.1f MB; wall %.0f s in all\n' \
  "$runs" "$crashes" "$failures" "$(echo "$maxrss / 1024" | bc -l)" "$total"
[ "$crashes" = 0 ] && [ "$failures" = 0 ]
