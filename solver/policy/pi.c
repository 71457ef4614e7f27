/* PI: a discrete proportional-integral controller on the relative load error (K. J. Astrom and
 * T. Hagglund, "PID Controllers: Theory, Design, and Tuning", 1995, ch. 3: the velocity form
 * and integrator anti-windup by clamping).
 *
 * e_i = 1 - L_i / L_avg (positive: the rank is faster than average and should get more);
 * I_i <- I_i + e_i, clamped so that |Ki I_i| <= 0.5 (anti-windup: a rank that stays slow,
 * whatever its share, cannot drive the integral without bound);
 * W_i <- W_i (1 + Kp e_i + Ki I_i). With Kp = 1 and Ki = 0 this is RW's own step. */
#include "policy/policy.h"

#include <stdlib.h>

typedef struct pi {
  double kp, ki;
  double integral[]; /* per rank */
} pi_t;

#define PI_INTEGRAL_MAX 0.5 /* -, largest |Ki I_i| */

void dem_policy_pi_step(double kp, double ki, double *integral, const double *w_old, const double *load, int n,
                        double *w_new)
{
  double sum = 0;
  for (int i = 0; i < n; i++) sum += load[i];
  double avg = sum / n;
  for (int i = 0; i < n; i++) {
    if (!(avg > 0)) {
      w_new[i] = w_old[i];
      continue;
    }
    double e = 1.0 - load[i] / avg;
    integral[i] += e;
    if (ki > 0) {
      double lim = PI_INTEGRAL_MAX / ki;
      if (integral[i] > lim) integral[i] = lim;
      if (integral[i] < -lim) integral[i] = -lim;
    }
    w_new[i] = w_old[i] * (1.0 + kp * e + ki * integral[i]);
  }
  dem_policy_floor_normalise(w_old, w_new, n);
}

static void *pi_init(const dem_policy_params_t *p, int n, int *ok)
{
  pi_t *c = calloc(1, sizeof *c + (size_t)n * sizeof c->integral[0]);
  *ok = c != NULL;
  if (c) c->kp = p->pi_kp, c->ki = p->pi_ki;
  return c;
}

static int pi_update(void *state, const double *w_old, const double *loads, int n, double lambda, double *w_new)
{
  (void)lambda;
  pi_t *c = state;
  dem_policy_pi_step(c->kp, c->ki, c->integral, w_old, loads, n, w_new);
  return 1;
}

const dem_policy_t dem_policy_pi = {"PI", "proportional-integral update from e_i = 1 - L_i/L_avg (run.pi_kp, run.pi_ki)",
                                    pi_init, free, pi_update, NULL};
