#include "failure/failure_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void dem_failure_log_path(const char *dir, char *path, size_t len) { snprintf(path, len, "%s/failures.txt", dir); }

static void parse_line(const char *line, dem_failure_log_t *log)
{
  int k = 0, ranks = 0, w = 0;
  long step = 0, cstep = 0;
  double a = 0, b = 0;
  char host[64];
  if (sscanf(line, "job %lf", &a) == 1) {
    log->job_t0 = a;
  } else if (sscanf(line, "attempt %d start %lf loop %lf ranks %d", &k, &a, &b, &ranks) == 4 &&
             log->n_attempts < DEM_FAILURE_MAX) {
    log->attempt[log->n_attempts].start = a;
    log->attempt[log->n_attempts].loop = b;
    log->attempt[log->n_attempts++].ranks = ranks;
  } else if (sscanf(line, "checkpoint %d step %ld at %lf cost %lf", &k, &step, &a, &b) == 4) {
    log->n_checkpoints++;
    log->checkpoint_s += b;
  } else if (sscanf(line, "failure %d host %63s at %lf step %ld checkpoint_step %ld written %d kept_until %lf", &k, host,
                    &a, &step, &cstep, &w, &b) == 7 && log->n_losses < DEM_FAILURE_MAX) {
    dem_failure_loss_t *l = &log->loss[log->n_losses++];
    *l = (dem_failure_loss_t){.attempt = k, .at = a, .step = step, .checkpoint_step = cstep, .written = w,
                              .kept_until = b};
    snprintf(l->host, sizeof l->host, "%s", host);
  }
}

int dem_failure_log_read(const char *dir, dem_failure_log_t *log)
{
  char path[1100], line[512];
  dem_failure_log_path(dir, path, sizeof path);
  memset(log, 0, sizeof *log);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  while (fgets(line, sizeof line, f)) parse_line(line, log);
  fclose(f);
  return 0;
}

int dem_failure_log_start(const char *dir, double job_t0)
{
  char path[1100];
  dem_failure_log_path(dir, path, sizeof path);
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "job %.17g\n", job_t0);
  return fclose(f) ? -1 : 0;
}

int dem_failure_log_append(const char *dir, const char *fmt, ...)
{
  char path[1100];
  dem_failure_log_path(dir, path, sizeof path);
  FILE *f = fopen(path, "a");
  if (!f) return -1;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
  fputc('\n', f);
  return fclose(f) ? -1 : 0;
}

const dem_failure_loss_t *dem_failure_log_loss(const dem_failure_log_t *log, int attempt)
{
  for (int i = log->n_losses - 1; i >= 0; i--)
    if (log->loss[i].attempt == attempt) return &log->loss[i];
  return NULL;
}
