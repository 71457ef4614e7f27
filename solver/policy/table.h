/* The table of load-balancing policies (policy.h: what a policy is), by name. */
#ifndef DEMSIM_POLICY_TABLE_H
#define DEMSIM_POLICY_TABLE_H

#include "policy/policy.h"

/* The policy called `name`, or NULL. */
const dem_policy_t *dem_policy_find(const char *name);
/* The table, NULL-terminated (help, `demsim keys`). */
const dem_policy_t *const *dem_policy_table(void);

#endif
