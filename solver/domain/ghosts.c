/* Ghost registration and the per-step ghost exchange (see ghosts.h).
 *
 * Which particles: the search pairs particles closer than r_i + r_j + skin <= 2 r_max + skin,
 * the ghost layer. The set is fixed at registration, and registration is repeated right before
 * every contact search (dem_ghosts_refresh): between searches the neighbour lists do not change,
 * and the skin guarantees that no pair outside them comes into contact, so the ghosts the lists
 * name are all a step needs.
 *
 * The destinations come from the particles themselves, in two rounds, whatever the partitioner:
 * a particle x is a candidate for rank A when x lies within the layer of A's particle bounding
 * box (allgathered); B sends A its candidates' positions, A answers, per candidate, whether one
 * of its own particles lies within the layer of it (its particles binned in cells of edge =
 * layer, grid.h: the 27 cells around the candidate's), and B keeps those. The ghost set is then
 * exactly the particles within the layer of another rank's particle (up to the rounding margin),
 * whatever the shape of the parts: a scattered hypergraph part costs what its surface costs, no
 * more. (RCB's part boxes would name the destinations in one round, but a box reaches to its cut
 * and particles stray out of it between repartitions: measured, up to twice the ghosts of this
 * exact set, 2 native ranks at 200,000 particles in contact, 2714 + 5395 against 2703 + 2703.)
 *
 * Order: at registration the owned particles sent anywhere (the border) are moved, in their
 * order, to the end of the owned range [n - n_border, n), so each step copies one contiguous
 * range device -> host. Ghosts are appended per source rank, in the sender's order, and every
 * step's message carries the same particles in the same order: positions, velocities and
 * angular velocities (9 doubles each, copied bit for bit). Buffers and the request table are
 * sized at registration and reused until the next one.
 *
 * Memory: under SMPI every rank's buffers live in one process (at 64 ranks and 500,000
 * particles the ghosts' messages are some 150,000 particles each way), so what a rank keeps
 * between registrations is kept to what every step needs: the exchange buffers hold exactly
 * the step's 9 doubles per particle (the registration's 11 only while it runs), and the
 * registration's scratch (destination pairs, the border permutation) is freed when it ends. */
#include "base/error.h"
#include "domain/ghosts.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/parallel.h"
#include "base/timers.h"
#include "dem/grid.h"
#include "dem/particles.h"
#include "device/engine.h"
#include "scenario/scenario.h"
#include "scenario/state.h"

enum { TAG_REGISTER = 31, TAG_STATE = 32, TAG_CANDIDATE = 33, TAG_ANSWER = 34 };
enum { REG_DOUBLES = 11,   /* id, radius, pos[3], vel[3], omega[3] */
       STATE_DOUBLES = 9 }; /* pos[3], vel[3], omega[3] */

typedef struct dest_pair { int rank; int32_t index; } dest_pair_t;

struct dem_ghosts {
  int rank, ranks;
  int forced;          /* slot indices stale: the next step must search */
  double layer;        /* m */
  /* send side: to_index[to_first[k] .. + to_count[k]) are sent to rank to_rank[k] */
  int n_to;
  int *to_rank;
  size_t *to_first, *to_count;
  int32_t *to_index;
  size_t to_total, to_index_cap;
  size_t n_border;     /* owned particles [n - n_border, n) are sent somewhere */
  /* receive side: ghosts [n + from_first[k], + from_count[k]) come from rank from_rank[k] */
  int n_from;
  int *from_rank;
  size_t *from_first, *from_count;
  size_t n_ghost;
  /* buffers, sized at registration */
  double *send_buf, *recv_buf;
  size_t send_cap, recv_cap; /* doubles */
  dem_parallel_xchg_t *xchg;
  /* registration scratch */
  int *count_to, *count_from; /* per rank */
  dest_pair_t *pairs;  /* freed when a registration ends */
  size_t pairs_cap;
  double *bboxes;      /* 6 per rank: lo[3], hi[3] of its owned particles */
  size_t bboxes_cap;
  double blocked;      /* s, time in the per-step MPI calls: the exchange and the search decision */
  double wait;         /* s, of `blocked`, waiting for the slowest rank (dem_ghosts_need_search) */
  /* the registration under way: when it began, its time in MPI calls so far, and of that the
   * wait for the slowest rank (worked out at its last meeting, ghost_exchange_registration) */
  double reg_start, reg_held, reg_wait;
  double load_mark;    /* s, this rank's DEM_T_COMPUTE total at the last search decision */
  dem_grid_t *grid;    /* the owned particles' cells (the registration's answers) */
  dem_ghosts_stats_t stats;
  const int *site;     /* site of each rank (platform.sites), or NULL: one site */
};


