/* The containers of an emulated cloud: namespaces, links, shaping, cgroups, and their teardown
 * (see run/containers.h). Commands are argument vectors run by fork/exec: every word is a name or
 * a number made here, never a string from a scenario. */
#define _GNU_SOURCE
#include "run/containers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "scenario/scenario.h"

#define CPUSET_ROOT "/sys/fs/cgroup/cpuset"
#define CPU_ROOT "/sys/fs/cgroup/cpu"
#define CPUACCT_ROOT "/sys/fs/cgroup/cpuacct"
#define MAX_WORDS 40

static pid_t spawn(char *const *args, int quiet, int out_fd)
{
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    if (out_fd >= 0) dup2(out_fd, 1);
    else if (quiet && null >= 0) dup2(null, 1);
    if (quiet && null >= 0) dup2(null, 2);
    execvp(args[0], args);
    _exit(127);
  }
  return pid;
}

static int wait_status(pid_t pid)
{
  int status = 0;
  if (pid < 0) return 127;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 127;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int dem_cloud_exec(char *const *args, int quiet) { return wait_status(spawn(args, quiet, -1)); }

int dem_cloud_capture(char *const *args, char *out, size_t len)
{
  int fd[2];
  if (pipe(fd)) return 127;
  pid_t pid = spawn(args, 0, fd[1]);
  close(fd[1]);
  size_t n = 0;
  ssize_t got;
  char sink[4096];
  while ((got = read(fd[0], n + 1 < len ? out + n : sink, n + 1 < len ? len - 1 - n : sizeof sink)) != 0) {
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) break;
    if (n + 1 < len) n += (size_t)got;
  }
  close(fd[0]);
  if (len) out[n] = '\0';
  return wait_status(pid);
}

/* The program `name` beside this one (build/native/demsim-routes, ...): 0, or -1 when it is not there. */
static int beside_self(const char *name, char *tool, size_t len)
{
  ssize_t got = readlink("/proc/self/exe", tool, len - 1);
  if (got <= 0) return -1;
  tool[got] = '\0';
  char *slash = strrchr(tool, '/');
  snprintf(slash ? slash + 1 : tool, len - (size_t)(slash ? slash + 1 - tool : 0), "%s", name);
  return access(tool, X_OK) == 0 ? 0 : -1;
}

int dem_cloud_routes(const char *platform, const char *const *hosts, int n, int cores, char *out, size_t len)
{
  char tool[PATH_MAX];
  if (beside_self("demsim-routes", tool, sizeof tool) || n > DEM_MAX_HOSTS) return 127;
  char *args[DEM_MAX_HOSTS + 4];
  int k = 0;
  args[k++] = tool;
  if (cores) args[k++] = "--cores";
  args[k++] = (char *)platform;
  for (int i = 0; i < n; i++) args[k++] = (char *)hosts[i];
  args[k] = NULL;
  return dem_cloud_capture(args, out, len);
}

/* Runs (or, in a dry run, prints) the command of the words given, up to a NULL. Its exit status. */
static int cmd(const dem_cloud_t *cloud, int quiet, ...)
{
  char *args[MAX_WORDS];
  int k = 0;
  va_list ap;
  va_start(ap, quiet);
  for (char *w; k < MAX_WORDS - 1 && (w = va_arg(ap, char *)) != NULL;) args[k++] = w;
  va_end(ap);
  args[k] = NULL;
  if (cloud && cloud->dry_run) {
    for (int i = 0; i < k; i++) printf("%s%s", i ? " " : "", args[i]);
    printf("\n");
    return 0;
  }
  return dem_cloud_exec(args, quiet);
}

static int write_value(const dem_cloud_t *cloud, const char *path, const char *value)
{
  if (cloud->dry_run) {
    printf("echo %s > %s\n", value, path);
    return 0;
  }
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  int bad = fputs(value, f) < 0;
  return (fclose(f) || bad) ? -1 : 0;
}

/* 1 when a.b.c.d/len (from `ip` output) overlaps 10.213.x.0/24. */
static int overlaps(const char *word, unsigned x)
{
  unsigned a, b, c, d, len = 32;
  char tail;
  int got = sscanf(word, "%u.%u.%u.%u/%u%c", &a, &b, &c, &d, &len, &tail);
  if (got < 4 || a > 255 || b > 255 || c > 255 || d > 255 || len > 32) return 0;
  unsigned long net = ((unsigned long)a << 24) | (b << 16) | (c << 8) | d, mine = (10ul << 24) | (213ul << 16) | (x << 8);
  unsigned bits = len < 24 ? len : 24;
  unsigned long mask = bits ? (0xfffffffful << (32 - bits)) & 0xfffffffful : 0;
  return (net & mask) == (mine & mask);
}

