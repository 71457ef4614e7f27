/* A scenario's containers placed on the real machines of its host map (native.hostmap): the
 * checks of the map against the scenario and each rank's host and cores, for the native
 * launcher's Open MPI hostfile and rankfile. Every check fails with the map file, the entry
 * index and container, and what was expected. */
#ifndef DEMSIM_RUN_PLACEMENT_H
#define DEMSIM_RUN_PLACEMENT_H

#include <stddef.h>

struct dem_hostmap;
struct dem_scenario;

/* Where each rank runs: its real host and its cores (rankfile slot syntax). */
typedef struct dem_placement {
  char host[256];
  char slot[256];
} dem_placement_t;

/* Checks the map against the scenario (containers present, hosts resolve, core ids exist,
 * rank containers' cores disjoint per real host, ranks <= cores) and fills place[r] for each
 * rank. Notes (a stress container sharing cores with a rank container) go to `notes`
 * (a FILE *, may be NULL). 0, or -1 with a message. */
int dem_placement_check(const struct dem_hostmap *m, const struct dem_scenario *s, dem_placement_t *place, void *notes,
                        char *err, size_t errlen);

#ifndef DEMSIM_SMPI
/* Native build, without a host map: every container of platform.hosts must be a host of
 * platform.file, as the SMPI build's launcher checks (demsim-routes, beside this program, asks
 * SimGrid; where the tool is missing the check is skipped). 0, or -1 with a message (bad input). */
int dem_placement_check_hosts(const struct dem_scenario *s, char *err, size_t errlen);
#endif

#endif
