/* DIR/summary.json: what was simulated and how long it took; and the JSON of `demsim probe`
 * (the only module using jansson). */
#ifndef DEMSIM_IO_SUMMARY_H
#define DEMSIM_IO_SUMMARY_H

#include <stddef.h>

struct dem_sim;
struct dem_probe_node;
struct dem_probe_report;

typedef struct dem_summary_rank {
  int rank;
  char host[64];
  char processor[64];            /* MPI_Get_processor_name (the SimGrid host under SMPI) */
  char cpus[64];                 /* CPUs of the rank's affinity mask ("0", "0-1") */
  double load_s, wait_s, comm_s; /* s, summed over the run */
  double weight;
  long particles;                /* owned at the end */
  long ghosts;
  /* partitioner comparison (partition.h, ghosts.h): per step of the loop, per repartition */
  double ghosts_per_step;        /* ghosts held, mean over the steps */
  double ghost_bytes_per_step;   /* B sent + received in ghost messages, mean over the steps */
  double cut_slots;              /* slots naming another rank's particle, mean over the repartitions */
  double pair_slots;             /* slots naming a particle, mean over the repartitions */
  double sent_particles, sent_bytes; /* exported by migrations, summed */
  double partition_s, migrate_s, wall_partition_s; /* summed over the repartitions */
  int repartitions;              /* counted by the partition (the set-up one excluded) */
  double step_load_cv;           /* -, per-step load: coefficient of variation (metrics.h) */
  double step_load_acf1;         /* -, per-step load: lag-1 autocorrelation */
  /* bytes sent to another site's ranks (platform.sites), summed over the run */
  double wan_ghost_bytes;        /* ghost messages (registrations and per-step exchanges) */
  double wan_state_bytes;        /* of those, the per-step exchanges */
  double wan_migration_bytes;    /* migration records (the set-up partition excluded) */
} dem_summary_rank_t;

/* Writes path atomically (temporary file + rename). `ranks` has sim->ranks entries. Rank 0 only. */
int dem_summary_write(const char *path, const struct dem_sim *sim, const dem_summary_rank_t *ranks, char *err,
                      size_t errlen);

/* Reads the numbers under `keys` of the JSON object in path into vals (NAN where a key is
 * missing or not a number). 0, or -1 with a message when the file is not a JSON object. */
int dem_summary_read_reals(const char *path, const char *const *keys, double *vals, int n, char *err, size_t errlen);
/* A node's measurements as one line of JSON (malloc'd; NULL when out of memory). */
char *dem_summary_probe_node(const struct dem_probe_node *nd);
/* DIR/probe.json from what rank 0 gathered, atomically. 0, or -1 with a message. */
int dem_summary_probe_write(const char *path, const struct dem_probe_report *r, char *err, size_t errlen);

#endif