/* The first 10.213.x.0/24 that no address or route of this machine overlaps: -1 when none. */
static int free_subnet(void)
{
  static char text[1 << 16];
  char *addr[] = {"ip", "-4", "-o", "addr", "show", NULL}, *route[] = {"ip", "-4", "route", "show", "table", "all", NULL};
  size_t n = 0;
  if (dem_cloud_capture(addr, text, sizeof text)) return -1;
  n = strlen(text);
  text[n++] = '\n';
  if (dem_cloud_capture(route, text + n, sizeof text - n)) return -1;
  for (unsigned x = 0; x < 256; x++) {
    int used = 0;
    char copy[sizeof text];
    memcpy(copy, text, sizeof text);
    for (char *save = NULL, *w = strtok_r(copy, " \t\n", &save); w && !used; w = strtok_r(NULL, " \t\n", &save))
      used = overlaps(w, x);
    if (!used) return (int)x;
  }
  return -1;
}

int dem_cloud_name(dem_cloud_t *cloud, char *err, size_t errlen)
{
  snprintf(cloud->prefix, sizeof cloud->prefix, "dsim%ld-", (long)getpid());
  snprintf(cloud->bridge, sizeof cloud->bridge, "%sbr", cloud->prefix);
  int x = free_subnet();
  if (x < 0)
    return dem_fail(err, errlen, "emulate: no free private subnet 10.213.x.0/24 (every one overlaps an address or route "
                    "of this machine: see ip -4 route)");
  snprintf(cloud->subnet, sizeof cloud->subnet, "10.213.%d.0/24", x);
  snprintf(cloud->bridge_addr, sizeof cloud->bridge_addr, "10.213.%d.254", x);
  for (int i = 0; i < cloud->n; i++) {
    snprintf(cloud->c[i].ns, sizeof cloud->c[i].ns, "%s%d", cloud->prefix, i);
    snprintf(cloud->c[i].addr, sizeof cloud->c[i].addr, "10.213.%d.%d", x, i + 1);
  }
  return 0;
}

/* The container's TCP congestion control: Linux's default (CUBIC), whatever this host runs (a new
 * namespace inherits the host's, e.g. BBR on some cloud images), so that an emulation does not
 * depend on the machine it runs on. Set on the route to the other containers (the route's
 * congctl): a namespace may set its default only to one of the host's allowed list
 * (net.ipv4.tcp_allowed_congestion_control), which on such images lacks CUBIC. Left as inherited
 * where the kernel lacks CUBIC. */
static int tcp_defaults(const dem_cloud_t *cloud, int i)
{
  const dem_container_t *c = &cloud->c[i];
  char net[48];
  snprintf(net, sizeof net, "%s", c->addr);
  char *dot = strrchr(net, '.');
  if (dot) snprintf(dot, sizeof net - (size_t)(dot - net), ".0/24");
  cmd(cloud, 1, "ip", "-n", (char *)c->ns, "route", "replace", net, "dev", "eth0", "proto", "kernel", "scope",
      "link", "src", (char *)c->addr, "congctl", "cubic", NULL);
  return 0;
}

/* Container i's namespace, its veth pair (the root end on the bridge; the other end, eth0, in the
 * namespace with the container's address) and its loopback. */
