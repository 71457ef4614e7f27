#!/usr/bin/env bash
# Single-process speed and memory of the native build (issue: foundation).
#   validation/bench/bench_single.sh [STEPS]
# (a) scenarios/bench-apart.cfg   : 50,000 particles, diameter 0.99 x spacing (no contacts)
# (b) scenarios/bench-contact.cfg : 50,000 particles, diameter 1.001 x spacing (~6 contacts each)
# (c) memory: the study's 500,000 particles, a few steps, peak RSS per particle
# particle_steps_per_s comes from summary.json (timed steps only, set-up excluded).
# The device is the scenario's (DEMSIM_DEVICE overrides it); when an OpenCL GPU is present, (a)
# and (b) run on it as well (rows -gpu).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
steps=${1:-2000}
demsim=$top/build/native/demsim
[ -x "$demsim" ] || { echo "build the native preset first: cmake --preset native && cmake --build --preset native" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
py=/usr/bin/python3
field() { $py -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
printf '%-22s %12s %14s %14s %12s  %s\n' case particles steps particle-steps/s peak-RSS-MB device
bench() { # $1 = label suffix, then environment assignments for demsim
  local sfx=$1; shift
  for c in apart contact; do
    env "$@" /usr/bin/time -f '%M' -o "$out/$c$sfx.rss" "$demsim" run "$top/scenarios/bench-$c.cfg" --steps "$steps" \
      --out "$out/$c$sfx" --quiet >/dev/null
    printf '%-22s %12s %14s %14.3e %12.1f  %s\n' "bench-$c$sfx" "$(field "$out/$c$sfx/summary.json" particles)" "$steps" \
      "$(field "$out/$c$sfx/summary.json" particle_steps_per_s)" "$(echo "$(cat "$out/$c$sfx.rss") / 1024" | bc -l)" \
      "$(field "$out/$c$sfx/summary.json" device)"
  done
}
bench ""
# a GPU with an OpenCL driver, when there is one: the same benchmarks on it (DEMSIM_DEVICE=gpu)
if [ -z "${DEMSIM_DEVICE:-}" ] && DEMSIM_DEVICE=gpu "$demsim" run "$top/scenarios/bench-contact.cfg" --steps 2 \
     --particles 1000 --out "$out/gpu-probe" --quiet >/dev/null 2>&1; then
  bench "-gpu" DEMSIM_DEVICE=gpu
else
  echo "(no OpenCL GPU here: DEMSIM_DEVICE=gpu found none)"
fi
n=500000
/usr/bin/time -f '%M' -o "$out/mem.rss" "$demsim" run "$top/scenarios/bench-contact.cfg" --particles $n --steps 20 \
  --set output.metrics_every=10 --out "$out/mem" --quiet >/dev/null
kb=$(cat "$out/mem.rss")
printf '%-22s %12s %14s %14.3e %12.1f   (%.0f bytes/particle)\n' "memory-500k" $n 20 \
  "$(field "$out/mem/summary.json" particle_steps_per_s)" "$(echo "$kb / 1024" | bc -l)" "$(echo "$kb * 1024 / $n" | bc -l)"
