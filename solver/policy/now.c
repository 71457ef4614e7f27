/* NOW: equal parts, the weights never change (the study's baseline). */
#include "policy/policy.h"

#include <stddef.h>

static int now_update(void *state, const double *w_old, const double *loads, int n, double lambda, double *w_new)
{
  (void)state, (void)w_old, (void)loads, (void)n, (void)lambda, (void)w_new;
  return 0;
}

const dem_policy_t dem_policy_now = {"NOW", "equal weights, never changed", NULL, NULL, now_update, NULL};