static int build_link(const dem_cloud_t *cloud, int i)
{
  const dem_container_t *c = &cloud->c[i];
  char root[64], peer[64], cidr[48];
  snprintf(root, sizeof root, "%sv%d", cloud->prefix, i);
  snprintf(peer, sizeof peer, "%sp%d", cloud->prefix, i);
  snprintf(cidr, sizeof cidr, "%s/24", c->addr);
  char *ns = (char *)c->ns;
  return cmd(cloud, 0, "ip", "netns", "add", ns, NULL) ||
         cmd(cloud, 0, "ip", "link", "add", root, "type", "veth", "peer", "name", peer, NULL) ||
         cmd(cloud, 0, "ip", "link", "set", peer, "netns", ns, NULL) ||
         cmd(cloud, 0, "ip", "-n", ns, "link", "set", peer, "name", "eth0", NULL) ||
         cmd(cloud, 0, "ip", "-n", ns, "addr", "add", cidr, "dev", "eth0", NULL) ||
         cmd(cloud, 0, "ip", "-n", ns, "link", "set", "eth0", "up", NULL) ||
         cmd(cloud, 0, "ip", "-n", ns, "link", "set", "lo", "up", NULL) ||
         cmd(cloud, 0, "ip", "link", "set", root, "master", (char *)cloud->bridge, NULL) ||
         cmd(cloud, 0, "ip", "link", "set", root, "up", NULL) || tcp_defaults(cloud, i);
}

/* The filter that sends traffic to container j's address into classid: u32 where the kernel has it,
 * else (CONFIG_NET_CLS_U32 off) the same match as a classic BPF program in cls_bpf: the frame's
 * ethertype IPv4 and its destination address (bytes 30-33 of an Ethernet frame), -1 for a match
 * (the filter's flowid), 0 otherwise. */
static int filter_destination(dem_cloud_t *cloud, char *ns, int j, char *classid)
{
  char dst[48], code[160];
  snprintf(dst, sizeof dst, "%s/32", cloud->c[j].addr);
  if (!cloud->no_u32 && cmd(cloud, 1, "tc", "-n", ns, "filter", "add", "dev", "eth0", "parent", "1:", "protocol", "ip",
                            "prio", "1", "u32", "match", "ip", "dst", dst, "flowid", classid, NULL) == 0)
    return 0;
  cloud->no_u32 = 1;
  unsigned a, b, c, d;
  if (sscanf(cloud->c[j].addr, "%u.%u.%u.%u", &a, &b, &c, &d) != 4) return -1;
  snprintf(code, sizeof code, "6,40 0 0 12,21 0 3 2048,32 0 0 30,21 0 1 %lu,6 0 0 4294967295,6 0 0 0",
           ((unsigned long)a << 24) | (b << 16) | (c << 8) | d);
  return cmd(cloud, 0, "tc", "-n", ns, "filter", "add", "dev", "eth0", "parent", "1:", "protocol", "ip", "prio", "1",
             "bpf", "bytecode", code, "flowid", classid, NULL);
}

/* The bytes of a TCP segment's payload from the IPv4 header's length (u32's "@": the IPv4 header,
 * then the TCP header, skipped): a word read there exists only where the segment carries data. */
#define U32_PAYLOAD "0>>22&0x3C@12>>26&0x3C@0>>24=0:255"
#define ACK_QUEUE 100 /* container i's packets without payload to j: queue ACK_QUEUE+j+1 of i's namespace */

/* Where the kernel has no netem: container i's packets to each other container j go through the
 * netfilter queue j+1 of its namespace (iptables' NFQUEUE in mangle POSTROUTING, before the htb
 * class), where demsim-wire (run/wire.c, beside this program, in the cgroup <prefix>wire, on i's
 * own cores: start_wires) holds each until it has crossed a wire of the pair's rate and one-way
 * latency. Nothing is done where iptables or demsim-wire is missing (htb's rate only,
 * cloud->wire left 0).
 *
 * The packets without payload (TCP's pure acknowledgements) go first to the queue ACK_QUEUE+j+1,
 * taken by j's own wire, at the same latency and rate (a line of their own). The kernel makes
 * such an acknowledgement where it takes the data up: in the release of the sender's wire, on the
 * sender's core, so j's wire finds it there when its release returns. Held by i's wire, on the
 * other core, each was a cross-core wake-up, 40-60 us on a virtual machine, and the answer that
 * followed at once in the same queue waited for it: Linux acknowledges more than one full segment
 * at once, so a message of 2 KiB took 2.5 times one of 1 KiB, and 2-16 KiB one way 40-80 us more
 * than the wire's time (BENCHMARKS.md, "The emulated wire's acknowledgements"). Left with the data
 * where iptables has no u32 match (cloud->ack_wire 0, with a note). */
