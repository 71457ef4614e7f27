/* The gravity-packing generator: monosized spheres on a simple cubic lattice filling the
 * lower part of the box (the study's benchmark), at rest. Each rank generates the sites
 * with global ids first..first+count-1, so no rank ever holds the whole problem. */
#ifndef DEMSIM_SCENARIO_PACKING_H
#define DEMSIM_SCENARIO_PACKING_H

struct dem_scenario;
struct dem_particles;
struct dem_lattice;

/* Appends the lattice sites [first, first + count) to p (owned particles). 0 or -1 (memory). */
int dem_packing_generate(const struct dem_scenario *s, const struct dem_lattice *lat, long first, long count,
                         struct dem_particles *p);

#endif
