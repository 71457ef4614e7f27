/* The speed monitor of report-driven policies (see monitor.h). */
#include "balance/monitor.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/parallel.h"

/* Steps between rank 0's decision and the checkpoint it is for: time for the message to
 * arrive before the other ranks need it (monitor.h). */
#define DECISION_LEAD 2
/* Tags of the two mailboxes (the ghosts use 31 and 32). */
enum { TAG_REPORT = 41, TAG_DECISION = 42 };

/* A speed report, as sent. */
typedef struct report {
  double speed;     /* particle-steps per second of the rank's own load (COMPUTE) */
  double pace;      /* particle-steps per second of the rank's elapsed time (waits included) */
  double done;      /* particle-steps done by the rank since the start */
  double particles; /* the rank's count when it reported */
  double step;      /* the step it reported at */
} report_t;

struct dem_monitor {
  const dem_policy_t *policy;
  void *state; /* the policy's */
  dem_policy_params_t p;
  dem_monitor_run_t run;
  long lead;
  dem_parallel_mailbox_t *reports, *decisions;
  /* this rank's report window */
  long interval, window_start;
  double window_work, window_compute, window_clock, work_done, last_speed;
  /* rank 0: each rank's last report and when it arrived */
  report_t *last;
  double *t_report;
  long since;     /* reports made before this step are of parts since replaced */
  long received;
  double *speed, *pace, *done; /* rank 0: the reports' figures, per rank */
  /* a decision as sent: repartition, have (every rank reported), lambda, t_res, t_min, then
   * weights[n] and loads[n] */
  double *msg;
};

#define MSG_HEAD 5
static size_t msg_doubles(int n) { return MSG_HEAD + 2 * (size_t)n; }

dem_monitor_t *dem_monitor_create(const dem_policy_t *policy, void *state, const dem_policy_params_t *p,
                                  const dem_monitor_run_t *run)
{
  dem_monitor_t *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->policy = policy;
  m->state = state;
  m->p = *p;
  m->run = *run;
  m->lead = run->every > DECISION_LEAD ? DECISION_LEAD : run->every - 1;
  m->interval = p->ruper_report_min;
  m->window_start = m->since = run->first;
  m->window_compute = -1; /* read at the first step */
  int n = run->ranks;
  m->msg = malloc(msg_doubles(n) * sizeof *m->msg);
  m->reports = dem_parallel_mailbox_create(sizeof(report_t), TAG_REPORT, -1);
  m->decisions = dem_parallel_mailbox_create(msg_doubles(n) * sizeof(double), TAG_DECISION, 0);
  if (run->rank == 0) {
    m->last = calloc((size_t)n, sizeof *m->last);
    m->t_report = calloc((size_t)n, sizeof *m->t_report);
    m->speed = calloc((size_t)n, sizeof *m->speed);
    m->done = calloc((size_t)n, sizeof *m->done);
    m->pace = calloc((size_t)n, sizeof *m->pace);
  }
  if (!m->msg || !m->reports || !m->decisions ||
      (run->rank == 0 && (!m->last || !m->t_report || !m->speed || !m->done || !m->pace))) {
    dem_monitor_destroy(&m);
    return NULL;
  }
  return m;
}

void dem_monitor_destroy(dem_monitor_t **m)
{
  if (!*m) return;
  dem_parallel_mailbox_destroy(&(*m)->reports);
  dem_parallel_mailbox_destroy(&(*m)->decisions);
  free((*m)->last);
  free((*m)->t_report);
  free((*m)->speed);
  free((*m)->done);
  free((*m)->pace);
  free((*m)->msg);
  free(*m);
  *m = NULL;
}

/* Rank 0: keeps a report and the time it arrived. */
static void keep_report(void *ctx, const void *msg, int from)
{
  dem_monitor_t *m = ctx;
  memcpy(&m->last[from], msg, sizeof(report_t));
  m->t_report[from] = dem_clock_now();
  m->received++;
}

/* This rank's report, when its interval is up: the speed over the window, then the next
 * interval from how much the speed moved. 0 or -1. */
static int maybe_report(dem_monitor_t *m, long step, double compute_s)
{
  if (step - m->window_start < m->interval || !(compute_s > m->window_compute)) return 0;
  double now = dem_clock_now();
  report_t r = {.speed = m->window_work / (compute_s - m->window_compute), .done = m->work_done,
                .pace = now > m->window_clock ? m->window_work / (now - m->window_clock) : 0.0,
                .particles = m->window_work / (double)(step - m->window_start), .step = (double)step};
  m->interval = dem_ruper_next_interval(m->interval, r.speed, m->last_speed, m->p.ruper_change,
                                        m->p.ruper_report_min, m->p.ruper_report_max);
  m->last_speed = r.speed;
  m->window_start = step;
  m->window_work = 0;
  m->window_compute = compute_s;
  m->window_clock = now;
  if (m->run.rank == 0) {
    keep_report(m, &r, 0);
    return 0;
  }
  return dem_parallel_mailbox_send(m->reports, &r, 0);
}