static int build_wire(dem_cloud_t *cloud, int i)
{
  char tool[PATH_MAX], *ns = (char *)cloud->c[i].ns;
  char *probe[] = {"iptables", "--version", NULL};
  if (beside_self("demsim-wire", tool, sizeof tool) || (!cloud->dry_run && dem_cloud_exec(probe, 1))) return 0;
  if (i == 0) cloud->ack_wire = 1;
  for (int j = 0; j < cloud->n; j++) {
    if (j == i || cloud->bw[i][j] <= 0) continue;
    char dst[48], queue[16], acks[16];
    snprintf(dst, sizeof dst, "%s/32", cloud->c[j].addr);
    snprintf(queue, sizeof queue, "%d", j + 1);
    snprintf(acks, sizeof acks, "%d", ACK_QUEUE + j + 1);
    if (cloud->ack_wire && cmd(cloud, 1, "ip", "netns", "exec", ns, "iptables", "-t", "mangle", "-A", "POSTROUTING", "-o",
                               "eth0", "-d", dst, "-p", "tcp", "-m", "u32", "!", "--u32", U32_PAYLOAD, "-j", "NFQUEUE",
                               "--queue-num", acks, "--queue-bypass", NULL))
      cloud->ack_wire = 0; /* no u32 match: with the data (the rules made before pass to nobody: fail-open) */
    if (cmd(cloud, 0, "ip", "netns", "exec", ns, "iptables", "-t", "mangle", "-A", "POSTROUTING", "-o", "eth0", "-d", dst,
            "-j", "NFQUEUE", "--queue-num", queue, "--queue-bypass", NULL))
      return -1;
  }
  cloud->wire = 1;
  return 0;
}

/* One demsim-wire a container i, on its cores, at real-time priority: its own namespace's queues
 * to each j, then each j's namespace's queue of acknowledgements to i (build_wire). 0, or -1. */
static int start_wires(dem_cloud_t *cloud)
{
  char tool[PATH_MAX], cgroup[320], words[2 * DEM_CLOUD_MAX][48], *args[16 + 3 * DEM_CLOUD_MAX];
  if (!cloud->wire || beside_self("demsim-wire", tool, sizeof tool)) return 0;
  snprintf(cgroup, sizeof cgroup, "%s/%swire", CPUSET_ROOT, cloud->prefix);
  for (int i = 0; i < cloud->n; i++) {
    int k = 0, w = 0;
    char *head[] = {tool, "--cgroup", cgroup, "--cpus", cloud->c[i].cpus, "--name", cloud->c[i].name, "--netns",
                    cloud->c[i].ns};
    for (size_t h = 0; h < sizeof head / sizeof *head; h++) args[k++] = head[h];
    for (int j = 0; j < cloud->n; j++)
      if (j != i && cloud->bw[i][j] > 0) {
        snprintf(words[w], sizeof words[w], "%d=%.9g,%.9g", j + 1, cloud->lat[i][j], cloud->bw[i][j]);
        args[k++] = words[w++];
      }
    for (int j = 0; j < cloud->n && cloud->ack_wire; j++)
      if (j != i && cloud->bw[j][i] > 0) {
        snprintf(words[w], sizeof words[w], "%d=%.9g,%.9g", ACK_QUEUE + i + 1, cloud->lat[j][i], cloud->bw[j][i]);
        args[k++] = "--netns", args[k++] = cloud->c[j].ns, args[k++] = words[w++];
      }
    args[k] = NULL;
    if (cloud->dry_run) {
      for (int a = 0; a < k; a++) printf("%s%s", a ? " " : "", args[a]);
      printf("\n");
    } else if (dem_cloud_exec(args, 0)) {
      return -1;
    }
  }
  return 0;
}

/* The cgroup of the emulated wires (cpuset, every core of the machine; no CPU quota, so that
 * demsim-wire may run at real-time priority), where the teardown finds them. */
static int wire_cgroup(const dem_cloud_t *cloud)
{
  char dir[320], path[400], value[256];
  snprintf(dir, sizeof dir, "%s/%swire", CPUSET_ROOT, cloud->prefix);
  if (cloud->dry_run) printf("mkdir %s\n", dir);
  else if (mkdir(dir, 0755) && errno != EEXIST) return -1;
  const char *files[] = {"cpuset.mems", "cpuset.cpus"};
  for (int f = 0; f < 2; f++) {
    snprintf(path, sizeof path, "%s/%s", CPUSET_ROOT, files[f]);
    FILE *in = fopen(path, "r");
    if (!in || !fgets(value, sizeof value, in)) snprintf(value, sizeof value, "0");
    if (in) fclose(in);
    value[strcspn(value, "\n")] = '\0';
    snprintf(path, sizeof path, "%s/%s", dir, files[f]);
    if (write_value(cloud, path, value)) return -1;
  }
  return 0;
}

