#!/usr/bin/env bash
# demsim setup: installs every dependency from Debian packages and builds Zoltan with smpicc.
#
#   ./setup.sh            install dependencies only (idempotent: a second run does nothing new)
#   ./setup.sh run        ... then build the SMPI preset and run the default scenario under NOW and RW
#   ./setup.sh test       ... then build both presets and run the whole test suite
#
# Zoltan for the SMPI build must be compiled with smpicc (a library built against Open MPI
# carries Open MPI's handles). It comes from Debian's own `trilinos` source package, fetched
# through a private apt source list and state directory whose mirror is read from this
# machine's apt configuration, so the system's apt setup is left as it was. The source and
# the built library are cached under .deps/ (or $DEMSIM_DEPS).
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
deps=${DEMSIM_DEPS:-$top/.deps}
mode=${1:-deps}
case "$mode" in deps|run|test) ;; -h|--help) sed -n '2,12p' "$0"; exit 0;;
  *) echo "setup.sh: unknown mode '$mode' (expected: run, test, or nothing)" >&2; exit 2;; esac

sudo_() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# the packages, Zoltan, both builds and the test suite's outputs take about 1.5 GB; a full disk
# shows up late and far away (PoCL's compiler cannot write its kernel cache), so say so first
free_mb=$(df -Pm "$top" | awk 'NR==2 {print $4}')
if [ "${free_mb:-0}" -lt 2048 ]; then
  echo "setup.sh: warning: only ${free_mb} MB free on $(df -P "$top" | awk 'NR==2 {print $6}');" \
       "installing, building and testing need about 1.5 GB" >&2
fi

packages=(build-essential cmake pkg-config ca-certificates dpkg-dev
  libsimgrid-dev  # smpicc, smpirun (it also provides the virtual package "simgrid")
  libopenmpi-dev openmpi-bin libtrilinos-zoltan-dev
  libhdf5-dev
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
  libcunit1-dev libconfig-dev libjansson-dev clang libclang-rt-14-dev
  libnetfilter-queue-dev iptables  # the emulator's route latency where the kernel has no netem (demsim-wire)
  gnuplot-nox python3-h5py python3-matplotlib python3-numpy stress-ng time bc valgrind
  slurm-wlm munge)  # a test Slurm for the sweeps' job arrays: validation/slurm/slurm_local.sh runs its own daemons

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing: ${missing[*]}"
  sudo_ apt-get update -q
  sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# --- Zoltan compiled with smpicc, from Debian's trilinos source package -------------------
zlib=$deps/zoltan-smpi/lib/libzoltan.a
if [ ! -f "$zlib" ]; then
  mkdir -p "$deps/apt/lists/partial" "$deps/src"
  # deb-src entries built from the machine's own apt configuration (deb822 or one-line format)
  srclist=$deps/apt/sources.list
  : > "$srclist"
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] && sed -n 's/^deb \(.*\)$/deb-src \1/p' "$f" >> "$srclist"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk '/^URIs:/{u=$2} /^Suites:/{$1="";s=$0} /^Components:/{$1="";c=$0}
         /^Signed-By:/{k=$2} /^$/{if(u!=""){n=split(s,a," ");for(i=1;i<=n;i++)print "deb-src [signed-by=" k "] " u " " a[i] c; u=""}}
         END{if(u!=""){n=split(s,a," ");for(i=1;i<=n;i++)print "deb-src [signed-by=" k "] " u " " a[i] c}}' "$f" >> "$srclist"
  done
  aptopts=(-o "Dir::Etc::SourceList=$srclist" -o "Dir::Etc::SourceParts=/nonexistent"
           -o "Dir::State::Lists=$deps/apt/lists" -o "Debug::NoLocking=1")
  if ! ls -d "$deps"/src/*/packages/zoltan >/dev/null 2>&1; then
    echo "== fetching Debian's trilinos source package (for Zoltan)"
    apt-get "${aptopts[@]}" update -q
    (cd "$deps/src" && apt-get "${aptopts[@]}" source --download-only trilinos)
    # only Zoltan's own tree, without its 200 MB of tests and docs (none of Debian's patches
    # touches Zoltan); the 160 MB tarball goes once unpacked: a full tree takes 1 GB of disk
    (cd "$deps/src" && tar -xzf trilinos_*.orig.tar.gz --wildcards '*/packages/zoltan/*' \
       --exclude='*/packages/zoltan/test' --exclude='*/packages/zoltan/doc' &&
     rm -f trilinos_*.orig.tar.gz)
  fi
  zsrc=$(ls -d "$deps"/src/*/packages/zoltan | head -1)
  echo "== building Zoltan with smpicc from $zsrc"
  rm -rf "$deps/zoltan-build" && mkdir -p "$deps/zoltan-build"
  (cd "$deps/zoltan-build" &&
   SMPI_PRETEND_CC=1 "$zsrc/configure" CC=smpicc CXX=smpicxx CFLAGS="-O2 -fPIC" \
     --with-mpi-compilers=no --disable-fortran --prefix="$deps/zoltan-smpi" >configure.log 2>&1 &&
   # only the library: Zoltan's test driver (zdrive) does not compile against SMPI's headers
   SMPI_PRETEND_CC=1 make -C src -j"$(nproc)" libzoltan.a >make.log 2>&1 &&
   SMPI_PRETEND_CC=1 make -C src install-libLIBRARIES install-includeHEADERS \
     install-nodist_execincludeHEADERS >install.log 2>&1) ||
    { echo "setup.sh: the Zoltan build failed; see $deps/zoltan-build/*.log" >&2; exit 1; }
fi
echo "== dependencies ready (Zoltan for SMPI: $deps/zoltan-smpi)"

build() { # $1 = preset
  # configured once; a configure that failed (no compiler yet) leaves a cache but no Makefile: redo it
  if [ ! -f "$top/build/$1/Makefile" ]; then
    rm -rf "$top/build/$1/CMakeCache.txt" "$top/build/$1/CMakeFiles"
    if [ "$1" = smpi ]; then
      (cd "$top" && SMPI_PRETEND_CC=1 cmake --preset smpi >/dev/null)
    else
      (cd "$top" && cmake --preset native >/dev/null)
    fi
  fi
  (cd "$top" && cmake --build --preset "$1" -j"$(nproc)")
}

case "$mode" in
  run)
    build smpi
    # the default scenario (the study's case 1, shortened) under NOW and RW, side by side
    exec /usr/bin/python3 "$top/validation/study/compare.py" "$top/scenarios/default.cfg" --policies NOW RW \
      --out "${DEMSIM_OUT:-$top/out/default}";;
  test)
    build smpi; build native
    rc=0
    (cd "$top" && ctest --preset smpi) || rc=1
    (cd "$top" && ctest --preset native) || rc=1
    exit $rc;;
esac