/* A call of the registration that may block on other ranks (a collective, or the wait for its
 * messages): its time is added to g->reg_held. */
#define MEET(g, call)                            \
  do {                                           \
    double meet_t0_ = dem_clock_now();           \
    call;                                        \
    (g)->reg_held += dem_clock_now() - meet_t0_; \
  } while (0)

/* grows *buf to hold at least n elements of `size` bytes; 0 or -1 */
static int grow(void **buf, size_t *cap, size_t n, size_t size)
{
  if (n <= *cap && *buf) return 0;
  size_t c = n + n / 2 + 16;
  void *b = realloc(*buf, c * size);
  if (!b) return -1;
  *buf = b;
  *cap = c;
  return 0;
}

/* sets *buf to exactly n elements of `size` bytes (contents kept up to the smaller size); 0 or
 * -1, the buffer then unchanged. Shrinking returns the tail to the allocator. */
static int fit(void **buf, size_t *cap, size_t n, size_t size)
{
  if (n == *cap && *buf) return 0;
  void *b = realloc(*buf, (n ? n : 1) * size);
  if (!b) return -1;
  *buf = b;
  *cap = n;
  return 0;
}

dem_ghosts_t *dem_ghosts_create(dem_sim_t *sim, char *err, size_t errlen)
{
  dem_ghosts_t *g = calloc(1, sizeof *g);
  if (!g) {
    dem_fail(err, errlen, "out of memory (ghosts)");
    return NULL;
  }
  g->rank = sim->rank;
  g->ranks = sim->ranks;
  g->site = sim->sc->n_site_list ? sim->sc->site : NULL;
  size_t r = (size_t)g->ranks;
  g->to_rank = calloc(r, sizeof *g->to_rank);
  g->to_first = calloc(r, sizeof *g->to_first);
  g->to_count = calloc(r, sizeof *g->to_count);
  g->from_rank = calloc(r, sizeof *g->from_rank);
  g->from_first = calloc(r, sizeof *g->from_first);
  g->from_count = calloc(r, sizeof *g->from_count);
  g->count_to = calloc(r, sizeof *g->count_to);
  g->count_from = calloc(r, sizeof *g->count_from);
  g->xchg = dem_parallel_xchg_create(2 * g->ranks);
  if (!g->to_rank || !g->to_first || !g->to_count || !g->from_rank || !g->from_first || !g->from_count ||
      !g->count_to || !g->count_from || !g->xchg) {
    dem_ghosts_destroy(&g);
    dem_fail(err, errlen, "out of memory (ghosts)");
    return NULL;
  }
  return g;
}

void dem_ghosts_destroy(dem_ghosts_t **gp)
{
  dem_ghosts_t *g = *gp;
  if (!g) return;
  free(g->to_rank);
  free(g->to_first);
  free(g->to_count);
  free(g->to_index);
  free(g->from_rank);
  free(g->from_first);
  free(g->from_count);
  free(g->send_buf);
  free(g->recv_buf);
  free(g->count_to);
  free(g->count_from);
  free(g->pairs);
  free(g->bboxes);
  dem_grid_destroy(&g->grid);
  dem_parallel_xchg_destroy(&g->xchg);
  free(g);
  *gp = NULL;
}

/* Moves the border particles (flag set) to the end of the owned range, keeping the order
 * within both groups; old_to_new receives each particle's new index, *moved how many particles
 * changed place. The permutation is charged by the rows it moves: their sources are scattered
 * over the store, so its time goes with them, not with the store's size (ghost registrations
 * after a repartition, timed natively on two containers: 5,000 to 157,000 rows of 356 B moved
 * in 5 to 180 ms). */
static int move_border_last(dem_particles_t *p, const char *border, size_t *old_to_new, size_t *moved)
{
  size_t n = p->n, k = 0;
  size_t *perm = malloc((n ? n : 1) * sizeof *perm);
  if (!perm) return -1;
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < n; i++)
      if ((border[i] != 0) == pass) {
        perm[k] = i;
        old_to_new[i] = k++;
      }
  *moved = 0;
  for (size_t i = 0; i < n; i++) *moved += perm[i] != i;
  /* in place, one field at a time: a second store would double the peak memory */
  int rc = *moved ? dem_particles_permute(p, perm, n) : 0;
  free(perm);
  if (*moved) {
    double rows = (double)*moved;
    dem_work_t w = {.kind = DEM_WORK_PERMUTE, .particles = rows,
                    .bytes = rows * (double)dem_particles_bytes_per_particle(p->slots),
                    .pairs = rows * DEM_ARRAY_COUNT, .reach = (double)n};
    dem_clock_charge(&w);
  }
  return rc;
}

