/* Placeholder until the ghost exchange lands: one rank has no ghosts. */
#include "ghosts.h"

#include <stdlib.h>

#include "engine.h"
#include "simulation.h"

struct dem_ghosts { int unused; };

dem_ghosts_t *dem_ghosts_create(dem_sim_t *sim, char *err, size_t errlen)
{
  (void)sim; (void)err; (void)errlen;
  return calloc(1, sizeof(dem_ghosts_t));
}

void dem_ghosts_destroy(dem_ghosts_t **g)
{
  free(*g);
  *g = NULL;
}

int dem_ghosts_register(dem_ghosts_t *g, dem_sim_t *sim, char *err, size_t errlen)
{
  (void)g; (void)sim; (void)err; (void)errlen;
  return 0;
}

int dem_ghosts_exchange(dem_ghosts_t *g, dem_sim_t *sim, char *err, size_t errlen)
{
  (void)g; (void)sim; (void)err; (void)errlen;
  return 0;
}

int dem_ghosts_need_search(dem_ghosts_t *g, dem_sim_t *sim)
{
  (void)g;
  return dem_engine_needs_search(sim->engine);
}

size_t dem_ghosts_count(const dem_ghosts_t *g) { (void)g; return 0; }
double dem_ghosts_comm_time(const dem_ghosts_t *g) { (void)g; return 0.0; }
