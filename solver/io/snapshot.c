#define _GNU_SOURCE
#include "io/snapshot.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/parallel.h"
#include "base/version.h"
#include "dem/particles.h"
#include "io/output.h"
#include "scenario/scenario.h"
#include "scenario/state.h"

#define CHUNK 16384 /* particles per message */

typedef struct record {
  int32_t id, contacts;
  double pos[3], vel[3], omega[3], radius;
} record_t;

/* one block of the frame on rank 0: rows [lo, lo + n) */
typedef struct frame_arrays {
  size_t lo, n;
  int32_t *id, *owner, *contacts;
  double *pos, *vel, *omega, *radius;
  unsigned char *seen;
} frame_arrays_t;

/* Slots in actual contact (overlap > 0) of owned particle i. */
static int contacts_of(const dem_sim_t *sim, size_t i)
{
  const dem_particles_t *p = sim->p;
  int c = 0;
  for (int k = 0; k < p->nbr_count[i]; k++) {
    int j = p->nbr_index[i * (size_t)p->slots + (size_t)k];
    if (j >= 0) {
      double d2 = 0.0;
      for (int a = 0; a < 3; a++) {
        double dx = p->pos[3 * (size_t)j + a] - p->pos[3 * i + a];
        d2 += dx * dx;
      }
      double reach = p->radius[i] + p->radius[j];
      if (d2 < reach * reach) c++;
    } else {
      int w = -1 - j, axis = w / 2;
      double plane = (w % 2) ? sim->prm.box_hi[axis] : sim->prm.box_lo[axis];
      if (fabs(p->pos[3 * i + (size_t)axis] - plane) < p->radius[i]) c++;
    }
  }
  return c;
}

static void fill(const dem_sim_t *sim, size_t i, record_t *r)
{
  const dem_particles_t *p = sim->p;
  r->id = p->id[i];
  r->contacts = contacts_of(sim, i);
  memcpy(r->pos, p->pos + 3 * i, sizeof r->pos);
  memcpy(r->vel, p->vel + 3 * i, sizeof r->vel);
  memcpy(r->omega, p->omega + 3 * i, sizeof r->omega);
  r->radius = p->radius[i];
}

/* Places one record at its id in the block; -1 when the id was seen already. */
static int place(frame_arrays_t *f, const record_t *r, int owner)
{
  size_t k = (size_t)r->id - f->lo;
  if (f->seen[k]) return -1;
  f->seen[k] = 1;
  f->id[k] = r->id;
  f->owner[k] = owner;
  f->contacts[k] = r->contacts;
  memcpy(f->pos + 3 * k, r->pos, sizeof r->pos);
  memcpy(f->vel + 3 * k, r->vel, sizeof r->vel);
  memcpy(f->omega + 3 * k, r->omega, sizeof r->omega);
  f->radius[k] = r->radius;
  return 0;
}

static void free_arrays(frame_arrays_t *f)
{
  free(f->id);
  free(f->owner);
  free(f->contacts);
  free(f->pos);
  free(f->vel);
  free(f->omega);
  free(f->radius);
  free(f->seen);
}

static int alloc_arrays(frame_arrays_t *f, size_t n)
{
  n = n ? n : 1;
  f->id = malloc(n * sizeof *f->id);
  f->owner = malloc(n * sizeof *f->owner);
  f->contacts = malloc(n * sizeof *f->contacts);
  f->pos = malloc(3 * n * sizeof *f->pos);
  f->vel = malloc(3 * n * sizeof *f->vel);
  f->omega = malloc(3 * n * sizeof *f->omega);
  f->radius = malloc(n * sizeof *f->radius);
  f->seen = malloc(n);
  return f->id && f->owner && f->contacts && f->pos && f->vel && f->omega && f->radius && f->seen ? 0 : -1;
}

