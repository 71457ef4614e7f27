#include "scenario/packing.h"

#include <stdint.h>

#include "dem/particles.h"
#include "scenario/scenario.h"

/* splitmix64: a reproducible per-site random stream, independent of the rank layout */
static double site_random(uint64_t seed, uint64_t site, int axis)
{
  uint64_t z = seed * 0x9E3779B97F4A7C15ULL + site * 3 + (uint64_t)axis + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return (double)(z >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0; /* [-1, 1) */
}

int dem_packing_generate(const dem_scenario_t *s, const dem_lattice_t *lat, long first, long count, dem_particles_t *p)
{
  size_t base = p->n;
  if (dem_particles_reserve(p, base + (size_t)count + p->n_ghost)) return -1;
  double gap = lat->spacing - lat->diameter;
  double amp = gap > 0 ? 0.5 * s->jitter * gap : 0.0;
  for (long k = 0; k < count; k++) {
    long g = first + k; /* x fastest, then y, then z: layers fill from the floor up */
    long ix = g % lat->nx, iy = (g / lat->nx) % lat->ny, iz = g / (lat->nx * lat->ny);
    size_t i = base + (size_t)k;
    p->id[i] = (dem_gid_t)g;
    double c[3] = {lat->origin[0] + (double)ix * lat->spacing, lat->origin[1] + (double)iy * lat->spacing,
                   lat->origin[2] + (double)iz * lat->spacing};
    for (int a = 0; a < 3; a++) {
      double x = c[a];
      if (amp > 0) x += amp * site_random((uint64_t)s->seed, (uint64_t)g, a);
      p->pos[3 * i + a] = x;
      p->vel[3 * i + a] = 0.0;
      p->omega[3 * i + a] = 0.0;
      p->force[3 * i + a] = 0.0;
      p->torque[3 * i + a] = 0.0;
    }
    p->radius[i] = 0.5 * lat->diameter;
    p->nbr_count[i] = 0;
  }
  p->n = base + (size_t)count;
  return 0;
}