/* 1 when x lies within `reach` of the box {lo[3], hi[3]} along every axis (an empty box,
 * lo > hi, is never reached) */
static int within(const double *box, const double *x, double reach)
{
  for (int a = 0; a < 3; a++)
    if (x[a] < box[a] - reach || x[a] > box[3 + a] + reach) return 0;
  return 1;
}

/* Registration, step 1 (collective): the ghost layer, the reach tested against a rank's
 * particles (*reach: the layer and a little for rounding) and every rank's particle bounding box
 * (g->bboxes). */
static int ghost_layer(dem_ghosts_t *g, dem_sim_t *sim, double *reach)
{
  dem_particles_t *p = sim->p;
  double r_max = 0.0;
  for (size_t i = 0; i < p->n; i++)
    if (p->radius[i] > r_max) r_max = p->radius[i];
  dem_work_t w = {.kind = DEM_WORK_SCAN, .particles = (double)p->n, .bytes = (double)p->n * sizeof(double)};
  dem_clock_charge(&w);
  MEET(g, dem_parallel_max_double(&r_max, 1));
  g->layer = 2.0 * r_max + sim->prm.skin;
  /* a little extra for rounding in the distance tests: being generous only costs a few ghosts */
  *reach = g->layer * (1.0 + 1e-9) + 1e-12;
  double bb[6] = {DBL_MAX, DBL_MAX, DBL_MAX, -DBL_MAX, -DBL_MAX, -DBL_MAX};
  for (size_t i = 0; i < p->n; i++)
    for (int a = 0; a < 3; a++) {
      double x = p->pos[3 * i + (size_t)a];
      if (x < bb[a]) bb[a] = x;
      if (x > bb[3 + a]) bb[3 + a] = x;
    }
  w = (dem_work_t){.kind = DEM_WORK_SCAN, .particles = 6.0 * (double)p->n, .bytes = (double)p->n * 3 * sizeof(double)};
  dem_clock_charge(&w);
  if (grow((void **)&g->bboxes, &g->bboxes_cap, 6 * (size_t)g->ranks, sizeof(double))) return -1;
  MEET(g, dem_parallel_allgather_double(bb, 6, g->bboxes));
  return 0;
}

/* The send lists from the destination pairs, grouped by destination rank (counting sort keeps
 * the new index order). Returns 0, or 1 when out of memory. */
static int send_lists(dem_ghosts_t *g, size_t np, const size_t *old_to_new)
{
  int *slot = malloc((size_t)g->ranks * sizeof *slot);
  if (!slot || grow((void **)&g->to_index, &g->to_index_cap, np, sizeof *g->to_index)) {
    free(slot);
    return 1;
  }
  g->n_to = 0;
  size_t off = 0;
  for (int r = 0; r < g->ranks; r++)
    if (g->count_to[r] > 0) {
      slot[r] = g->n_to;
      g->to_rank[g->n_to] = r;
      g->to_first[g->n_to] = off;
      g->to_count[g->n_to] = 0;
      off += (size_t)g->count_to[r];
      g->n_to++;
    }
  /* pairs are in old-index order; after the move the border keeps its relative order, so each
   * destination's list comes out sorted by new index */
  for (size_t q = 0; q < np; q++) {
    int k = slot[g->pairs[q].rank];
    g->to_index[g->to_first[k] + g->to_count[k]++] = (int32_t)old_to_new[g->pairs[q].index];
  }
  free(slot);
  g->to_total = np;
  return 0;
}

/* Registration, the end of step 2: the border particles (flagged in border) moved last in the
 * store (*moved: how many changed place) and the send lists from the np destination pairs;
 * frees border, old_to_new and the pairs. `bad` (nonzero: a failure before) is returned as it
 * is, or 1 when out of memory here. */
static int border_and_lists(dem_ghosts_t *g, dem_particles_t *p, size_t np, char *border, size_t *old_to_new, int bad,
                            size_t *moved)
{
  *moved = 0;
  if (!bad && move_border_last(p, border, old_to_new, moved)) bad = 1;
  size_t n_border = 0;
  for (size_t i = 0; !bad && i < p->n; i++) n_border += border[i] != 0;
  free(border);
  if (!bad) bad = send_lists(g, np, old_to_new);
  g->n_border = n_border;
  free(old_to_new);
  free(g->pairs);
  g->pairs = NULL;
  g->pairs_cap = 0;
  return bad;
}

