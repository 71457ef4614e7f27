#!/usr/bin/env bash
# valgrind memcheck on a 1-rank run of the native build: no definite leak and no memory error
# outside the third-party code listed in tests/valgrind.supp.
#   validation/bench/memcheck.sh [opencl|reference]    (default: both; the OpenCL one takes minutes)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
demsim=$top/build/native/demsim
[ -x "$demsim" ] || { echo "build the native preset first" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
rc=0
for backend in ${1:-reference opencl}; do
  if valgrind --num-callers=40 --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=9 \
       --suppressions="$top/tests/valgrind.supp" "$demsim" run "$top/scenarios/bench-contact.cfg" \
       --particles 500 --steps 10 --backend "$backend" --quiet --out "$out/$backend" >"$out/$backend.log" 2>&1; then
    echo "memcheck $backend: $(grep -E 'definitely lost:' "$out/$backend.log" | sed 's/^==[0-9]*== *//'), no errors"
  else
    echo "memcheck $backend: FAILED"; grep -E 'definitely lost|ERROR SUMMARY|Invalid' "$out/$backend.log" | head; rc=1
  fi
done
exit $rc
