#include "run/safety.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/parallel.h"
#include "dem/particles.h"
#include "scenario/scenario.h"
#include "scenario/state.h"

#define MSG 512

/* The first problem of particle i, or 0. */
static int check_one(const dem_sim_t *sim, size_t i, double limit, char *msg, size_t len)
{
  const dem_particles_t *p = sim->p;
  const dem_params_t *prm = &sim->prm;
  long step = sim->step;
  int id = p->id[i];
  for (int a = 0; a < 3; a++) {
    double x = p->pos[3 * i + a], v = p->vel[3 * i + a], w = p->omega[3 * i + a];
    if (!isfinite(x) || !isfinite(v) || !isfinite(w)) {
      snprintf(msg, len, "step %ld: particle %d has a non-finite %s (%g): the time step (time.dt = %g s) is too large "
               "for the contact stiffness, or the material is invalid (material.youngs_modulus, material.density)",
               step, id, !isfinite(x) ? "position" : !isfinite(v) ? "velocity" : "angular velocity",
               !isfinite(x) ? x : !isfinite(v) ? v : w, prm->dt);
      return 1;
    }
    double r = p->radius[i];
    if (x < prm->box_lo[a] - r || x > prm->box_hi[a] + r) {
      snprintf(msg, len, "step %ld: particle %d left the box (%c = %g m, box [%g, %g] m): it went through a wall, so "
               "the time step (time.dt = %g s) is too large for its speed (%g m/s)", step, id, "xyz"[a], x,
               prm->box_lo[a], prm->box_hi[a], prm->dt, fabs(v));
      return 1;
    }
  }
  for (int k = 0; k < p->nbr_count[i]; k++) {
    size_t slot = i * (size_t)p->slots + (size_t)k;
    int j = p->nbr_index[slot];
    double ri = p->radius[i], overlap, rmin;
    if (j >= 0) {
      double d2 = 0;
      for (int a = 0; a < 3; a++) {
        double dx = p->pos[3 * (size_t)j + a] - p->pos[3 * i + a];
        d2 += dx * dx;
      }
      overlap = ri + p->radius[j] - sqrt(d2);
      rmin = fmin(ri, p->radius[j]);
    } else {
      int w = -1 - j, axis = w / 2;
      double plane = (w % 2) ? prm->box_hi[axis] : prm->box_lo[axis];
      overlap = ri - fabs(p->pos[3 * i + (size_t)axis] - plane);
      rmin = ri;
    }
    if (overlap > limit * rmin) {
      snprintf(msg, len, "step %ld: particle %d overlaps %s %d by %.3g of its radius (limit %g): the time step "
               "(time.dt = %g s) is too large for the impact speeds, or the material too soft "
               "(material.youngs_modulus = %g Pa) for the loads", step, id, j >= 0 ? "particle" : "wall",
               j >= 0 ? p->nbr_gid[slot] : -1 - j, overlap / rmin, limit, prm->dt, prm->mat.youngs_modulus);
      return 1;
    }
  }
  return 0;
}

int dem_safety_check(dem_sim_t *sim, double overlap_limit, char *err, size_t errlen)
{
  char msg[MSG] = "";
  double bad = (double)INT_MAX;
  for (size_t i = 0; i < sim->p->n; i++)
    if (check_one(sim, i, overlap_limit, msg, sizeof msg)) {
      bad = sim->p->id[i]; /* ids ascend within a rank's store only after migration; keep the first */
      break;
    }
  double lowest = bad;
  dem_parallel_min_double(&lowest, 1);
  if (lowest >= (double)INT_MAX) return 0;
  /* the message of the rank that owns the lowest bad id reaches rank 0 */
  int mine = bad == lowest;
  double owner = mine ? (double)sim->rank : (double)INT_MAX;
  dem_parallel_min_double(&owner, 1);
  if ((int)owner != 0) {
    if (sim->rank == (int)owner) dem_parallel_send_bytes(msg, MSG, 0);
    if (sim->rank == 0) dem_parallel_recv_bytes(msg, MSG, (int)owner);
  }
  if (sim->rank == 0) snprintf(err, errlen, "%s", msg);
  else snprintf(err, errlen, "numerical failure reported by rank 0");
  return -1;
}