/* 1 when one of the particles binned in grid (positions pos) lies within reach of x */
static int near_any(const dem_grid_t *grid, const double *pos, const double *x, double reach)
{
  int32_t c[3];
  for (int a = 0; a < 3; a++) c[a] = dem_grid_coord(x[a], grid->origin[a], grid->h);
  for (int dz = -1; dz <= 1; dz++)
    for (int dy = -1; dy <= 1; dy++) {
      int32_t run[6];
      int runs = dem_grid_row_runs(grid, c[0], c[1] + dy, c[2] + dz, run);
      /* the buckets may hold other cells too: the distance decides */
      for (int r = 0; r < runs; r++)
        for (int32_t k = run[2 * r]; k < run[2 * r + 1]; k++) {
          const double *y = pos + 3 * (size_t)grid->cell_sorted[k];
          double d0 = x[0] - y[0], d1 = x[1] - y[1], d2 = x[2] - y[2];
          if (d0 * d0 + d1 * d1 + d2 * d2 <= reach * reach) return 1;
        }
    }
  return 0;
}

/* Sends through the exchange, counting the bytes that leave this rank's site (the WAN's). */
static int send(dem_ghosts_t *g, const void *buf, size_t bytes, int to, int tag)
{
  if (g->site && g->site[to] != g->site[g->rank]) {
    g->stats.wan_bytes += (double)bytes;
    if (tag == TAG_STATE) g->stats.wan_state_bytes += (double)bytes;
  }
  return dem_parallel_xchg_send(g->xchg, buf, bytes, to, tag);
}

/* Posts one message per rank with a nonzero count (count[r] items of `size` bytes at
 * buf + first[r] items): receives when `recv`, else sends. */
static int post(dem_ghosts_t *g, char *buf, const int *count, const size_t *first, size_t size, int tag, int recv)
{
  int bad = 0;
  for (int r = 0; r < g->ranks; r++) {
    if (r == g->rank || count[r] == 0) continue;
    char *b = buf + first[r] * size;
    size_t bytes = (size_t)count[r] * size;
    bad |= recv ? dem_parallel_xchg_recv(g->xchg, b, bytes, r, tag) : send(g, b, bytes, r, tag);
  }
  return bad;
}

/* Registration, step 2 (collective; see the top of the file): candidates by
 * the particle bounding boxes, their positions to the candidate ranks, their answers back, the
 * kept pairs; then the border and the send lists. 0, or 1 when out of memory or a message was
 * too long. */
