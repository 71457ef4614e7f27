#!/usr/bin/env bash
# A real single-node Slurm on this machine, for trying the sweeps' Slurm path (sweep.py --submit,
# run_validation.py --submit) and for its CTest (validation_slurm_sweep); as root, Debian 12.
#
#   validation/slurm/slurm_local.sh up     [--dir DIR] [--port N]   start it; prints `export SLURM_CONF=...`
#   validation/slurm/slurm_local.sh status [--dir DIR]              exit 0 when it answers, 1 when not
#   validation/slurm/slurm_local.sh down   [--dir DIR]              stop it and remove DIR
#   validation/slurm/slurm_local.sh install                         apt-get install slurm-wlm munge
#
# Everything lives in DIR (default /tmp/demsim-slurm, or $DEMSIM_SLURM_DIR): the munge key and
# socket, slurm.conf, the controller's state, slurmd's spool, the logs and the pid files. Nothing
# of the system's is used or changed: its own munged on its own socket (slurm.conf's AuthInfo), its
# own ports (slurmctld N, slurmd N+1; default 16817, away from a system Slurm's 6817), no
# systemd unit, no file under /etc. The node is this host (its short name, at 127.0.0.1) with its
# real core count, in one partition `demsim`; select/cons_tres by core, so a 1-CPU task takes one core.
#
# up is idempotent: a cluster in DIR that answers is kept; a stale one (a daemon gone) is taken
# down first. down is idempotent and leaves nothing: it cancels the jobs, stops slurmd,
# slurmctld and munged (by their pid files, each checked to be this DIR's), then any slurmstepd
# of this cluster still alive with its job's processes, and removes DIR (only a DIR that up made:
# it holds the file .demsim-slurm). On a machine whose init does not reap orphans, the job steps
# that ended stay as zombie entries until it does; they hold no resource.
set -euo pipefail

usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "slurm_local.sh: $*" >&2; exit 2; }

cmd=${1:-}
[ -n "$cmd" ] || { usage >&2; exit 2; }
shift
dir=${DEMSIM_SLURM_DIR:-/tmp/demsim-slurm}
port=16817
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) [ $# -ge 2 ] || die "--dir: expected a directory"; dir=$2; shift 2;;
    --port) [ $# -ge 2 ] && [[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -ge 1024 ] && [ "$2" -le 65534 ] ||
              die "--port: expected a port number from 1024 to 65534 (slurmctld's; slurmd takes the next)"
            port=$2; shift 2;;
    -h|--help) usage; exit 0;;
    *) die "unknown argument '$1' (expected --dir DIR or --port N; --help)";;
  esac
done
case "$dir" in /*) ;; *) dir=$(pwd)/$dir;; esac
conf=$dir/slurm.conf
marker=$dir/.demsim-slurm
export SLURM_CONF=$conf
host=$(hostname -s)

need_tools() {
  [ "$(id -u)" = 0 ] || die "needs root (SlurmUser and SlurmdUser are root)"
  local t missing=()
  for t in munged slurmctld slurmd sbatch squeue scontrol sinfo scancel; do
    command -v "$t" >/dev/null || missing+=("$t")
  done
  [ ${#missing[@]} -eq 0 ] || die "not installed: ${missing[*]} (apt-get install -y slurm-wlm munge, or: $0 install)"
}

# pid of daemon NAME from its pid file, when that process is alive and is this DIR's
pid_of() {
  local f=$1 p
  [ -f "$f" ] || return 1
  p=$(cat "$f" 2>/dev/null) || return 1
  [[ "$p" =~ ^[0-9]+$ ]] && [ -r "/proc/$p/cmdline" ] || return 1
  [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ] || return 1
  tr '\0' ' ' < "/proc/$p/cmdline" | grep -qF "$dir/" || return 1
  echo "$p"
}

# SIGTERM, up to 10 s, then SIGKILL
stop_pid() {
  local p=$1 i
  kill -TERM "$p" 2>/dev/null || return 0
  for i in $(seq 50); do
    { [ -d "/proc/$p" ] && [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ]; } || return 0
    sleep 0.2
  done
  kill -KILL "$p" 2>/dev/null || true
}

answers() {
  pid_of "$dir/munged.pid" >/dev/null && pid_of "$dir/slurmctld.pid" >/dev/null &&
    pid_of "$dir/slurmd.pid" >/dev/null && scontrol ping 2>/dev/null | grep -q "is UP"
}

# the processes of a tree, children first (from /proc's parent links)
tree_of() {
  local p=$1 c
  for c in $(awk -v p="$p" '$4 == p {print $1}' /proc/[0-9]*/stat 2>/dev/null); do tree_of "$c"; done
  echo "$p"
}