/* The htb class 1:(j+1) of container i's egress at the pair's rate: "add", or "change" with a
 * burst of WIRE_HTB_BURST. */
static int htb_class(dem_cloud_t *cloud, int i, int j, const char *verb, const char *burst)
{
  char *ns = (char *)cloud->c[i].ns, classid[16], rate[32];
  snprintf(classid, sizeof classid, "1:%x", j + 1);
  snprintf(rate, sizeof rate, "%.0fbit", cloud->bw[i][j] * 8);
  if (!burst)
    return cmd(cloud, 0, "tc", "-n", ns, "class", verb, "dev", "eth0", "parent", "1:", "classid", classid, "htb",
               "rate", rate, "ceil", rate, "quantum", "60000", NULL);
  return cmd(cloud, 0, "tc", "-n", ns, "class", verb, "dev", "eth0", "parent", "1:", "classid", classid, "htb", "rate",
             rate, "ceil", rate, "burst", burst, "cburst", burst, "quantum", "60000", NULL);
}

/* Where demsim-wire holds a route it also serializes it, so the htb class behind it must not do it
 * again. With its default burst (a frame or two at 1 Gbit/s) htb lets a 64 KiB GSO packet pass,
 * charges it to its tokens and then holds the next packet until they are paid back: the second
 * piece of a 64 KiB MPI message (Open MPI writes it as two GSO packets) arrived a whole 60 KB wire
 * time after the first, and 64 KiB one way took 1.05-1.2 ms instead of 0.73 ms (BENCHMARKS.md,
 * "The emulated wire"). A burst of more than the wire can release at once (a few GSO packets)
 * keeps the class at the rate without ever binding; it stays as the rate's safety net where the
 * wire lets packets pass (fail-open). */
#define WIRE_HTB_BURST "1mb"

/* Container i's egress: htb root 1:, per destination j a class 1:(j+1) at the pair's rate, a
 * netem child (j+0x100): with the pair's one-way delay, and a filter on j's address (without
 * netem: the delay and the serialization from build_wire). Traffic to anything else (the bridge:
 * mpirun's PMIx server) is not classified and passes unshaped and undelayed. */
static int build_shaping(dem_cloud_t *cloud, int i)
{
  char *ns = (char *)cloud->c[i].ns;
  if (cmd(cloud, 0, "tc", "-n", ns, "qdisc", "add", "dev", "eth0", "root", "handle", "1:", "htb", NULL)) return -1;
  for (int j = 0; j < cloud->n; j++) {
    if (j == i || cloud->bw[i][j] <= 0) continue;
    char classid[16], handle[16], delay[32];
    snprintf(classid, sizeof classid, "1:%x", j + 1);
    snprintf(handle, sizeof handle, "%x:", j + 0x100);
    snprintf(delay, sizeof delay, "%.3fus", cloud->lat[i][j] * 1e6);
    if (htb_class(cloud, i, j, "add", NULL)) return -1;
    if (cloud->no_netem || cmd(cloud, 1, "tc", "-n", ns, "qdisc", "add", "dev", "eth0", "parent", classid, "handle",
                               handle, "netem", "delay", delay, "limit", "100000", NULL))
      cloud->no_netem = 1; /* a kernel without CONFIG_NET_SCH_NETEM: see build_wire */

    if (filter_destination(cloud, ns, j, classid)) return -1;
  }
  if (!cloud->no_netem) return 0;
  if (build_wire(cloud, i)) return -1;
  for (int j = 0; j < cloud->n && cloud->wire; j++)
    if (j != i && cloud->bw[i][j] > 0 && htb_class(cloud, i, j, "change", WIRE_HTB_BURST)) return -1;
  return 0;
}

/* Container i's CPU accounting into cloud->acct[i]: its own cpuacct cgroup where that controller
 * has a hierarchy of its own, its cpu cgroup where the two share one (cpu,cpuacct), none where
 * there is no cpuacct (a missing one is no error: the accounting is a report). */
