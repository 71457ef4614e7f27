/* The solver's only bridge to the simulator: after each kernel or host-side phase the solver
 * reports the work it just did. In the native build the report costs nothing (real time has
 * already passed). In the SMPI build sim/ turns it into simulated time on the container that
 * runs this rank (kernel cost model, memory-bus contention, GPU and PCIe model), so that
 * MPI_Wtime() -- simulated time under SMPI -- advances by what the modelled hardware would take.
 * This header must stay free of SimGrid types. */
#ifndef DEMSIM_BASE_CLOCK_H
#define DEMSIM_BASE_CLOCK_H

typedef enum dem_work_kind {
  DEM_WORK_SEARCH,       /* kernel: contact search + contact history */
  DEM_WORK_FORCES,       /* kernel: particle-particle contact forces and moments */
  DEM_WORK_BOUNDARIES,   /* kernel: wall contacts (particles: those of the wall list) */
  DEM_WORK_EXTERNAL,     /* kernel: gravity */
  DEM_WORK_FORCES_ALL,   /* kernel: forces + external fused in one pass (a step's pair pass) */
  DEM_WORK_INTEGRATE,    /* kernel: velocity Verlet (kick-drift or kick) */
  DEM_WORK_BINNING,      /* host: cell binning (counting sort) for the search */
  DEM_WORK_COPY_D2H,     /* device -> host copy of `bytes` */
  DEM_WORK_COPY_H2D,     /* host -> device copy of `bytes` */
  DEM_WORK_PACK,         /* host: packing/unpacking `bytes` for ghosts or migration */
  DEM_WORK_PARTITION,    /* host: Zoltan over `particles` (global count) on `ranks` parts, costed as RCB */
  DEM_WORK_OUTPUT,       /* host: writing `bytes` of output */
  DEM_WORK_STORAGE,      /* `bytes` written to or read from the container's storage (checkpoints) */
  DEM_WORK_FIRST_TOUCH,  /* `bytes` of fresh memory written for the first time (the OS maps and zeroes
                          * its pages: page faults) */
  DEM_WORK_SCAN,         /* host: passes over the particles (the ghost registration's layer, boxes,
                          * candidates and border order): `bytes` streamed, `particles` comparisons,
                          * `pairs` particle-box tests */
  DEM_WORK_PERMUTE,      /* host: the store's rows put in a new order in place (the ghost registration's
                          * border last): `particles` rows moved, `bytes` their bytes, `pairs` the
                          * pieces moved (a row of each array), `reach` the store's rows (the moves'
                          * sources are scattered over all of them) */
  DEM_WORK_KIND_COUNT
} dem_work_kind_t;

typedef struct dem_work {
  dem_work_kind_t kind;
  double particles; /* work-items or particles touched */
  double pairs;     /* neighbour slots visited */
  double contacts;  /* slots in actual contact */
  double bytes;     /* bytes copied, packed or written */
  double ranks;     /* for DEM_WORK_PARTITION: number of parts */
  double reach;     /* for DEM_WORK_BOUNDARIES: the rank's particles, whose data the wall pass reaches
                     * into through its list right after the pair pass streamed them all */
  int measured;         /* 1: a kernel timed on this machine's device (device.cost = "measured") */
  double measured_s;    /* s, its device time here (OpenCL profiling); charged instead of the model */
} dem_work_t;

/* A co-located load declared in the scenario (the study's stress-ng runs). */
typedef struct dem_stress {
  char host[64];     /* the container (SimGrid host) it runs on */
  int vm;            /* 1: memory stress (stress-ng --vm), 0: CPU stress (stress-ng --cpu) */
  int workers;       /* stress-ng workers (N of --vm N / --cpu N) */
  double bytes;      /* B, --vm-bytes of each worker (memory stress) */
  double start_s;    /* s of simulated time before the first stress period */
  double on_s;       /* s, length of a stress period; <= 0: constant stress */
  double off_s;      /* s, sleep between stress periods */
} dem_stress_t;

/* The noise model (scenario keys noise.*, sim/noise.h): each container's core speed, each node's
 * memory-bus speed and each link's bandwidth times a stationary random factor of mean 1 that
 * varies with simulated time (lognormal over an Ornstein-Uhlenbeck process). */
typedef struct dem_noise {
  int enabled;       /* 0: no noise, the simulation exactly as without these keys */
  long seed;         /* the streams: one per resource, from the seed and the resource's name */
  double cpu_cv, cpu_tau; /* -, s: coefficient of variation and correlation time of core speed */
  int cpu_memory;    /* 1: the core-speed factor also scales the container's memory streams */
  double mem_cv, mem_tau; /* the same for the node's memory bus */
  double net_cv, net_tau; /* the same for each link's bandwidth */
  double dt;         /* s, time step of the profiles */
  double horizon;    /* s, length of the generated profiles; they repeat beyond it */
} dem_noise_t;

