/* Names of the work kinds reported to the clock (shared by both builds). */
#include "base/clock.h"

const char *dem_clock_kind_name(dem_work_kind_t k)
{
  static const char *names[DEM_WORK_KIND_COUNT] = {
    "search", "forces", "boundaries", "external", "forces_all", "integrate", "binning",
    "copy_d2h", "copy_h2d", "pack", "partition", "output", "storage", "first_touch", "scan", "permute"};
  return (k >= 0 && k < DEM_WORK_KIND_COUNT) ? names[k] : "unknown";
}
