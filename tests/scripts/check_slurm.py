#!/usr/bin/python3
"""validation/study/sweep.py --submit on a real Slurm, end to end (CTest validation_slurm_sweep).

    tests/scripts/check_slurm.py --demsim build/smpi/demsim --out DIR

Skipped (exit 77) unless run as root with Slurm and munge installed (./setup.sh installs slurm-wlm
and munge). Brings up a single-node Slurm with validation/slurm/slurm_local.sh in a temporary folder
on free ports, then runs sweep.py --submit over case 1 x {NOW, RW} x {RCB, HSFC} at 500 particles
and 20 steps: a 4-task job array. Checks that
  - sweep.py ends well and says it submitted one job of 4 array tasks;
  - each run's task row (task.json) names that job, this node and its own task, the four tasks
    0-3 each once, task i the batch's i-th run, and Slurm wrote each task's output file;
  - the CSV has the 4 runs, each ended well at 500 particles and 20 steps, its simulated time that
    of its summary.json, and equals, wall time apart, the CSV of the same sweep run here;
  - --collect afterwards writes the same CSV again;
  - after slurm_local.sh down, its folder is gone and none of its daemons or job steps is alive.
Slurm is taken down on every way out (an error, SIGTERM, SIGINT, SIGHUP); a cluster that a killed
earlier check left (its folder is noted in DIR/cluster) is taken down first. About 20 s.
"""
import csv
import ctypes
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checking  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SLURM_LOCAL = os.path.join(TOP, "validation", "slurm", "slurm_local.sh")
SWEEP = os.path.join(TOP, "validation", "study", "sweep.py")
TOOLS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "sinfo", "scancel")
POLICIES, PARTITIONERS = ["NOW", "RW"], ["RCB", "HSFC"]
PARTICLES, STEPS = 500, 20
WHO = "check_slurm.py"


def free_port_pair():
    """A port N with N and N+1 free on this machine (slurmctld's and slurmd's)."""
    for _ in range(100):
        n = random.randrange(20000, 60000)
        try:
            for p in (n, n + 1):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", p))
            return n
        except OSError:
            continue
    raise RuntimeError("no two free consecutive ports found")


def slurm_local(cmd, cluster, port=None):
    """slurm_local.sh CMD --dir CLUSTER [--port N]; the finished process."""
    args = [SLURM_LOCAL, cmd, "--dir", cluster] + (["--port", str(port)] if port else [])
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)


def take_down(parent):
    """slurm_local.sh down of the cluster in parent/slurm, then parent removed; what went wrong."""
    errors = []
    if os.path.isdir(os.path.join(parent, "slurm")):
        p = slurm_local("down", os.path.join(parent, "slurm"))
        if p.returncode:
            errors.append(f"slurm_local.sh down exited with {p.returncode}: {p.stdout.strip()}")
    shutil.rmtree(parent, ignore_errors=True)
    return errors


def alive(pid):
    """Whether the process lives (a zombie does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def cluster_processes(cluster):
    """The pids of the cluster's daemons (their pid files) and of its job steps (slurmstepd whose
    environment names its slurm.conf)."""
    pids = []
    for name in ("munged", "slurmctld", "slurmd"):
        try:
            with open(os.path.join(cluster, f"{name}.pid")) as f:
                pids.append(int(f.read().strip()))
        except (OSError, ValueError):
            pass
    conf = f"SLURM_CONF={os.path.join(cluster, 'slurm.conf')}".encode()
    for d in os.listdir("/proc"):
        try:
            with open(f"/proc/{d}/comm") as f:
                if f.read().strip() != "slurmstepd":
                    continue
            with open(f"/proc/{d}/environ", "rb") as f:
                if conf in f.read().split(b"\0"):
                    pids.append(int(d))
        except OSError:
            continue
    return pids


def die_with_parent():
    """In the child: SIGKILL when this check dies, even by SIGKILL (a CTest timeout), so that no
    sweep.py is left waiting on a cluster the next check takes down (prctl PR_SET_PDEATHSIG)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)


def sweep(demsim, out, more, env, timeout=300):
    """sweep.py over case 1 x POLICIES x PARTITIONERS at the check's size; (exit status, output)."""
    cmd = [sys.executable, SWEEP, os.path.join(TOP, "scenarios", "case1.cfg"), "--demsim", demsim, "--out", out,
           "--policies"] + POLICIES + ["--partitioners"] + PARTITIONERS + more + [
           "--", "--particles", str(PARTICLES), "--steps", str(STEPS), "--repartition-every", "10"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                         preexec_fn=die_with_parent)
    try:
        text = p.communicate(timeout=timeout)[0]
    finally:
        if p.poll() is None:  # interrupted: sweep.py must not outlive the cluster it waits on
            p.kill()
            p.wait()
    return p.returncode, text


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def check_tasks(check, out, job, rows):
    """The task rows: job, node, task i = the batch's i-th run, each task once, Slurm's output."""
    with open(os.path.join(out, "slurm", "sweep.json")) as f:
        batch = json.load(f)
    check(batch["job"] == job, f"the batch records job {batch['job']}, sweep.py said {job}")
    check(len(batch["runs"]) == 4, f"the batch holds {len(batch['runs'])} runs, expected 4")
    tasks = []
    for i, spec in enumerate(batch["runs"]):
        name = f"case1-{spec['policy']}-{spec['partitioner']}"
        path = os.path.join(out, name, "task.json")
        if not check(os.path.exists(path), f"{path}: no task row"):
            continue
        with open(path) as f:
            t = json.load(f)
        s = t.get("slurm", {})
        tasks.append(s.get("task"))
        check(s.get("job") == job, f"{name}: task row of job {s.get('job')}, expected {job}")
        check(s.get("task") == i, f"{name}: made by task {s.get('task')}, expected {i} (its place in the batch)")
        check(s.get("node") == socket.gethostname().split(".")[0], f"{name}: ran on {s.get('node')}, not this node")
        check(t.get("status") == 0, f"{name}: task status {t.get('status')}")
        check(os.path.exists(os.path.join(out, "slurm", f"sweep-{job}_{i}.out")), f"no Slurm output sweep-{job}_{i}.out")
        csv_row = [r for r in rows if r["policy"] == spec["policy"] and r["partitioner"] == spec["partitioner"]]
        check(len(csv_row) == 1 and float(csv_row[0]["wall_s"]) == t.get("wall_s"),
              f"{name}: the CSV's wall time is not the task's ({t.get('wall_s')})")
    check(sorted(tasks) == [0, 1, 2, 3], f"tasks {sorted(tasks)}, expected 0, 1, 2, 3 once each")


