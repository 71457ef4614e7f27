/* The noise model's generator: see noise.h. */
#include "noise.h"

#include <math.h>

uint64_t sim_noise_hash(const char *text)
{
  uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a 64 offset basis */
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    h ^= *p;
    h *= 0x100000001b3ULL; /* FNV 64 prime */
  }
  return h;
}

static uint64_t splitmix64(uint64_t *x)
{
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void sim_rng_seed(sim_rng_t *r, uint64_t seed, const char *name)
{
  uint64_t x = seed ^ sim_noise_hash(name);
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
  r->has_spare = 0;
  r->spare = 0.0;
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t next(sim_rng_t *r)
{
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double sim_rng_uniform(sim_rng_t *r) { return (double)(next(r) >> 11) * 0x1.0p-53; }

double sim_rng_normal(sim_rng_t *r)
{
  if (r->has_spare) {
    r->has_spare = 0;
    return r->spare;
  }
  double u = 1.0 - sim_rng_uniform(r); /* (0, 1]: log(u) finite */
  double v = sim_rng_uniform(r);
  double rad = sqrt(-2.0 * log(u)), ang = 6.283185307179586 * v;
  r->spare = rad * sin(ang);
  r->has_spare = 1;
  return rad * cos(ang);
}

void sim_noise_ou(sim_rng_t *r, double dt, double tau, double *z, size_t n)
{
  double rho = tau > 0.0 ? exp(-dt / tau) : 0.0, innov = sqrt(1.0 - rho * rho);
  for (size_t k = 0; k < n; k++) z[k] = k == 0 ? sim_rng_normal(r) : rho * z[k - 1] + innov * sim_rng_normal(r);
}

void sim_noise_factors(uint64_t seed, const char *name, double cv, double dt, double tau, double *f, size_t n)
{
  if (!(cv > 0.0)) {
    for (size_t k = 0; k < n; k++) f[k] = 1.0;
    return;
  }
  sim_rng_t r;
  sim_rng_seed(&r, seed, name);
  sim_noise_ou(&r, dt, tau, f, n);
  double s2 = log1p(cv * cv), s = sqrt(s2);
  for (size_t k = 0; k < n; k++) f[k] = exp(s * f[k] - 0.5 * s2);
}

double sim_noise_factor_autocorr(double cv, double dt, double tau, int k)
{
  double s2 = log1p(cv * cv), rho_k = exp(-k * dt / tau);
  return expm1(s2 * rho_k) / (cv * cv);
}
