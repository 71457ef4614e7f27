/* The native build's clock: real time has already passed, so charging does nothing. */
#include "base/clock.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

int dem_clock_init(char *err, unsigned long errlen) { (void)err; (void)errlen; return 0; }

int dem_clock_start_stress(const dem_stress_t *s, int count, char *err, unsigned long errlen)
{
  (void)s; (void)count; (void)err; (void)errlen;
  return 0;
}

int dem_clock_set_noise(const dem_noise_t *n, char *err, unsigned long errlen)
{
  (void)n; (void)err; (void)errlen;
  return 0;
}

void dem_clock_set_seed(const dem_noise_t *n) { (void)n; }

void dem_clock_set_measured(double local_flops) { (void)local_flops; }

void dem_clock_set_code_cost(double factor) { (void)factor; }

int dem_clock_charge(const dem_work_t *w) { (void)w; return 0; }

void dem_clock_moved(const char *peer, double bytes, int sending)
{
  (void)peer;
  (void)bytes;
  (void)sending;
}

void dem_clock_blocked(double seconds) { (void)seconds; }

void dem_clock_synced(void) {}

int dem_clock_modelled(void) { return 0; }

double dem_clock_now(void) { return dem_clock_wall(); }

double dem_clock_wall(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *dem_clock_where(void) { return "native"; }

const char *dem_clock_host(void)
{
  static char name[256];
  if (!name[0] && gethostname(name, sizeof name - 1) != 0) snprintf(name, sizeof name, "unknown");
  return name;
}