static void build_acct(dem_cloud_t *cloud, int i, const char *cpu_dir)
{
  struct stat a, c;
  char dir[sizeof cloud->acct[0]] = "", path[400];
  if (stat(CPUACCT_ROOT, &a) == 0 && stat(CPU_ROOT, &c) == 0 && (a.st_dev != c.st_dev || a.st_ino != c.st_ino)) {
    snprintf(dir, sizeof dir, "%s/%s%d", CPUACCT_ROOT, cloud->prefix, i);
    if (cloud->dry_run) printf("mkdir %s\n", dir);
    else if (mkdir(dir, 0755) && errno != EEXIST) dir[0] = '\0';
  } else {
    snprintf(path, sizeof path, "%s/cpuacct.usage", cpu_dir);
    if ((cloud->dry_run || access(path, R_OK) == 0) && strlen(cpu_dir) < sizeof dir)
      memcpy(dir, cpu_dir, strlen(cpu_dir) + 1);
  }
  memcpy(cloud->acct[i], dir, sizeof dir);
}

/* Container i's cgroups: its cores (cpuset, the root's memory nodes) and, for a part of a core,
 * a CFS quota of share x cores per period (both in us, as cgroup v1 takes them); its CPU
 * accounting (build_acct). */
static int build_cgroups(dem_cloud_t *cloud, int i)
{
  const dem_container_t *c = &cloud->c[i];
  char dir[2][320], path[400], mems[64] = "0", quota[32], period[32];
  snprintf(dir[0], sizeof dir[0], "%s/%s%d", CPUSET_ROOT, cloud->prefix, i);
  snprintf(dir[1], sizeof dir[1], "%s/%s%d", CPU_ROOT, cloud->prefix, i);
  FILE *f = fopen(CPUSET_ROOT "/cpuset.mems", "r");
  if (f) {
    if (!fgets(mems, sizeof mems, f)) snprintf(mems, sizeof mems, "0");
    mems[strcspn(mems, "\n")] = '\0';
    fclose(f);
  }
  for (int k = 0; k < 2; k++) {
    if (cloud->dry_run) printf("mkdir %s\n", dir[k]);
    else if (mkdir(dir[k], 0755) && errno != EEXIST) return -1;
  }
  snprintf(path, sizeof path, "%s/cpuset.mems", dir[0]);
  if (write_value(cloud, path, mems)) return -1;
  snprintf(path, sizeof path, "%s/cpuset.cpus", dir[0]);
  if (write_value(cloud, path, c->cpus)) return -1;
  build_acct(cloud, i, dir[1]);
  if (c->share >= 1) return 0;
  snprintf(period, sizeof period, "%.0f", c->period * 1e6);
  snprintf(quota, sizeof quota, "%.0f", c->share * c->ncores * c->period * 1e6);
  snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir[1]);
  if (write_value(cloud, path, period)) return -1;
  snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir[1]);
  return write_value(cloud, path, quota);
}

int dem_cloud_build(dem_cloud_t *cloud, char *err, size_t errlen)
{
  char cidr[48];
  snprintf(cidr, sizeof cidr, "%s/24", cloud->bridge_addr);
  if (cmd(cloud, 0, "ip", "link", "add", cloud->bridge, "type", "bridge", NULL) ||
      cmd(cloud, 0, "ip", "addr", "add", cidr, "dev", cloud->bridge, NULL) ||
      cmd(cloud, 0, "ip", "link", "set", cloud->bridge, "up", NULL))
    return dem_fail(err, errlen, "emulate: cannot create the bridge %s (ip link add ... type bridge)", cloud->bridge);
  if (wire_cgroup(cloud))
    return dem_fail(err, errlen, "emulate: cannot create the cgroup %s/%swire: %s", CPUSET_ROOT, cloud->prefix,
                    strerror(errno));
  for (int i = 0; i < cloud->n; i++) {
    if (build_link(cloud, i))
      return dem_fail(err, errlen, "emulate: cannot create the namespace and link of container \"%s\" (%s)",
                      cloud->c[i].name, cloud->c[i].ns);
    if (build_shaping(cloud, i))
      return dem_fail(err, errlen, "emulate: cannot shape the routes of container \"%s\" with tc (htb, netem, u32) "
                      "or hold them with demsim-wire (iptables NFQUEUE: are sch_htb and nfnetlink_queue available?)",
                      cloud->c[i].name);
    if (build_cgroups(cloud, i))
      return dem_fail(err, errlen, "emulate: cannot create the cgroups of container \"%s\" under %s and %s (cgroups v1 "
                      "with the cpuset and cpu controllers): %s", cloud->c[i].name, CPUSET_ROOT, CPU_ROOT,
                      strerror(errno));
  }
  if (start_wires(cloud))
    return dem_fail(err, errlen, "emulate: cannot start demsim-wire for the routes (nfnetlink_queue available?)");
  if (cloud->no_netem && cloud->wire)
    fprintf(stderr, "demsim: note: this kernel has no netem qdisc (CONFIG_NET_SCH_NETEM): each route's latency is "
            "added by demsim-wire (netfilter queues)%s\n", cloud->ack_wire ? "" : "; iptables has no u32 match, so "
            "TCP's acknowledgements share the data's wire (2-16 KiB messages then take 40-80 us more)");
  else if (cloud->no_netem)
    fprintf(stderr, "demsim: note: this kernel has no netem qdisc (CONFIG_NET_SCH_NETEM) and demsim-wire or iptables "
            "is missing: each route's bandwidth is shaped, its latency is not added (the namespaces' own latency only)\n");
  return 0;
}