# slurmstepd processes of this cluster (their environment names its slurm.conf)
stepds() {
  local p
  for p in $(pgrep -x slurmstepd || true); do
    tr '\0' '\n' 2>/dev/null < "/proc/$p/environ" | grep -qxF "SLURM_CONF=$conf" && echo "$p"
  done
  return 0
}

write_conf() {
  local cpus
  cpus=$(nproc)
  cat > "$conf" <<EOF
# Written by validation/slurm/slurm_local.sh: a single-node Slurm in $dir.
ClusterName=demsim
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=demsim Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

port_free() {
  ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# a daemon did not start: the end of its log, everything down, exit 2
failed() {
  tail -5 "$dir/log/$1.log" >&2 2>/dev/null || true
  down
  die "$1 did not start (the end of its log above)"
}

# munged serves its socket only where every folder above it is searchable by all
check_parents() {
  local d
  d=$(dirname "$dir")
  while [ "$d" != / ]; do
    [ -d "$d" ] || { d=$(dirname "$d"); continue; }
    [ "$(( 0$(stat -c %a "$d") & 01 ))" = 1 ] ||
      die "$d is not searchable by all (mode $(stat -c %a "$d")), as munged needs above its socket: chmod o+x it, or another --dir"
    d=$(dirname "$d")
  done
}

up() {
  need_tools
  if answers; then
    echo "slurm_local.sh: already up in $dir" >&2
    echo "export SLURM_CONF=$conf"
    return 0
  fi
  [ ! -e "$dir" ] || [ -f "$marker" ] || die "$dir exists and is not one of this script's (no .demsim-slurm): give another --dir"
  [ ! -e "$dir" ] || down
  check_parents
  port_free "$port" && port_free $((port + 1)) ||
    die "port $port or $((port + 1)) is in use: give another --port"
  mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
  touch "$marker"
  # munged wants its socket's directory searchable by all, its key readable by root only
  chmod 755 "$dir" "$dir/munge"
  (umask 077 && head -c 1024 /dev/urandom > "$dir/munge.key")
  munged --key-file="$dir/munge.key" --socket="$dir/munge/munge.socket" --pid-file="$dir/munged.pid" \
         --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" || failed munged
  write_conf
  slurmctld -f "$conf" || failed slurmctld
  slurmd -f "$conf" || failed slurmd
  local i state=""
  for i in $(seq 150); do  # up to 30 s for the node to register
    state=$(sinfo -h -n "$host" -o %t 2>/dev/null || true)
    [ "$state" = idle ] && break
    sleep 0.2
  done
  if [ "$state" != idle ]; then
    tail -5 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
    down
    die "node $host not idle after 30 s (state '${state:-none}'); logs above"
  fi
  echo "slurm_local.sh: up in $dir: node $host, $(nproc) CPUs, partition demsim, ports $port/$((port + 1))" >&2
  echo "export SLURM_CONF=$conf"
}

down() {
  if [ ! -e "$dir" ]; then
    echo "slurm_local.sh: nothing in $dir" >&2
    return 0
  fi
  [ -f "$marker" ] || die "$dir is not one of this script's (no .demsim-slurm): left as it is"
  local p i jobs
  if pid_of "$dir/slurmctld.pid" >/dev/null; then
    jobs=$(squeue -h -o %A 2>/dev/null || true)
    if [ -n "$jobs" ]; then
      # shellcheck disable=SC2086
      scancel $jobs 2>/dev/null || true
      for i in $(seq 50); do [ -z "$(squeue -h -o %A 2>/dev/null)" ] && break; sleep 0.2; done
    fi
  fi
  for f in slurmd slurmctld munged; do
    p=$(pid_of "$dir/$f.pid") && stop_pid "$p"
  done
  for p in $(stepds); do  # a job step that outlived its slurmd: the step and its job's processes
    for i in $(tree_of "$p"); do kill -KILL "$i" 2>/dev/null || true; done
  done
  rm -rf "$dir"
  echo "slurm_local.sh: down, $dir removed" >&2
}

status() {
  if answers; then
    echo "slurm_local.sh: up in $dir (SLURM_CONF=$conf)"
    sinfo
    squeue
    return 0
  fi
  echo "slurm_local.sh: not up in $dir"
  return 1
}

case "$cmd" in
  up) up;;
  down) [ "$(id -u)" = 0 ] || die "needs root (the daemons are root's)"; down;;
  status) status;;
  install) [ "$(id -u)" = 0 ] || die "needs root (apt-get)"
           DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends slurm-wlm munge;;
  -h|--help|help) usage;;
  *) die "unknown command '$cmd' (expected up, down, status or install; --help)";;
esac
