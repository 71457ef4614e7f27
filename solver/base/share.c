/* Process-wide named slots (see share.h). A fixed table, never freed: a handful of names per
 * process, each set up once per run. */
#include "base/share.h"

#include <pthread.h>
#include <string.h>

#define DEM_SHARE_SLOTS 16
#define DEM_SHARE_NAME 32

static pthread_mutex_t dem_share_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct {
  char name[DEM_SHARE_NAME];
  void *value;
} dem_share_table[DEM_SHARE_SLOTS];

void dem_share_lock(void) { pthread_mutex_lock(&dem_share_mutex); }
void dem_share_unlock(void) { pthread_mutex_unlock(&dem_share_mutex); }

void **dem_share_slot(const char *name)
{
  if (!name || strlen(name) >= DEM_SHARE_NAME) return NULL;
  for (int k = 0; k < DEM_SHARE_SLOTS; ++k) {
    if (dem_share_table[k].name[0] == '\0') {
      strcpy(dem_share_table[k].name, name);
      return &dem_share_table[k].value;
    }
    if (strcmp(dem_share_table[k].name, name) == 0) return &dem_share_table[k].value;
  }
  return NULL;
}