static int ghost_destinations(dem_ghosts_t *g, dem_sim_t *sim, double reach, size_t *moved)
{
  dem_particles_t *p = sim->p;
  const int me = g->rank, nr = g->ranks;
  size_t *out_first = calloc((size_t)nr + 1, sizeof *out_first), *in_first = calloc((size_t)nr + 1, sizeof *in_first);
  char *border = calloc(p->n ? p->n : 1, 1);
  size_t *old_to_new = malloc((p->n ? p->n : 1) * sizeof *old_to_new);
  int bad = !out_first || !in_first || !border || !old_to_new;
  /* candidates, grouped by rank (in old-index order within each group) */
  memset(g->count_to, 0, (size_t)nr * sizeof *g->count_to);
  for (size_t i = 0; !bad && i < p->n; i++)
    for (int r = 0; r < nr; r++) g->count_to[r] += r != me && within(g->bboxes + 6 * r, p->pos + 3 * i, reach);
  size_t n_out = 0, n_in = 0;
  for (int r = 0; !bad && r < nr; r++) out_first[r + 1] = n_out += (size_t)g->count_to[r];
  int32_t *cand = malloc((n_out ? n_out : 1) * sizeof *cand);
  if (!cand || bad) {
    bad = 1;
    memset(g->count_to, 0, (size_t)nr * sizeof *g->count_to); /* the collectives still run, empty */
    n_out = 0;
  }
  size_t *fill = calloc((size_t)nr, sizeof *fill);
  for (size_t i = 0; !bad && fill && i < p->n; i++)
    for (int r = 0; r < nr; r++)
      if (r != me && within(g->bboxes + 6 * r, p->pos + 3 * i, reach)) cand[out_first[r] + fill[r]++] = (int32_t)i;
  free(fill);
  /* the two passes over the positions, each particle against every other rank's box */
  dem_work_t scan = {.kind = DEM_WORK_SCAN, .pairs = 2.0 * (double)p->n * (double)(nr - 1),
                     .bytes = 2.0 * (double)p->n * 3 * sizeof(double)};
  dem_clock_charge(&scan);
  MEET(g, dem_parallel_alltoall_int(g->count_to, g->count_from));
  for (int r = 0; r < nr; r++) n_in += (size_t)g->count_from[r];
  for (int r = 0; in_first && r < nr; r++) in_first[r + 1] = in_first[r] + (size_t)g->count_from[r];
  double *xout = malloc((n_out ? n_out : 1) * 3 * sizeof *xout), *xin = malloc((n_in ? n_in : 1) * 3 * sizeof *xin);
  char *ans_out = calloc(n_in ? n_in : 1, 1), *ans_in = calloc(n_out ? n_out : 1, 1);
  if (!xout || !xin || !ans_out || !ans_in || !in_first) bad = 1;
  /* every rank has its buffers, or none posts a message (a rank waiting for one that never
   * comes would hang) */
  MEET(g, dem_parallel_max_int(&bad, 1));
  if (bad) {
    free(cand); free(xout); free(xin); free(ans_out); free(ans_in); free(out_first); free(in_first);
    return border_and_lists(g, p, 0, border, old_to_new, 1, moved);
  }
  /* round 1: the candidates' positions */
  for (size_t q = 0; q < n_out; q++) memcpy(xout + 3 * q, p->pos + 3 * (size_t)cand[q], 3 * sizeof(double));
  bad |= post(g, (char *)xin, g->count_from, in_first, 3 * sizeof(double), TAG_CANDIDATE, 1);
  bad |= post(g, (char *)xout, g->count_to, out_first, 3 * sizeof(double), TAG_CANDIDATE, 0);
  MEET(g, dem_parallel_xchg_wait(g->xchg));
  /* which candidates have one of this rank's particles within reach */
  if (!g->grid) g->grid = dem_grid_create();
  size_t bad_at = 0;
  if (n_in > 0 && p->n > 0 &&
      (!g->grid || dem_grid_build(g->grid, p->pos, p->n, reach, g->bboxes + 6 * me, &bad_at)))
    bad = 1;
  if (n_in > 0 && p->n > 0) { /* the grid is built only for candidates to answer */
    dem_work_t binning = {.kind = DEM_WORK_BINNING, .particles = (double)p->n};
    dem_clock_charge(&binning);
  }
  for (size_t q = 0; !bad && p->n > 0 && q < n_in; q++) ans_out[q] = (char)near_any(g->grid, p->pos, xin + 3 * q, reach);
  /* round 2: the answers */
  bad |= post(g, ans_in, g->count_to, out_first, 1, TAG_ANSWER, 1);
  bad |= post(g, ans_out, g->count_from, in_first, 1, TAG_ANSWER, 0);
  MEET(g, dem_parallel_xchg_wait(g->xchg));
  /* the kept pairs, grouped by rank as the candidates were */
  size_t np = 0;
  memset(g->count_to, 0, (size_t)nr * sizeof *g->count_to);
  for (int r = 0; !bad && r < nr; r++)
    for (size_t q = out_first[r]; q < out_first[r + 1]; q++) {
      if (!ans_in[q]) continue;
      if (grow((void **)&g->pairs, &g->pairs_cap, np + 1, sizeof *g->pairs)) {
        bad = 1;
        break;
      }
      g->pairs[np++] = (dest_pair_t){r, cand[q]};
      g->count_to[r]++;
      border[cand[q]] = 1;
    }
  g->stats.bytes += (double)(n_out + n_in) * (3 * sizeof(double) + 1);
  dem_work_t w = {.kind = DEM_WORK_PACK, .bytes = (double)(n_out + n_in) * (3 * sizeof(double) + 1)};
  dem_clock_charge(&w);
  /* border_and_lists' order below: border read and tested three times (the two order passes,
   * the count), the permutation and its inverse written (8 B each), the permutation read again
   * and each entry compared with its index: 4 comparisons a particle, charged as the layer's and
   * the boxes' are (BENCHMARKS-history: without them this pass was a quarter of its time) */
  w = (dem_work_t){.kind = DEM_WORK_SCAN, .particles = 4.0 * (double)p->n,
                   .bytes = (double)p->n * (3.0 + 3.0 * sizeof(size_t))};
  dem_clock_charge(&w);
  free(cand); free(xout); free(xin); free(ans_out); free(ans_in); free(out_first); free(in_first);
  return border_and_lists(g, p, np, border, old_to_new, bad, moved);
}

/* Registration, step 3 (collective): who sends whom how many, the registration's message
 * (ids, radii, positions, velocities, spins) and the ghost rows it fills; then the buffers
 * sized for every step's messages. */
