#include "base/timers.h"

#include <string.h>

#include "base/clock.h"
#include "base/parallel.h"

static const char *names[DEM_T_COUNT] = {
  "total", "  repartition", "  ghosts", "    wait", "  compute", "    search", "    forces", "    integrate", "  output"};

void dem_timers_reset(dem_timers_t *t) { memset(t, 0, sizeof *t); }
void dem_timer_start(dem_timers_t *t, dem_timer_t h) { t->start[h] = dem_clock_now(); }

void dem_timer_stop(dem_timers_t *t, dem_timer_t h)
{
  t->total[h] += dem_clock_now() - t->start[h];
  t->count[h]++;
}

void dem_timer_add(dem_timers_t *t, dem_timer_t h, double seconds)
{
  t->total[h] += seconds;
  t->count[h]++;
}

const char *dem_timer_name(dem_timer_t h) { return (h >= 0 && h < DEM_T_COUNT) ? names[h] : "?"; }

void dem_timers_report(const dem_timers_t *t, FILE *out)
{
  double mn[DEM_T_COUNT], mx[DEM_T_COUNT], avg[DEM_T_COUNT];
  memcpy(mn, t->total, sizeof mn);
  memcpy(mx, t->total, sizeof mx);
  memcpy(avg, t->total, sizeof avg);
  dem_parallel_min_double(mn, DEM_T_COUNT);
  dem_parallel_max_double(mx, DEM_T_COUNT);
  dem_parallel_sum_double(avg, DEM_T_COUNT);
  if (dem_parallel_rank() != 0 || !out) return;
  int n = dem_parallel_size();
  fprintf(out, "%-16s %12s %12s %12s %12s %10s\n", "timer", "rank0 s", "min s", "avg s", "max s", "calls");
  for (int h = 0; h < DEM_T_COUNT; h++)
    fprintf(out, "%-16s %12.6g %12.6g %12.6g %12.6g %10ld\n", names[h], t->total[h], mn[h], avg[h] / n, mx[h], t->count[h]);
}
