/* The plain-C reference of every DEM kernel (the kernels/ folder), one function per kernel step,
 * written separately from the OpenCL code but with the same order of floating-point operations
 * (both sides build without FMA contraction), so that the two agree to rounding. The reference
 * backend of the engine runs these; tests compare the kernels against them.
 *
 * All functions work on owned particles [0, n) of the store; ghosts [n, n + n_ghost) are read
 * only. Contact law (Hertz normal + damping, tangential spring + damping capped by Coulomb
 * friction) and slot layout: see engine.h and particles.h. */
#ifndef DEMSIM_DEM_PHYSICS_REF_H
#define DEMSIM_DEM_PHYSICS_REF_H

#include <math.h>
#include <stddef.h>

#include "dem/particles.h"

struct dem_params;
struct dem_grid;

/* What a search found: slots written, and the first particle whose partners did not fit. */
typedef struct dem_search_result {
  double pairs;          /* slots written (walls included) */
  double walls;          /* of which wall slots */
  double wall_particles; /* owned particles with wall slots (dem_ref_wall_list) */
  int overflow;          /* 1 when some particle has more than DEM_MAX_NEIGHBORS partners */
  dem_gid_t overflow_gid;  /* its global id */
  int overflow_count;    /* how many partners it has */
  int unfit;             /* the largest partner count of the particles with more partners than
                            p->slots, whose slots were left as they were; 0 when all fit */
} dem_search_result_t;

/* What a force step did: slots visited and slots in contact (overlap > 0). */
typedef struct dem_force_result {
  double pairs;
  double contacts;
} dem_force_result_t;

/* The contact law's constants, derived once from the parameters (also passed to the kernels). */
typedef struct dem_ref_law {
  double dt;     /* s */
  double kn;     /* Pa, 4/3 E*: normal stiffness k = kn sqrt(R*) */
  double kt;     /* Pa, 8 G*: tangential stiffness k_t = kt sqrt(R*) sqrt(delta) */
  double damp_n; /* -, normal damping alpha: c_n = alpha sqrt(m* k) delta^{1/4} */
  double gt;     /* -, damp_t sqrt(6 G* / E*): gamma_t = damp_t sqrt(m* k_t) = gt sqrt(m* k) delta^{1/4} */
  double mu;     /* -, friction coefficient */
} dem_ref_law_t;
dem_ref_law_t dem_ref_law(const struct dem_params *prm);

/* mass (kg) of a sphere of radius r (m): mass_factor = density * 4/3 pi (kg/m^3) */
static inline double dem_ref_mass(double mass_factor, double r) { return mass_factor * r * r * r; }
double dem_ref_mass_factor(const struct dem_params *prm);

/* Rebuilds the slots of every owned particle from the grid (built over [0, n + n_ghost) with
 * cells >= 2 r_max + skin), carrying each still-listed partner's spring (matched by gid). */
dem_search_result_t dem_ref_search(dem_particles_t *p, const struct dem_params *prm, const struct dem_grid *g);

/* The wall list of the kernels (kernels/boundaries.cl: dem_wall_list): the owned particles that
 * have wall slots (their first slot is a wall: walls have negative gids and come first),
 * ascending, into list (when not NULL, room for p->n). Returns how many. */
size_t dem_ref_wall_list(const dem_particles_t *p, int32_t *list);

/* force, torque = sum over particle slots (walls skipped), springs updated */
dem_force_result_t dem_ref_forces(dem_particles_t *p, const struct dem_params *prm);
/* force, torque += sum over wall slots, springs updated */
dem_force_result_t dem_ref_boundaries(dem_particles_t *p, const struct dem_params *prm);
/* force += m g */
void dem_ref_external(dem_particles_t *p, const struct dem_params *prm);

/* v += kick dt F/m, w += kick dt T/I, x += dt v. Returns max over particles of (|v| dt)^2
 * (m^2), rounded to float as the kernel does (see dem_ref_displacement_bound). */
double dem_ref_kick_drift(dem_particles_t *p, const struct dem_params *prm, double kick);
/* v += dt/2 F/m, w += dt/2 T/I */
void dem_ref_kick(dem_particles_t *p, const struct dem_params *prm);

/* The kernel reports the step's largest squared displacement (m^2) as float bits (a 32-bit
 * atomic_max; squared to spare a root per particle); this is the displacement (m) the host
 * counts for it, rounded up beyond the float's rounding so the test stays conservative. */
static inline double dem_ref_displacement_bound(float d2) { return sqrt((double)d2) * (1.0 + 1e-6); }

/* Brute force O(n) partner list of owned particle i (gids, ascending, at most max stored):
 * particles j != i in [0, n + n_ghost) with |x_j - x_i| < r_i + r_j + skin, and walls closer
 * than r_i + skin. Returns the number of partners (may exceed max). For tests. */
int dem_ref_brute_neighbors(const dem_particles_t *p, const struct dem_params *prm, size_t i,
                            dem_gid_t *gids, int max);

#endif