static int ghost_exchange_registration(dem_ghosts_t *g, dem_sim_t *sim, char *err, size_t errlen)
{
  dem_particles_t *p = sim->p;
  const int me = g->rank;
  int bad = 0;
  /* who sends me how many */
  MEET(g, dem_parallel_alltoall_int(g->count_to, g->count_from));
  g->n_from = 0;
  size_t n_ghost = 0;
  for (int r = 0; r < g->ranks; r++)
    if (r != me && g->count_from[r] > 0) {
      g->from_rank[g->n_from] = r;
      g->from_first[g->n_from] = n_ghost;
      g->from_count[g->n_from] = (size_t)g->count_from[r];
      n_ghost += (size_t)g->count_from[r];
      g->n_from++;
    }

  /* buffers for this registration's message (shrunk to every step's below) */
  if (fit((void **)&g->send_buf, &g->send_cap, REG_DOUBLES * g->to_total, sizeof(double)) ||
      fit((void **)&g->recv_buf, &g->recv_cap, REG_DOUBLES * n_ghost, sizeof(double)) ||
      (p->n + n_ghost > p->cap && dem_particles_reserve(p, p->n + n_ghost + (p->n + n_ghost) / 8 + 16)))
    bad = 1;
  MEET(g, dem_parallel_max_int(&bad, 1));
  if (bad) return dem_fail(err, errlen, "ghost registration: out of memory for %zu ghosts", n_ghost);

  for (int k = 0; k < g->n_from; k++)
    if (dem_parallel_xchg_recv(g->xchg, g->recv_buf + REG_DOUBLES * g->from_first[k],
                               REG_DOUBLES * g->from_count[k] * sizeof(double), g->from_rank[k], TAG_REGISTER))
      bad = 1;
  for (size_t q = 0; q < g->to_total; q++) {
    size_t i = (size_t)g->to_index[q];
    double *b = g->send_buf + REG_DOUBLES * q;
    b[0] = (double)p->id[i];
    b[1] = p->radius[i];
    memcpy(b + 2, p->pos + 3 * i, 3 * sizeof(double));
    memcpy(b + 5, p->vel + 3 * i, 3 * sizeof(double));
    memcpy(b + 8, p->omega + 3 * i, 3 * sizeof(double));
  }
  for (int k = 0; k < g->n_to; k++)
    if (send(g, g->send_buf + REG_DOUBLES * g->to_first[k], REG_DOUBLES * g->to_count[k] * sizeof(double),
             g->to_rank[k], TAG_REGISTER))
      bad = 1;
  MEET(g, dem_parallel_xchg_wait(g->xchg));
  /* the registration's last meeting: with the error flag, each rank's own work in the
   * registration (its time outside these calls); the slowest rank's less this rank's is what this
   * rank waited for in them, at most the time they held it (as the step's split,
   * dem_ghosts_need_search) */
  double v[2] = {(double)bad, dem_clock_now() - g->reg_start - g->reg_held};
  const double mine = v[1];
  MEET(g, dem_parallel_max_double(v, 2));
  g->reg_wait = fmin(fmax(v[1] - mine, 0.0), g->reg_held);
  if (v[0] > 0.0) return dem_fail(err, errlen, "ghost registration: a message exceeds the MPI count limit");

  for (size_t q = 0; q < n_ghost; q++) {
    size_t i = p->n + q;
    const double *b = g->recv_buf + REG_DOUBLES * q;
    p->id[i] = (dem_gid_t)b[0];
    p->radius[i] = b[1];
    memcpy(p->pos + 3 * i, b + 2, 3 * sizeof(double));
    memcpy(p->vel + 3 * i, b + 5, 3 * sizeof(double));
    memcpy(p->omega + 3 * i, b + 8, 3 * sizeof(double));
    /* force and torque rows of ghosts are never read (their owner integrates them): left
     * untouched, they take no memory */
    p->nbr_count[i] = 0;
  }
  p->n_ghost = n_ghost;
  g->n_ghost = n_ghost;
  g->stats.bytes += (double)sizeof(double) * REG_DOUBLES * (double)(g->to_total + n_ghost);
  /* every step's messages carry STATE_DOUBLES per particle: a smaller block cannot fail to fit,
   * and should realloc fail to move it the larger one still serves */
  fit((void **)&g->send_buf, &g->send_cap, STATE_DOUBLES * g->to_total, sizeof(double));
  fit((void **)&g->recv_buf, &g->recv_cap, STATE_DOUBLES * n_ghost, sizeof(double));

  return 0;
}