/* The frame is gathered on rank 0 one block of ids at a time (output.gather_block, 65,536 by
 * default: rank 0 holds 6 MB, where the whole frame of 500,000 particles took 47 MB): for each
 * block every rank sends the records of its particles with ids in the block, rank 0 places them
 * by id and writes the block's rows. Each rank scans its particles once per block.
 * Rank 0 receives into one buffer of CHUNK records; every other rank packs its records for a
 * block into a buffer of that block's size (at most CHUNK records), freed once sent: under SMPI
 * all ranks are one process and wait together in the gather, so what they hold adds up (64
 * buffers of CHUNK records were 90 MB of address space, and each kept the pages of its largest
 * block), where per-block buffers hold about one block of records in all. */
/* Collective: the number of particles of all ranks in *n_total, and -1 with a message when an
 * id lies outside [0, n_total) (the blocks only look for ids there). */
static int count_and_check_ids(dem_sim_t *sim, long *n_total_out, char *err, size_t errlen)
{
  const dem_particles_t *p = sim->p;
  long n_total = (long)p->n;
  dem_parallel_sum_long(&n_total, 1);
  *n_total_out = n_total;
  int out_of_range = 0;
  double bad_id = -HUGE_VAL; /* the largest offending id: ids fit a double exactly */
  for (size_t i = 0; i < p->n; i++)
    if (p->id[i] < 0 || (long)p->id[i] >= n_total) {
      out_of_range = 1;
      if ((double)p->id[i] > bad_id) bad_id = (double)p->id[i];
    }
  dem_parallel_max_int(&out_of_range, 1);
  dem_parallel_max_double(&bad_id, 1);
  if (out_of_range) {
    snprintf(err, errlen, "step %ld: particle id %.0f is out of range (%ld particles)", sim->step, bad_id, n_total);
    return -1;
  }
  return 0;
}

/* Rank 0: the records of ids [lo, hi), its own and those the other ranks send (in CHUNK
 * records), placed in f. Notes the first duplicated id in *dup_id and the first rank that could
 * not send in *lost_on. */
static void gather_block_root(dem_sim_t *sim, frame_arrays_t *f, record_t *chunk, long lo, long hi, long *dup_id,
                              int *lost_on)
{
  const dem_particles_t *p = sim->p;
  f->lo = (size_t)lo;
  f->n = (size_t)(hi - lo);
  memset(f->seen, 0, f->n);
  for (size_t i = 0; i < p->n; i++)
    if (p->id[i] >= lo && p->id[i] < hi) {
      record_t r;
      fill(sim, i, &r);
      if (place(f, &r, 0) && *dup_id < 0) *dup_id = r.id;
    }
  for (int src = 1; src < sim->ranks; src++) {
    long count = 0;
    dem_parallel_recv_bytes(&count, (long)sizeof count, src);
    if (count < 0 && *lost_on < 0) *lost_on = src;
    for (long done = 0; done < count; done += CHUNK) {
      long len = count - done < CHUNK ? count - done : CHUNK;
      dem_parallel_recv_bytes(chunk, len * (long)sizeof *chunk, src);
      for (long k = 0; k < len; k++)
        if (place(f, &chunk[k], src) && *dup_id < 0) *dup_id = chunk[k].id;
    }
  }
}

/* A rank other than 0: sends the count, then the records, of its particles with ids in
 * [lo, hi), in CHUNK records. Returns 0, or -1 (message in err, count -1 sent) when out of
 * memory. */
static int send_block(dem_sim_t *sim, long lo, long hi, const char *name, char *err, size_t errlen)
{
  const dem_particles_t *p = sim->p;
  long count = 0;
  for (size_t i = 0; i < p->n; i++) count += p->id[i] >= lo && p->id[i] < hi;
  record_t *out = count > 0 ? malloc((size_t)(count < CHUNK ? count : CHUNK) * sizeof *out) : NULL;
  if (count > 0 && !out) {
    /* a negative count tells rank 0 that no records follow and the frame is lost */
    long lost = -1;
    dem_parallel_send_bytes(&lost, (long)sizeof lost, 0);
    snprintf(err, errlen, "out of memory gathering the particles of %s.h5 on rank %d", name, sim->rank);
    return -1;
  }
  dem_parallel_send_bytes(&count, (long)sizeof count, 0);
  size_t i = 0;
  for (long done = 0; done < count; done += CHUNK) {
    long len = count - done < CHUNK ? count - done : CHUNK;
    for (long k = 0; k < len; i++)
      if (p->id[i] >= lo && p->id[i] < hi) fill(sim, i, &out[k++]);
    dem_parallel_send_bytes(out, len * (long)sizeof *out, 0);
  }
  free(out);
  return 0;
}

