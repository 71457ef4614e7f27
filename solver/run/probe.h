/* `demsim probe` (native build): measures every node of a real cluster (memory bandwidth, FP64
 * rate, the DEM kernels' rate on 1..all cores, OpenCL devices) and every pair of ranks (MPI
 * ping-pong), and writes DIR/probe.json (format "demsim-probe-1"), from which
 * platforms/make_platforms.py --probe generates a SimGrid platform of that cluster. */
#ifndef DEMSIM_RUN_PROBE_H
#define DEMSIM_RUN_PROBE_H

#include "io/probe_record.h"


/* What the SMPI build answers to `demsim probe` (exit status 2). */
extern const long dem_probe_sizes[DEM_PROBE_SIZES]; /* B, the ping-pong message sizes */

#define DEM_PROBE_NATIVE_ONLY "probe measures real machines: use the native build (build/native/demsim probe)"

struct dem_cli;

/* `demsim probe`: starts itself under mpirun when it is not an MPI rank yet, else measures.
 * Returns the exit status: 0, 1 (a measurement or a write failed) or 2 (bad input). */
int dem_probe_main(int argc, char **argv, const struct dem_cli *cli);

#endif