static int register_ghosts(dem_ghosts_t *g, dem_sim_t *sim, char *err, size_t errlen)
{
  dem_particles_t *p = sim->p;
  p->n_ghost = 0;
  g->reg_start = dem_clock_now();
  g->reg_held = g->reg_wait = 0.0;
  /* everything, not only what the decision needs: dem_engine_resize below may rebuild the
   * device buffers from the host arrays */
  if (dem_engine_pull(sim->engine, DEM_F_ALL, 0, p->n))
    return dem_fail(err, errlen, "ghost registration: device -> host: %s", dem_engine_error(sim->engine));
  double reach = 0.0;
  if (ghost_layer(g, sim, &reach)) return dem_fail(err, errlen, "ghost registration: out of memory");
  size_t moved = 0;
  int bad = ghost_destinations(g, sim, reach, &moved);
  MEET(g, dem_parallel_max_int(&bad, 1));
  if (bad) return dem_fail(err, errlen, "ghost registration: out of memory");
  if (ghost_exchange_registration(g, sim, err, errlen)) return -1;
  size_t n_ghost = g->n_ghost;

  dem_work_t w = {.kind = DEM_WORK_PACK, .bytes = (double)sizeof(double) * REG_DOUBLES * (double)(g->to_total + n_ghost)};
  dem_clock_charge(&w);
  /* owned particles: only when they changed place (the device holds them otherwise) */
  if (dem_engine_resize(sim->engine) || (moved && dem_engine_push(sim->engine, DEM_F_ALL, 0, p->n)) ||
      (n_ghost > 0 && dem_engine_push(sim->engine, DEM_F_ALL, p->n, n_ghost)))
    return dem_fail(err, errlen, "ghost registration: host -> device: %s", dem_engine_error(sim->engine));
  return 0;
}

int dem_ghosts_register(dem_ghosts_t *g, dem_sim_t *sim, char *err, size_t errlen)
{
  if (g->ranks == 1) return 0;
  if (register_ghosts(g, sim, err, errlen)) return -1;
  g->forced = 1;
  return 0;
}

int dem_ghosts_refresh(dem_ghosts_t *g, dem_sim_t *sim, char *err, size_t errlen)
{
  if (g->ranks > 1 && register_ghosts(g, sim, err, errlen)) return -1;
  /* in the step's ghost phase: its MPI calls count as the step's (wait and communication) */
  if (g->ranks > 1) {
    g->blocked += g->reg_held;
    g->wait += g->reg_wait;
    dem_timer_add(&sim->timers, DEM_T_WAIT, g->reg_held);
  }
  g->forced = 0;
  g->stats.steps += 1.0;
  g->stats.ghosts += (double)g->n_ghost;
  return 0;
}

void dem_ghosts_release(dem_ghosts_t *g)
{
  free(g->send_buf);
  free(g->recv_buf);
  g->send_buf = g->recv_buf = NULL;
  g->send_cap = g->recv_cap = 0;
}

int dem_ghosts_exchange_start(dem_ghosts_t *g, dem_sim_t *sim, char *err, size_t errlen)
{
  if (g->ranks == 1 || g->n_border == 0) return 0;
  dem_particles_t *p = sim->p;
  if (dem_engine_pull_async(sim->engine, DEM_F_POS | DEM_F_VEL | DEM_F_OMEGA, p->n - g->n_border, g->n_border))
    return dem_fail(err, errlen, "ghost exchange: device -> host: %s", dem_engine_error(sim->engine));
  return 0;
}

size_t dem_ghosts_interior(const dem_ghosts_t *g, const dem_sim_t *sim)
{
  return g->ranks == 1 ? 0 : sim->p->n - g->n_border;
}

