/* A scenario: everything a run needs, read from a libconfig file (a .cfg file in scenarios/), then
 * overridden from the command line (--set key=value and the shortcut options).
 *
 * Keys are dotted paths ("material.friction"); the table in scenario.c is the single list of
 * keys, with type, unit, range and help text: parsing, --set, validation and `demsim keys`
 * all read it. Every error names the file, the line when there is one, the key and what was
 * expected, and the caller exits with status 2. */
#ifndef DEMSIM_SCENARIO_SCENARIO_H
#define DEMSIM_SCENARIO_SCENARIO_H

#include <stddef.h>

#include "base/clock.h"
#include "dem/params.h"

#define DEM_PATH_MAX 1024
#define DEM_NAME_MAX 64
#define DEM_MAX_HOSTS 256
#define DEM_MAX_STRESS 64
/* s, failure.restart_latency by default: from a container's loss to the run launched again on the
 * survivors. ESTIMATE (no measurement of the study's cloud): mpirun learns of the loss when the
 * container's daemon stops answering (seconds), ends the job, and the launcher starts it again on
 * containers that already run (none to boot); the set-up after that (reading the checkpoint,
 * partitioning) is simulated, not part of this figure. */
#define DEM_RESTART_LATENCY_ESTIMATE 10.0

typedef struct dem_scenario {
  char file[DEM_PATH_MAX];   /* the scenario file as given */
  char dir[DEM_PATH_MAX];    /* its directory: relative paths inside it are resolved from here */
  char name[DEM_NAME_MAX];   /* scenario name */
  char description[256];

  /* problem: gravity packing on a simple cubic lattice */
  double box;            /* m, edge of the cubic container */
  double fill;           /* -, filled fraction of the height */
  long particles;        /* requested particle count (0: every lattice site of the filled part) */
  double spacing;        /* m, lattice spacing (0: derived from `particles`) */
  double diameter_ratio; /* -, particle diameter / spacing (0.99 apart, 1.001 in contact) */
  double jitter;         /* -, random displacement of each site, fraction of the gap (0: none) */
  long seed;             /* random seed for the jitter */
  dem_params_t params;   /* material, dt, gravity, skin (m) */
  double skin_ratio;     /* -, skin / diameter */
  long steps;            /* time steps */
  double dt_fraction_max;  /* -, dt must not exceed this fraction of the Rayleigh critical step */
  double overlap_max;      /* -, largest initial overlap allowed, as a fraction of the radius */
  double overlap_abort;    /* -, an overlap beyond this fraction of the radius stops the run */
  long check_every;        /* steps between numerical checks (NaN, escapes, overlaps); 0: never */

  /* parallel run and load balancing */
  int ranks;                /* MPI processes */
  char policy[8];           /* NOW, RW, RW5, EWMA, PI or RUPER (policy.h) */
  char partitioner[8];      /* RCB, RIB, HSFC, PHG, GRAPH or HIER (partition.h) */
  double site_threshold;    /* %, HIER: the sites' shares change only when one moves by more */
  long repartition_every;   /* steps between repartitions (the physics frequency) */
  double lambda_threshold;  /* %, imbalance that triggers an extra repartition (0: never) */
  double rw5_threshold;     /* %, RW5 updates the weights only above this imbalance */
  double ewma_alpha;        /* -, EWMA: smoothing factor of the speeds, (0, 1] */
  double pi_kp, pi_ki;      /* -, PI: proportional and integral gains */
  double ruper_tmin_factor; /* -, RUPER: t_min = this x the measured cost of one repartition */
  double ruper_threshold;   /* %, RUPER: repartition only above this predicted imbalance */
  double ruper_change;      /* -, RUPER: speed ratio that halves a rank's report interval */
  long ruper_report_min, ruper_report_max; /* steps, RUPER: bounds of the report interval */
  double zoltan_imbalance_tol; /* -, Zoltan IMBALANCE_TOL (max/avg) */
  long migrate_batch;       /* particles a rank sends per round of a migration; 0: one round */

  /* modelled cloud (SMPI build) */
  char platform[DEM_PATH_MAX];  /* SimGrid platform file, resolved */
  int n_hosts;
  char hosts[DEM_MAX_HOSTS][DEM_NAME_MAX]; /* container of rank r = hosts[r % n_hosts] */
  int n_site_list;          /* entries of platform.sites (0: one site) */
  int site[DEM_MAX_HOSTS];  /* site of hosts[i] (0, 1, ...): the WAN lies between sites */
  int n_stress;
  dem_stress_t stress[DEM_MAX_STRESS];
  char hostmap[DEM_PATH_MAX];   /* native build: containers -> real hosts and cores ("": none), resolved */
  int emulate;              /* native build: 1 runs on an emulated cloud on this machine (run/emulator.h) */

  /* compute device */
  char backend[16];        /* "opencl" or "reference" */
  int cl_platform;         /* -1: first platform with a device */
  int cl_device;           /* -1: first device */
  char cl_device_type[8];  /* any, cpu, gpu */
  char server[DEM_NAME_MAX]; /* device.server: the container of the device server ("": none) */
  char device_cost[16];    /* "model": the cost model; "measured": kernels timed here, scaled */
  double local_speed;      /* flop/s of one core of this machine (device.cost = "measured") */
  double code_cost;        /* -, the modelled DEM code's kernel cost per particle-step over demsim's own
                            * kernels on the same core (1: demsim's code; SMPI build) */

  /* output */
  long output_every;       /* steps between particle snapshots (0: only the final state) */
  long metrics_every;      /* steps between metrics rows */
  long gather_block;       /* particles of a frame gathered on rank 0 at once */
  long checkpoint_every;   /* steps between checkpoints (DIR/checkpoint.h5; 0: none) */
  char out_dir[DEM_PATH_MAX];
  int progress;            /* 1: print progress */

  /* a container lost mid-run (solver/failure/failure.h) */
  char failure_host[DEM_NAME_MAX]; /* the container that fails at failure_at ("": none) */
  double failure_at;               /* s on the run's time line (0: no failure at a fixed time) */
  double failure_mtbf;             /* s, mean time between failures, exponential (0: none) */
  long failure_seed;               /* seed of the failure draws */
  double restart_latency;          /* s, detection + re-launch of a failed run (SMPI build) */
  int attempt;                     /* restarts after failures so far (--attempt; not a key) */

  /* the noise model (noise.*; SMPI build) */
  dem_noise_t noise;
} dem_scenario_t;