/* The file's root attributes: the scenario, its effective configuration, demsim's version and build. */
static int frame_meta(const dem_sim_t *sim, dem_output_frame_writer_t *w, char *err, size_t errlen)
{
  char *config = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&config, &len);
  if (!f) return dem_fail(err, errlen, "out of memory");
  dem_scenario_print(sim->sc, f);
  fclose(f);
  dem_output_meta_t m = {.scenario = sim->sc->name, .file = sim->sc->file, .config = config, .version = DEM_VERSION,
                         .build = DEM_BUILD};
  int rc = dem_output_frame_meta(w, &m, err, errlen);
  free(config);
  return rc;
}

int dem_snapshot_write(dem_sim_t *sim, const char *name, int create, char *err, size_t errlen)
{
  long n_total = 0;
  if (count_and_check_ids(sim, &n_total, err, errlen)) return -1;
  const long block = sim->sc->gather_block;
  record_t *chunk = sim->rank == 0 ? malloc(CHUNK * sizeof *chunk) : NULL;
  frame_arrays_t f = {0};
  dem_output_frame_writer_t *w = NULL;
  int rc = chunk || sim->rank != 0 ? 0 : -1;
  if (sim->rank == 0 && rc == 0) {
    if (alloc_arrays(&f, (size_t)block)) {
      rc = -1;
    } else {
      char base[DEM_PATH_MAX + 64];
      snprintf(base, sizeof base, "%s/%s", sim->sc->out_dir, name);
      w = dem_output_frame_open(base, sim->step, sim->prm.dt * (double)sim->step, (size_t)n_total, create, err, errlen);
      if (!w || frame_meta(sim, w, err, errlen)) rc = -2;
    }
  }
  dem_parallel_max_int(&rc, 1);
  if (rc) {
    free(chunk);
    free_arrays(&f);
    if (w) dem_output_frame_close(&w, 0, err, errlen);
    if (sim->rank != 0 || rc == -1)
      snprintf(err, errlen, "out of memory gathering %ld particles for %s.h5 (or rank 0 cannot create it)", n_total,
               name);
    return -1;
  }

  long dup_id = -1;
  int lost_on = -1; /* on rank 0: the first rank that could not send its records */
  for (long lo = 0; lo < n_total; lo += block) {
    long hi = n_total - lo < block ? n_total : lo + block;
    if (sim->rank == 0) {
      gather_block_root(sim, &f, chunk, lo, hi, &dup_id, &lost_on);
      if (dup_id < 0 && lost_on < 0 && rc == 0) {
        dem_output_frame_t rows = {.n = f.n, .id = f.id, .owner = f.owner, .contacts = f.contacts, .pos = f.pos,
                                   .vel = f.vel, .omega = f.omega, .radius = f.radius};
        if (dem_output_frame_rows(w, f.lo, &rows, err, errlen)) rc = -1;
      }
    } else if (send_block(sim, lo, hi, name, rc == 0 ? err : NULL, rc == 0 ? errlen : 0)) {
      rc = -1;
    }
  }
  free(chunk);
  free_arrays(&f);
  if (sim->rank == 0) {
    if (lost_on >= 0 && rc == 0) {
      snprintf(err, errlen, "rank %d ran out of memory gathering the particles of %s.h5", lost_on, name);
      rc = -1;
    }
    if (dup_id >= 0 && rc == 0) {
      snprintf(err, errlen, "step %ld: particle id %ld is held by two ranks (a particle was duplicated)", sim->step,
               dup_id);
      rc = -1;
    }
    if (dem_output_frame_close(&w, rc == 0, rc ? NULL : err, rc ? 0 : errlen) && rc == 0) rc = -1;
  }
  int mine = rc;
  dem_parallel_max_int(&rc, 1);
  if (rc && !mine) snprintf(err, errlen, "writing %s.h5 failed on rank 0", name);
  return rc ? -1 : 0;
}
