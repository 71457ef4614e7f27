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
#ifndef DEMSIM_SOLVER_OUTPUT_H
#define DEMSIM_SOLVER_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

typedef struct dem_output_record {
  int32_t id;
  int32_t owner;
  int32_t contacts;
  int32_t pad;
  double pos[3], vel[3], omega[3]; /* m, m/s, rad/s */
  double radius;                   /* m */
} dem_output_record_t;

typedef struct dem_output_frame {
  long step;
  double time;                   /* s, simulated physical time */
  size_t n;
  const dem_output_record_t *rec; /* sorted by id */
} dem_output_frame_t;

/* Appends one frame (a new step group) to path.h5 (created when `create`), and rewrites the
 * XDMF sidecar path.xmf listing every frame in the file. 0, or -1 with a message. */
int dem_output_write_frame(const char *path_base, const dem_output_frame_t *f, int create, char *err, size_t errlen);

#endif