def check_rows(check, out, rows):
    """The CSV of the Slurm sweep: 4 runs that ended well at the check's size, each its summary's time."""
    check(len(rows) == 4, f"sweep.csv has {len(rows)} rows, expected 4")
    check(sorted((r["policy"], r["partitioner"]) for r in rows) ==
          sorted((p, q) for p in POLICIES for q in PARTITIONERS), "sweep.csv: not the 4 policy x partitioner runs")
    for r in rows:
        name = f"case1-{r['policy']}-{r['partitioner']}"
        check(r["status"] == "0", f"{name}: status {r['status']}")
        check(r["particles"] == str(PARTICLES) and r["steps"] == str(STEPS),
              f"{name}: {r['particles']} particles, {r['steps']} steps, expected {PARTICLES} and {STEPS}")
        with open(os.path.join(out, name, "summary.json")) as f:
            s = json.load(f)
        check(float(r["sim_time_s"]) == s["sim_time_s"] and s["sim_time_s"] > 0,
              f"{name}: CSV time {r['sim_time_s']}, summary's {s['sim_time_s']}")


def same_but_wall(a, b):
    """Whether two CSVs' rows agree but for the wall time."""
    strip = lambda rows: [{k: v for k, v in r.items() if k != "wall_s"} for r in rows]
    return strip(a) == strip(b)


def run_checks(check, a, cluster, env):
    """The sweep on Slurm, its rows against a local sweep's, --collect; the cluster's processes."""
    out = os.path.join(a.out, "slurm-sweep")
    shutil.rmtree(out, ignore_errors=True)
    rc, text = sweep(a.demsim, out, ["--submit"], env)
    print(text[-3000:])
    m = re.search(r"submitted \S+: job (\d+), (\d+) array tasks", text)
    if not check(rc == 0 and m, f"sweep.py --submit exited with {rc} or did not say what it submitted"):
        return
    check(m.group(2) == "4", f"{m.group(2)} array tasks, expected 4")
    rows = read_csv(os.path.join(out, "sweep.csv"))
    check_rows(check, out, rows)
    check_tasks(check, out, m.group(1), rows)
    local = os.path.join(a.out, "local-sweep")
    shutil.rmtree(local, ignore_errors=True)
    rc, text = sweep(a.demsim, local, ["-j", "2"], env)
    if check(rc == 0, f"the local sweep exited with {rc}:\n{text[-2000:]}"):
        check(same_but_wall(rows, read_csv(os.path.join(local, "sweep.csv"))),
              "the Slurm sweep's CSV differs from the local one's (wall time apart)")
    rc, text = sweep(a.demsim, out, ["--collect"], env)
    check(rc == 0 and read_csv(os.path.join(out, "sweep.csv")) == rows,
          f"--collect exited with {rc} or wrote another CSV:\n{text[-2000:]}")


def stop(signum, frame):
    raise SystemExit(f"{WHO}: signal {signum}: taking Slurm down")


def main():
    a = checking.args(__doc__)
    missing = [t for t in TOOLS if not shutil.which(t)]
    if os.geteuid() != 0 or missing:
        print(f"{WHO}: skipped: " + ("not root" if os.geteuid() else f"not installed: {', '.join(missing)} "
              "(apt-get install slurm-wlm munge; ./setup.sh installs them)"))
        return 77
    note = os.path.join(a.out, "cluster")
    if os.path.exists(note):  # a cluster left by a killed earlier check
        with open(note) as f:
            errors = take_down(f.read().strip())
        if errors:
            return checking.fail_each(WHO, errors)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    parent = tempfile.mkdtemp(prefix="demsim-slurm-check-")
    os.chmod(parent, 0o755)  # munged serves its socket only below folders searchable by all
    with open(note, "w") as f:
        f.write(parent)
    cluster = os.path.join(parent, "slurm")
    check = checking.Checks(WHO)
    pids = []
    try:
        up = slurm_local("up", cluster, free_port_pair())
        print(up.stdout.strip())
        if check(up.returncode == 0, f"slurm_local.sh up exited with {up.returncode}"):
            pids = cluster_processes(cluster)
            check(len(pids) == 3, f"{len(pids)} daemons after up (pid files), expected munged, slurmctld, slurmd")
            env = dict(os.environ, SLURM_CONF=os.path.join(cluster, "slurm.conf"))
            run_checks(check, a, cluster, env)
    finally:
        for e in take_down(parent):
            check(False, e)
        os.remove(note)
    check(not os.path.exists(parent), f"{parent} is still there after down")
    left = [p for p in set(pids + cluster_processes(cluster)) if alive(p)]
    check(not left, f"processes of the cluster alive after down: {left}")
    return checking.tally(WHO, check.failures, "ok: a 4-task array on Slurm, collected as a local sweep")


if __name__ == "__main__":
    sys.exit(main())
