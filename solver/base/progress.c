#include "base/progress.h"

#include <unistd.h>

#include "base/clock.h"

void dem_progress_start(dem_progress_t *p, FILE *out, long first, long steps)
{
  p->first = first;
  p->out = out;
  p->tty = out && isatty(fileno(out));
  p->steps = steps;
  long every = steps / 20 > 0 ? steps / 20 : 1;
  p->next = (first / every + 1) * every;
  p->wall_start = dem_clock_wall();
  p->last_print = 0;
}

void dem_progress_update(dem_progress_t *p, long step, double sim_time, double clock, double lambda, int repartitions)
{
  if (!p->out) return;
  double now = dem_clock_wall(), wall = now - p->wall_start;
  if (p->tty ? (now - p->last_print < 0.25 && step < p->steps) : step < p->next) return;
  long done = step - p->first;
  double eta = done > 0 ? wall * (double)(p->steps - step) / (double)done : 0.0;
  /* the simulated time so far (SMPI: the modelled cloud's clock); natively it is the wall time */
  char simulated[48] = "";
  if (dem_clock_modelled()) snprintf(simulated, sizeof simulated, "  simulated %.4g s", clock);
  fprintf(p->out, "%sstep %ld/%ld (%3.0f%%)  physical t %.4g s%s  wall %.1f s  ETA %.1f s  lambda %.1f%%  repartitions %d%s",
          p->tty ? "\r" : "", step, p->steps, 100.0 * (double)step / (double)p->steps, sim_time, simulated, wall, eta,
          lambda, repartitions, p->tty ? "   " : "\n");
  fflush(p->out);
  p->last_print = now;
  if (!p->tty)
    while (p->next <= step) p->next += p->steps / 20 > 0 ? p->steps / 20 : 1;
}

void dem_progress_end(dem_progress_t *p)
{
  if (p->out && p->tty) fprintf(p->out, "\n");
}