int dem_ghosts_exchange_finish(dem_ghosts_t *g, dem_sim_t *sim, char *err, size_t errlen)
{
  if (g->ranks == 1) return 0;
  dem_particles_t *p = sim->p;
  /* after dem_ghosts_release: the same ghosts, new buffers (a failure is this rank's alone:
   * it stops the run like any out-of-memory error) */
  if ((!g->send_buf && fit((void **)&g->send_buf, &g->send_cap, STATE_DOUBLES * g->to_total, sizeof(double))) ||
      (!g->recv_buf && fit((void **)&g->recv_buf, &g->recv_cap, STATE_DOUBLES * g->n_ghost, sizeof(double))))
    return dem_fail(err, errlen, "ghost exchange: out of memory for %zu ghosts", g->n_ghost);
  if (dem_engine_wait_pulls(sim->engine))
    return dem_fail(err, errlen, "ghost exchange: device -> host: %s", dem_engine_error(sim->engine));

  double t0 = dem_clock_now();
  int bad = 0;
  for (int k = 0; k < g->n_from; k++)
    bad |= dem_parallel_xchg_recv(g->xchg, g->recv_buf + STATE_DOUBLES * g->from_first[k],
                                  STATE_DOUBLES * g->from_count[k] * sizeof(double), g->from_rank[k], TAG_STATE);
  double t1 = dem_clock_now();
  for (size_t q = 0; q < g->to_total; q++) {
    size_t i = (size_t)g->to_index[q];
    double *b = g->send_buf + STATE_DOUBLES * q;
    memcpy(b, p->pos + 3 * i, 3 * sizeof(double));
    memcpy(b + 3, p->vel + 3 * i, 3 * sizeof(double));
    memcpy(b + 6, p->omega + 3 * i, 3 * sizeof(double));
  }
  double t2 = dem_clock_now();
  for (int k = 0; k < g->n_to; k++)
    bad |= send(g, g->send_buf + STATE_DOUBLES * g->to_first[k], STATE_DOUBLES * g->to_count[k] * sizeof(double),
                g->to_rank[k], TAG_STATE);
  dem_timer_start(&sim->timers, DEM_T_WAIT);
  dem_parallel_xchg_wait(g->xchg);
  dem_timer_stop(&sim->timers, DEM_T_WAIT);
  g->blocked += (t1 - t0) + (dem_clock_now() - t2);
  if (bad) return dem_fail(err, errlen, "ghost exchange: a message exceeds the MPI count limit");

  for (size_t q = 0; q < g->n_ghost; q++) {
    size_t i = p->n + q;
    const double *b = g->recv_buf + STATE_DOUBLES * q;
    memcpy(p->pos + 3 * i, b, 3 * sizeof(double));
    memcpy(p->vel + 3 * i, b + 3, 3 * sizeof(double));
    memcpy(p->omega + 3 * i, b + 6, 3 * sizeof(double));
  }
  dem_work_t w = {.kind = DEM_WORK_PACK,
                  .bytes = (double)sizeof(double) * STATE_DOUBLES * (double)(g->to_total + g->n_ghost)};
  dem_clock_charge(&w);
  g->stats.steps += 1.0;
  g->stats.ghosts += (double)g->n_ghost;
  g->stats.bytes += w.bytes;
  /* queued only: the ghost rows change again in the next exchange, after the force kernels
   * that read them have been waited for */
  if (g->n_ghost > 0 && dem_engine_push_async(sim->engine, DEM_F_POS | DEM_F_VEL | DEM_F_OMEGA, p->n, g->n_ghost))
    return dem_fail(err, errlen, "ghost exchange: host -> device: %s", dem_engine_error(sim->engine));
  return 0;
}

/* The search decision is the step's one reduction over all ranks: every rank meets the slowest
 * there. With the decision each rank contributes its own computing since the last decision (its
 * DEM_T_COMPUTE time: the forces of the last step, this step's kick-drift), and learns the
 * largest: the slowest rank's. Its waiting for the slowest is the difference, at most the time
 * the reduction held it; the rest of its time in the step's MPI calls (the reduction's own
 * messages, the ghost exchange) is communication (dem_ghosts_wait_time, _comm_time). The
 * clocks are never compared across ranks: durations only, so the split holds natively on
 * several machines as under SMPI. */
int dem_ghosts_need_search(dem_ghosts_t *g, dem_sim_t *sim)
{
  int need = g->forced || dem_engine_needs_search(sim->engine);
  if (g->ranks > 1) {
    double load = sim->timers.total[DEM_T_COMPUTE], mine = load - g->load_mark;
    double v[2] = {need ? 1.0 : 0.0, mine};
    g->load_mark = load;
    double t0 = dem_clock_now();
    dem_timer_start(&sim->timers, DEM_T_WAIT);
    dem_parallel_max_double(v, 2);
    dem_timer_stop(&sim->timers, DEM_T_WAIT);
    double held = dem_clock_now() - t0;
    need = v[0] > 0.0;
    g->blocked += held;
    g->wait += fmin(fmax(v[1] - mine, 0.0), held);
  }
  return need;
}

size_t dem_ghosts_count(const dem_ghosts_t *g) { return g->n_ghost; }
void dem_ghosts_stats(const dem_ghosts_t *g, dem_ghosts_stats_t *st) { *st = g->stats; }

void dem_ghosts_sources(const dem_ghosts_t *g, int *out)
{
  for (int k = 0; k < g->n_from; k++)
    for (size_t q = 0; q < g->from_count[k]; q++) out[g->from_first[k] + q] = g->from_rank[k];
}
double dem_ghosts_comm_time(const dem_ghosts_t *g) { return g->blocked - g->wait; }
double dem_ghosts_wait_time(const dem_ghosts_t *g) { return g->wait; }
double dem_ghosts_layer(const dem_ghosts_t *g) { return g->layer; }
void dem_ghosts_registration_times(const dem_ghosts_t *g, double *held, double *wait)
{
  *held = g->reg_held;
  *wait = g->reg_wait;
}
