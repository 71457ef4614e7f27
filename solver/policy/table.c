/* The table of load-balancing policies (see table.h and policy.h). */
#include "policy/table.h"

#include <string.h>

static const dem_policy_t *const table[] = {
  &dem_policy_now, &dem_policy_rw, &dem_policy_rw5, &dem_policy_ewma, &dem_policy_pi, &dem_policy_ruper, NULL,
};

const dem_policy_t *const *dem_policy_table(void) { return table; }

const dem_policy_t *dem_policy_find(const char *name)
{
  for (int i = 0; table[i]; i++)
    if (strcmp(table[i]->name, name) == 0) return table[i];
  return NULL;
}
