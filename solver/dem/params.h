/* Physical and numerical parameters of a run, with the constants derived from them once at
 * set-up (dem_params_derive). The same struct is passed, field by field, to the OpenCL
 * kernels, so it holds plain doubles only. */
#ifndef DEMSIM_DEM_PARAMS_H
#define DEMSIM_DEM_PARAMS_H

#include <stddef.h>

typedef struct dem_material {
  double youngs_modulus; /* Pa */
  double poisson;        /* - */
  double restitution;    /* -, normal coefficient of restitution, in (0, 1] */
  double friction;       /* -, Coulomb friction coefficient mu */
  double density;        /* kg/m^3 */
} dem_material_t;

typedef struct dem_params {
  dem_material_t mat;
  double dt;            /* s, time step */
  double gravity[3];    /* m/s^2 */
  double box_lo[3];     /* m, lower corner of the box (walls) */
  double box_hi[3];     /* m, upper corner */
  double skin;          /* m, added to the contact cutoff of the neighbour search */
  /* derived by dem_params_derive() */
  double e_star;        /* Pa, effective Young's modulus E / (2 (1 - nu^2)) for one material */
  double g_star;        /* Pa, effective shear modulus G / (2 (2 - nu)), G = E / (2 (1 + nu)) */
  double damp_n;        /* -, alpha: normal damping c_n = alpha sqrt(m* k), gives `restitution` exactly */
  double damp_t;        /* -, tangential damping factor: gamma_t = damp_t sqrt(m* k_t) */
} dem_params_t;

/* Fills the derived fields. Returns 0, or -1 with a message in err when a value is out of range. */
int dem_params_derive(dem_params_t *p, char *err, size_t errlen);

/* Rayleigh critical time step (s) of a sphere of radius r (m) of the material. */
double dem_params_rayleigh_dt(const dem_params_t *p, double r);

/* The damping factor alpha for which a Hertz contact with normal force
 *   F = k d^{3/2} + alpha sqrt(m* k) d^{1/4} d',   clamped at F >= 0,
 * has restitution coefficient e (independent of impact velocity and k). Found by bisection
 * on the dimensionless contact ODE. */
double dem_params_damping_for_restitution(double e);

#endif
