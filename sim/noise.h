/* The generator of the noise model (scenario keys noise.*; solver/base/clock.h: dem_noise_t).
 *
 * Each noisy resource (a container's cores, a node's memory bus, a link) gets its own speed factor
 * f_k, k = 0, 1, ..., one per time step dt, from a stationary Ornstein-Uhlenbeck process sampled
 * at dt (an AR(1) series):
 *   z_0 ~ N(0, 1),  z_{k+1} = rho z_k + sqrt(1 - rho^2) e_k,  e_k ~ N(0, 1),  rho = exp(-dt / tau)
 *   x_k = s z_k,  s^2 = ln(1 + cv^2)                            (mean 0, variance s^2, lag-k
 *                                                                autocorrelation rho^k = exp(-k dt/tau))
 *   f_k = exp(x_k - s^2 / 2)                                    (lognormal: positive, mean 1,
 *                                                                coefficient of variation cv)
 * The factor's lag-k autocorrelation is (exp(s^2 rho^k) - 1) / cv^2, which tends to rho^k for small cv.
 * The normals are Box-Muller pairs from xoshiro256** seeded by splitmix64 from the seed and a
 * 64-bit FNV-1a hash of the resource's name (with its kind: "cpu:", "mem:", "net:"), so each
 * resource has its own deterministic stream and the same seed gives the same profiles whatever
 * the order in which resources or ranks are visited.
 * Plain C, no SimGrid: tests/test_noise.c checks the statistics. */
#ifndef DEMSIM_SIM_NOISE_H
#define DEMSIM_SIM_NOISE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sim_rng {
  uint64_t s[4]; /* xoshiro256** state */
  double spare;  /* the second normal of the last Box-Muller pair */
  int has_spare;
} sim_rng_t;

/* 64-bit FNV-1a of a string. */
uint64_t sim_noise_hash(const char *text);
/* Seeds the stream of (seed, name). */
void sim_rng_seed(sim_rng_t *r, uint64_t seed, const char *name);
/* Uniform in [0, 1) (53 bits), and standard normal. */
double sim_rng_uniform(sim_rng_t *r);
double sim_rng_normal(sim_rng_t *r);

/* The standardised OU series z_0..z_{n-1} (mean 0, variance 1, lag-1 correlation exp(-dt/tau)). */
void sim_noise_ou(sim_rng_t *r, double dt, double tau, double *z, size_t n);
/* The speed factors f_0..f_{n-1} of resource `name` (kind prefix included) for the seed:
 * lognormal of mean 1 and coefficient of variation cv over the OU series. cv = 0: all 1. */
void sim_noise_factors(uint64_t seed, const char *name, double cv, double dt, double tau, double *f, size_t n);
/* Closed forms of the factors' statistics: lag-k autocorrelation of f. */
double sim_noise_factor_autocorr(double cv, double dt, double tau, int k);

#ifdef __cplusplus
}
#endif

#endif