/* Sends sig to every process in the cgroup directory and waits (5 s at most) until it is empty. */
static void empty_cgroup(const char *dir, int sig)
{
  char path[512], line[32];
  snprintf(path, sizeof path, "%s/cgroup.procs", dir);
  for (int tries = 0; tries < 50; tries++) {
    FILE *f = fopen(path, "r");
    int any = 0;
    while (f && fgets(line, sizeof line, f)) {
      long pid = strtol(line, NULL, 10);
      if (pid > 1 && pid != (long)getpid()) kill((pid_t)pid, sig), any = 1;
    }
    if (f) fclose(f);
    if (!any) return;
    struct timespec ts = {0, 100000000};
    nanosleep(&ts, NULL);
  }
}

/* Calls fn(name, arg) for each entry of `root` (a cgroup hierarchy) named with the prefix. */
static void each_cgroup(const char *root, const char *prefix, void (*fn)(const char *, void *), void *arg)
{
  DIR *d = opendir(root);
  struct dirent *e;
  char path[512];
  while (d && (e = readdir(d)) != NULL)
    if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
      snprintf(path, sizeof path, "%s/%s", root, e->d_name);
      fn(path, arg);
    }
  if (d) closedir(d);
}

static void kill_cgroup(const char *path, void *arg) { (void)arg, empty_cgroup(path, SIGKILL); }
static void remove_cgroup(const char *path, void *arg) { (void)arg, rmdir(path); }

/* The first word of each line of `ip netns list` or the name of each link of `ip -o link`
 * that starts with prefix, one after another in names (NUL-separated, an empty name last). */
static void list_names(int links, const char *prefix, char *names, size_t len)
{
  static char text[1 << 16];
  char *ns[] = {"ip", "netns", "list", NULL}, *ln[] = {"ip", "-o", "link", "show", NULL};
  size_t n = 0;
  names[0] = '\0';
  if (dem_cloud_capture(links ? ln : ns, text, sizeof text)) return;
  for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char word[64] = "";
    if (links) sscanf(line, "%*d: %63[^:@ ]", word);
    else sscanf(line, "%63s", word);
    if (word[0] && strncmp(word, prefix, strlen(prefix)) == 0 && n + strlen(word) + 2 < len) {
      memcpy(names + n, word, strlen(word) + 1);
      n += strlen(word) + 1;
      names[n] = '\0';
    }
  }
}

void dem_cloud_clean(const char *prefix, int dry_run)
{
  char names[8192];
  if (dry_run) {
    printf("teardown: every process in the cgroups %s*, then ip netns del, ip link del, rmdir of everything named %s*\n",
           prefix, prefix);
    return;
  }
  char wires[320];
  snprintf(wires, sizeof wires, "%s/%swire", CPUSET_ROOT, prefix);
  empty_cgroup(wires, SIGTERM); /* the wires release what they hold and print their counts */
  each_cgroup(CPUSET_ROOT, prefix, kill_cgroup, NULL); /* the ranks and the stress, in reverse of their start */
  each_cgroup(CPU_ROOT, prefix, kill_cgroup, NULL);
  list_names(0, prefix, names, sizeof names); /* a namespace takes its link end and its qdiscs with it */
  for (char *w = names; *w; w += strlen(w) + 1) cmd(NULL, 1, "ip", "netns", "del", w, NULL);
  list_names(1, prefix, names, sizeof names); /* what is left: the veths' root ends, the bridge */
  for (char *w = names; *w; w += strlen(w) + 1) cmd(NULL, 1, "ip", "link", "del", w, NULL);
  each_cgroup(CPUSET_ROOT, prefix, remove_cgroup, NULL);
  each_cgroup(CPU_ROOT, prefix, remove_cgroup, NULL);
  each_cgroup(CPUACCT_ROOT, prefix, remove_cgroup, NULL); /* empty: its processes were in the others too */
}

