/* Particle output in HDF5 (the only module that calls HDF5), with an XDMF sidecar that
 * ParaView opens directly (temporal collection of Polyvertex grids, as SWIFT writes them).
 *
 * File layout (h5py: f["/Step000100/Coordinates"]):
 *   /StepNNNNNN/  attributes Time (s), Step; datasets
 *       ParticleIDs (int32, N), Coordinates (N x 3, m), Velocities (N x 3, m/s),
 *       AngularVelocities (N x 3, rad/s), Radius (N, m), Owner (int32, N: the rank),
 *       Contacts (int32, N: slots in contact)
 *   /Latest: attribute Group = name of the newest step group
 * Files are written to a temporary name and renamed, so a killed run leaves the previous
 * complete file. Called on one rank only (HDF5 serial). */
#ifndef DEMSIM_IO_OUTPUT_H
#define DEMSIM_IO_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

/* One frame: every particle, in id order, one array per field. */
typedef struct dem_output_frame {
  long step;
  double time;                   /* s, physical time */
  size_t n;
  const int32_t *id, *owner, *contacts;
  const double *pos, *vel, *omega; /* m, m/s, rad/s; 3 per particle */
  const double *radius;            /* m */
} dem_output_frame_t;

/* Appends one frame (a new step group) to path.h5 (created when `create`), and rewrites the
 * XDMF sidecar path.xmf listing every frame in the file. 0, or -1 with a message. */
int dem_output_write_frame(const char *path_base, const dem_output_frame_t *f, int create, char *err, size_t errlen);

/* The same, a block of rows at a time (a writer need not hold the whole frame): open creates
 * the step group with datasets of n rows (in a copy of the file), rows writes f->n rows from
 * row `first` (f->step and f->time unused), close with ok = 1 writes the XDMF sidecar and puts
 * the file in place; with ok = 0, or on any error, the previous file is left as it was. */
typedef struct dem_output_frame_writer dem_output_frame_writer_t;
dem_output_frame_writer_t *dem_output_frame_open(const char *path_base, long step, double time, size_t n, int create,
                                                 char *err, size_t errlen);
/* The file's root attributes: what it is a run of (each string; NULL writes ""). 0, or -1. */
typedef struct dem_output_meta {
  const char *scenario, *file; /* the scenario's name and file */
  const char *config;          /* the effective configuration, one "key = value" a line */
  const char *version, *build; /* demsim's version and build (smpi, native) */
} dem_output_meta_t;
int dem_output_frame_meta(dem_output_frame_writer_t *w, const dem_output_meta_t *m, char *err, size_t errlen);
int dem_output_frame_rows(dem_output_frame_writer_t *w, size_t first, const dem_output_frame_t *f, char *err,
                          size_t errlen);
int dem_output_frame_close(dem_output_frame_writer_t **w, int ok, char *err, size_t errlen);

#endif

/* ---- checkpoints --------------------------------------------------------------------------
 * One HDF5 file holding everything a run needs to continue: the step, the integrator state,
 * the balancing state (weights, counters), the problem's defining parameters (to refuse a
 * restart of another problem), and every particle with its contact history:
 *   /Particles/{ParticleIDs, Coordinates, Velocities, AngularVelocities, Forces, Torques,
 *               Radius, SlotCount, SlotPartner (N x DEM_MAX_NEIGHBORS), Springs (N x M x 3)}
 *   /Weights (one per rank of the run that wrote it)
 * Written by every rank in turn into a temporary file (rank order, offsets from a prefix sum)
 * and renamed by rank 0, so a run killed while writing leaves the previous checkpoint whole. */
#define DEM_CHECKPOINT_MAX_KEYS 24

struct dem_particles;

typedef struct dem_checkpoint_header {
  long step;              /* steps done */
  long total;             /* particles */
  int ranks;              /* ranks of the run that wrote it */
  int repartitions;
  long searches;
  double kick;            /* the next kick_drift's kick factor (velocity Verlet state) */
  double lambda_max, lambda_last; /* % */
  double sim_time;        /* s, simulated (or wall) time of the loop so far */
  int n_keys;             /* the problem's defining parameters, compared on restart */
  char key[DEM_CHECKPOINT_MAX_KEYS][40];
  double value[DEM_CHECKPOINT_MAX_KEYS];
} dem_checkpoint_header_t;

/* Creates the file (sized for h->total particles) with the header and weights. */
int dem_output_checkpoint_create(const char *path, const dem_checkpoint_header_t *h, const double *weights,
                                 char *err, size_t errlen);
/* Writes owned particles [0, p->n) at rows [offset, offset + n). */
int dem_output_checkpoint_write(const char *path, long offset, const struct dem_particles *p, char *err, size_t errlen);
/* Reads the header and up to max_weights weights (*n_weights gets the count). */
int dem_output_checkpoint_read_header(const char *path, dem_checkpoint_header_t *h, double *weights, int max_weights,
                                      int *n_weights, char *err, size_t errlen);
/* Appends rows [first, first + count) to p as owned particles. */
int dem_output_checkpoint_read(const char *path, long first, long count, struct dem_particles *p, char *err,
                               size_t errlen);