/* Rank 0: the decision for the next checkpoint from the last reports, into m->msg. */
static void decide(dem_monitor_t *m, double rep_cost_s)
{
  int n = m->run.ranks;
  double *w = m->msg + MSG_HEAD, *loads = w + n;
  memset(m->msg, 0, msg_doubles(n) * sizeof *m->msg);
  for (int i = 0; i < n; i++) {
    /* a rank that has not reported since the last repartition: nothing to act on yet */
    if (m->last[i].step <= (double)m->since || !(m->last[i].speed > 0)) return;
    m->speed[i] = m->last[i].speed;
    m->pace[i] = m->last[i].pace;
    m->done[i] = m->last[i].done;
    loads[i] = m->last[i].particles / m->speed[i];
  }
  double lambda = dem_balance_imbalance(loads, n);
  /* the work done since a report goes at the rank's pace, not at its own-load speed: a rank
   * also waits for the others and exchanges ghosts (the "guess workers" of RUPER-LB correct
   * the speed by the same gap) */
  double t_res = dem_ruper_remaining(m->done, m->pace, m->t_report, n, dem_clock_now(), m->run.total_work);
  double t_min = m->p.ruper_tmin_factor * rep_cost_s;
  m->msg[1] = 1, m->msg[2] = lambda, m->msg[3] = t_res, m->msg[4] = t_min;
  m->msg[0] = dem_ruper_rebalance(lambda, m->p.ruper_threshold, t_res, t_min) &&
              m->policy->from_speeds(m->state, m->speed, n, w);
}

/* Rank 0: decides for the next checkpoint and sends the decision to every other rank. 0 or -1. */
static int post_decision(dem_monitor_t *m, double rep_cost_s)
{
  decide(m, rep_cost_s);
  for (int r = 1; r < m->run.ranks; r++)
    if (dem_parallel_mailbox_send(m->decisions, m->msg, r)) return -1;
  return 0;
}

/* 1 when checkpoint `at` is in this run (a step starts there) and its decision was sent
 * within it. */
static int checkpoint_in_run(const dem_monitor_t *m, long at)
{
  return at > 0 && at % m->run.every == 0 && at < m->run.last && at - m->lead >= m->run.first;
}

int dem_monitor_step(dem_monitor_t *m, long step, double compute_s, long particles, double rep_cost_s)
{
  if (m->window_compute < 0) {
    m->window_compute = compute_s;
    m->window_clock = dem_clock_now();
  }
  if (step > m->window_start) {
    m->window_work += (double)particles;
    m->work_done += (double)particles;
  }
  if (maybe_report(m, step, compute_s)) return -1;
  if (m->run.rank != 0) return 0;
  report_t r;
  for (int from; dem_parallel_mailbox_test(m->reports, &r, &from);) keep_report(m, &r, from);
  if (checkpoint_in_run(m, step + m->lead)) return post_decision(m, rep_cost_s);
  return 0;
}

void dem_monitor_decision(dem_monitor_t *m, long step, dem_monitor_decision_t *d, double *w, double *loads)
{
  memset(d, 0, sizeof *d);
  if (!checkpoint_in_run(m, step)) return;
  /* rank 0 kept its own copy when it sent the others theirs */
  if (m->run.rank != 0) dem_parallel_mailbox_wait(m->decisions, m->msg, NULL);
  int n = m->run.ranks;
  d->have = m->msg[1] != 0;
  d->repartition = m->msg[0] != 0;
  d->lambda = m->msg[2], d->t_res = m->msg[3], d->t_min = m->msg[4];
  if (d->have) memcpy(loads, m->msg + MSG_HEAD + n, (size_t)n * sizeof *loads);
  if (d->repartition) memcpy(w, m->msg + MSG_HEAD, (size_t)n * sizeof *w);
}

void dem_monitor_repartitioned(dem_monitor_t *m, long step)
{
  m->since = step;
  /* the window opens one step later: the step after a repartition always searches for
   * contacts, a cost of the repartition rather than of the new part */
  m->window_start = step + 1;
  m->window_work = 0;
  m->window_compute = -1;
  m->interval = m->p.ruper_report_min;
  m->last_speed = 0;
}

void dem_monitor_close(dem_monitor_t *m)
{
  dem_parallel_mailbox_close(m->reports, m->run.rank == 0 ? keep_report : NULL, m);
  dem_parallel_mailbox_close(m->decisions, NULL, NULL);
}

long dem_monitor_reports(const dem_monitor_t *m) { return m->received; }
