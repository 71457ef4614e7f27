/* Placeholder until the Zoltan RCB partition lands: one rank owns everything. */
#include "partition.h"

#include <stdio.h>
#include <stdlib.h>

#include "simulation.h"

struct dem_partition { int ranks; };

dem_partition_t *dem_partition_create(dem_sim_t *sim, char *err, size_t errlen)
{
  if (sim->ranks > 1) {
    snprintf(err, errlen, "more than one rank needs the Zoltan partition, not built yet");
    return NULL;
  }
  dem_partition_t *pt = calloc(1, sizeof *pt);
  if (pt) pt->ranks = sim->ranks;
  return pt;
}

void dem_partition_destroy(dem_partition_t **pt)
{
  free(*pt);
  *pt = NULL;
}

int dem_partition_repartition(dem_partition_t *pt, dem_sim_t *sim, const double *weights, char *err, size_t errlen)
{
  (void)pt; (void)sim; (void)weights; (void)err; (void)errlen;
  return 0;
}

int dem_partition_box_ranks(const dem_partition_t *pt, const double lo[3], const double hi[3], int *out, int max)
{
  (void)pt; (void)lo; (void)hi; (void)out; (void)max;
  return 0;
}