/* Reads this rank's hardware from the simulator (container, node, memory bus, device); fails
 * with a message naming the host and the missing or bad property. Native build: always 0. */
int dem_clock_init(char *err, unsigned long errlen);
/* Starts the co-located loads (call on one rank only, before the time loop). Native build:
 * returns 0 and does nothing (the launcher starts real stress-ng processes instead). */
int dem_clock_start_stress(const dem_stress_t *s, int count, char *err, unsigned long errlen);

/* Applies the noise model to the whole platform (call on one rank only, at simulated time 0,
 * before the time loop): speed profiles on the containers' and the memory buses'
 * hosts, the links' bandwidth varied by a daemon. Disabled or all cv = 0: nothing. Native build:
 * returns 0 and does nothing (real machines bring their own noise). Once per process: a second
 * call does nothing. SimGrid dates a profile's first event at simulated time 0 whenever it is
 * set; set later while messages are in flight (a device server's split), the engine stalled with
 * every activity waiting, so demsim's world rank 0 sets them first thing (main.c). */
int dem_clock_set_noise(const dem_noise_t *n, char *err, unsigned long errlen);

/* Every rank, after dem_clock_init and before its first work: the run's draws that are this
 * rank's own (where its container's kernel tick falls against its CPU quota's period, sim/quota.h)
 * from the noise model's seed. Disabled: nothing (the fixed draws). Native build: does nothing. */
void dem_clock_set_seed(const dem_noise_t *n);

/* device.cost = "measured": kernels reported with `measured` set are charged their time on this
 * machine's device scaled by its speed (`local_flops`, flop/s of the whole device, in the
 * platform's units) over the modelled device's (as SMPI benchmarks computation with
 * smpi/host-speed). Native build: does nothing (real time is the time). */
void dem_clock_set_measured(double local_flops);

/* device.code_cost: the modelled DEM code's kernels cost `factor` times demsim's own on the same
 * core (their compute and memory traffic, or their measured time, x factor; the launch latency,
 * host-side work and copies stay demsim's). 1: demsim's code, the charges unchanged bit for bit.
 * Native build: does nothing (the real kernels run). */
void dem_clock_set_code_cost(double factor);

/* Charges the work to this rank's clock. Returns 0, or -1 when the simulator rejected it. */
int dem_clock_charge(const dem_work_t *w);
/* A transfer of the blocking MPI completion this rank is in: `bytes` to (sending) or from a rank
 * on the host `peer` (dem_clock_host's name there). Recorded until the next dem_clock_blocked.
 * Native build: nothing. */
void dem_clock_moved(const char *peer, double bytes, int sending);
/* The rank has just waited `seconds` in a blocking MPI completion (the ghost exchange, the
 * migration). On a container with part of its cores' time (a CFS quota, cpu_share, or a stress
 * worker's threads on its cores), MPI progresses only while the container runs: Open MPI polls,
 * copies and answers the other rank's protocol turns in the process, which the quota throttles
 * like its computing. The SMPI build then holds the rank until the container has run that long
 * since the wait began (a stress share s: (1/s - 1) x seconds more; a quota: within its duty
 * cycle, sim/quota.h). Under a quota, the part of the wait that the transfers recorded by
 * dem_clock_moved spend on their routes' narrowest links (each direction's bytes over the
 * route's bandwidth, the larger direction) goes on while the container is throttled: the kernel
 * moves a socket's bytes on its own (measured: validation/compare-real/emulated-half, one-way
 * messages of 1-8 MiB at half a core take the wire's time, and BENCHMARKS.md, "The MPI waits at
 * part of a core"). A whole container, and the native build: nothing. */
void dem_clock_blocked(double seconds);
/* The rank has just come out of a blocking MPI call (a collective, a receive, Zoltan's calls).
 * On a container with a CFS quota (cpu_share) the rank sees the call complete only when its
 * container runs: throttled at that moment, the SMPI build holds it until its next period begins
 * (sim/quota.h). Without a quota, and in the native build: nothing. */
void dem_clock_synced(void);
/* 1 when time is what the charges say (SMPI build): nothing needs waiting for to be timed.
 * 0 when the timers read real time (native build). */
int dem_clock_modelled(void);
/* Seconds of this rank's time: simulated time under SMPI (read from the simulator's clock
 * directly: no MPI call, so no switch into the simulation kernel), the monotonic clock in the
 * native build. The timers and every other time stamp of the run read it. */
double dem_clock_now(void);
/* Seconds of wall-clock (real) time since an arbitrary origin, in both builds. */
double dem_clock_wall(void);
/* A one-line description of the hardware this rank runs on ("native" or the modelled container). */
const char *dem_clock_where(void);
/* The name of the host this rank runs on: the SimGrid host (container) under SMPI, the
 * machine's hostname in the native build. */
const char *dem_clock_host(void);
/* Human-readable name of a work kind. */
const char *dem_clock_kind_name(dem_work_kind_t k);

#endif