/* a cgroup file's numbers: the first of its first line into v[0] (keys NULL), or the value of each
 * of the n keys ("key value" lines, cpu.stat's form) into v[k]; -1 where missing */
static void read_numbers(const char *dir, const char *file, const char *const *keys, int n, double *v)
{
  char path[512], line[160], name[64];
  double x;
  for (int k = 0; k < (keys ? n : 1); k++) v[k] = -1.0;
  snprintf(path, sizeof path, "%s/%s", dir, file);
  FILE *f = fopen(path, "r");
  while (f && fgets(line, sizeof line, f)) {
    if (!keys) {
      if (sscanf(line, "%lf", &x) == 1) v[0] = x;
      break;
    }
    for (int k = 0; k < n; k++)
      if (sscanf(line, "%63s %lf", name, &x) == 2 && strcmp(name, keys[k]) == 0) v[k] = x;
  }
  if (f) fclose(f);
}

void dem_cloud_report(const dem_cloud_t *cloud, FILE *out)
{
  static const char *const keys[] = {"nr_periods", "nr_throttled", "throttled_time"};
  for (int i = 0; i < cloud->n && !cloud->dry_run; i++) {
    const dem_container_t *c = &cloud->c[i];
    char cpu_dir[400];
    double used = -1.0, stat[3];
    snprintf(cpu_dir, sizeof cpu_dir, "%s/%s%d", CPU_ROOT, cloud->prefix, i);
    if (cloud->acct[i][0]) read_numbers(cloud->acct[i], "cpuacct.usage", NULL, 1, &used);
    read_numbers(cpu_dir, "cpu.stat", keys, 3, stat);
    fprintf(out, "emulated cloud: %s (cores %s", c->name, c->cpus);
    if (c->share < 1) fprintf(out, ", %.3g of each per %.3g s", c->share, c->period);
    if (used >= 0) fprintf(out, "): CPU time %.3f s", 1e-9 * used);
    else fprintf(out, "): CPU time not accounted (no cpuacct cgroup)");
    if (c->share < 1 && stat[0] >= 0)
      fprintf(out, "; throttled in %.0f of %.0f periods, %.3f s in all", stat[1], stat[0], 1e-9 * stat[2]);
    fprintf(out, "\n");
  }
}

/* The prefix "dsim<pid>-" of a name when its process is gone, else "". */
static void stale_prefix(const char *name, char *prefix, size_t len)
{
  long pid = 0;
  int end = 0;
  prefix[0] = '\0';
  if (sscanf(name, "dsim%ld-%n", &pid, &end) == 1 && end > 0 && pid > 0 && kill((pid_t)pid, 0) && errno == ESRCH)
    snprintf(prefix, len, "dsim%ld-", pid);
}

static void clean_if_stale(const char *path, void *arg)
{
  char prefix[32];
  const char *base = strrchr(path, '/');
  stale_prefix(base ? base + 1 : path, prefix, sizeof prefix);
  if (prefix[0]) dem_cloud_clean(prefix, 0);
}

void dem_cloud_clean_stale(void)
{
  char names[8192], prefix[32];
  for (int links = 0; links < 2; links++) {
    list_names(links, "dsim", names, sizeof names);
    for (char *w = names; *w; w += strlen(w) + 1) {
      stale_prefix(w, prefix, sizeof prefix);
      if (prefix[0]) dem_cloud_clean(prefix, 0);
    }
  }
  each_cgroup(CPUSET_ROOT, "dsim", clean_if_stale, NULL);
  each_cgroup(CPU_ROOT, "dsim", clean_if_stale, NULL);
  each_cgroup(CPUACCT_ROOT, "dsim", clean_if_stale, NULL);
}