/* Fills every field with its default. */
void dem_scenario_defaults(dem_scenario_t *s);
/* Reads a scenario file over the current values. Returns 0, or -1 with a message in err. */
int dem_scenario_read(dem_scenario_t *s, const char *path, char *err, size_t errlen);
/* The same from a string; `name` stands for the file in messages. */
int dem_scenario_read_text(dem_scenario_t *s, const char *text, const char *name, char *err, size_t errlen);
/* Applies one "key=value" override. Returns 0, or -1 with a message. */
int dem_scenario_set(dem_scenario_t *s, const char *assignment, char *err, size_t errlen);
/* Removes a lost container from the ranks' hosts (and its site entry; the sites numbered 0, 1,
 * ... again in the same order): the hosts of the ranks other than host's, one rank each. */
void dem_scenario_drop_host(dem_scenario_t *s, const char *host);
/* Checks ranges and cross-field conditions (time step against the critical step, initial
 * overlap, hosts and stress against the rank count) and derives params. 0 or -1. */
int dem_scenario_validate(dem_scenario_t *s, char *err, size_t errlen);
struct dem_hostmap;
/* Reads a host map file (native.hostmap; libconfig, see hostmap.h) into m: entries with
 * container, host and cores, no other keys, no duplicate container. 0, or -1 with a message. */
int dem_scenario_read_hostmap(const char *path, struct dem_hostmap *m, char *err, size_t errlen);
/* Prints every key with its type, default, unit and help (for `demsim keys` and --help). */
void dem_scenario_print_keys(void *stream);
/* Prints the effective configuration, one "key = value" per line. */
void dem_scenario_print(const dem_scenario_t *s, void *stream);

/* Derived lattice of the gravity packing (shared by the generator and the checks). */
typedef struct dem_lattice {
  long nx, ny, nz;   /* sites per axis */
  long count;        /* particles placed (<= nx*ny*nz) */
  double spacing;    /* m */
  double diameter;   /* m */
  double origin[3];  /* m, centre of site (0,0,0) */
} dem_lattice_t;
int dem_scenario_lattice(const dem_scenario_t *s, dem_lattice_t *lat, char *err, size_t errlen);

#endif
