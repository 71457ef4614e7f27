#include "snapshot.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "parallel.h"
#include "particles.h"
#include "scenario.h"
#include "simulation.h"

#define CHUNK 16384 /* particles per message */

typedef struct record {
  int32_t id, contacts;
  double pos[3], vel[3], omega[3], radius;
} record_t;

typedef struct frame_arrays {
  size_t n;
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

/* Places one record at its id; -1 when the id is out of range or seen twice. */
static int place(frame_arrays_t *f, const record_t *r, int owner)
{
  long id = r->id;
  if (id < 0 || (size_t)id >= f->n || f->seen[id]) return -1;
  f->seen[id] = 1;
  f->id[id] = r->id;
  f->owner[id] = owner;
  f->contacts[id] = r->contacts;
  memcpy(f->pos + 3 * id, r->pos, sizeof r->pos);
  memcpy(f->vel + 3 * id, r->vel, sizeof r->vel);
  memcpy(f->omega + 3 * id, r->omega, sizeof r->omega);
  f->radius[id] = r->radius;
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

int dem_snapshot_write(dem_sim_t *sim, const char *name, int create, char *err, size_t errlen)
{
  const dem_particles_t *p = sim->p;
  long n_total = (long)p->n;
  dem_parallel_sum_long(&n_total, 1);
  record_t *chunk = malloc(CHUNK * sizeof *chunk);
  frame_arrays_t f = {.n = (size_t)n_total};
  int rc = chunk ? 0 : -1;
  if (sim->rank == 0 && rc == 0) {
    size_t n = f.n ? f.n : 1;
    f.id = malloc(n * sizeof *f.id);
    f.owner = malloc(n * sizeof *f.owner);
    f.contacts = malloc(n * sizeof *f.contacts);
    f.pos = malloc(3 * n * sizeof *f.pos);
    f.vel = malloc(3 * n * sizeof *f.vel);
    f.omega = malloc(3 * n * sizeof *f.omega);
    f.radius = malloc(n * sizeof *f.radius);
    f.seen = calloc(n, 1);
    if (!f.id || !f.owner || !f.contacts || !f.pos || !f.vel || !f.omega || !f.radius || !f.seen) rc = -1;
  }
  dem_parallel_max_int(&rc, 1);
  if (rc) {
    free(chunk);
    free_arrays(&f);
    snprintf(err, errlen, "out of memory gathering %ld particles for %s.h5", n_total, name);
    return -1;
  }
  long bad_id = -1;
  if (sim->rank == 0) {
    for (size_t i = 0; i < p->n; i++) {
      record_t r;
      fill(sim, i, &r);
      if (place(&f, &r, 0) && bad_id < 0) bad_id = r.id;
    }
    for (int src = 1; src < sim->ranks; src++) {
      long count = 0;
      dem_parallel_recv_bytes(&count, (long)sizeof count, src);
      for (long done = 0; done < count; done += CHUNK) {
        long len = count - done < CHUNK ? count - done : CHUNK;
        dem_parallel_recv_bytes(chunk, len * (long)sizeof *chunk, src);
        for (long k = 0; k < len; k++)
          if (place(&f, &chunk[k], src) && bad_id < 0) bad_id = chunk[k].id;
      }
    }
  } else {
    long count = (long)p->n;
    dem_parallel_send_bytes(&count, (long)sizeof count, 0);
    for (long done = 0; done < count; done += CHUNK) {
      long len = count - done < CHUNK ? count - done : CHUNK;
      for (long k = 0; k < len; k++) fill(sim, (size_t)(done + k), &chunk[k]);
      dem_parallel_send_bytes(chunk, len * (long)sizeof *chunk, 0);
    }
  }
  free(chunk);
  if (sim->rank == 0) {
    if (bad_id >= 0) {
      snprintf(err, errlen, "step %ld: particle id %ld is %s", sim->step, bad_id,
               bad_id >= n_total ? "out of range" : "held by two ranks (a particle was duplicated)");
      rc = -1;
    } else {
      char base[DEM_PATH_MAX + 64];
      snprintf(base, sizeof base, "%s/%s", sim->sc->out_dir, name);
      dem_output_frame_t fr = {.step = sim->step, .time = sim->prm.dt * (double)sim->step, .n = f.n, .id = f.id,
                               .owner = f.owner, .contacts = f.contacts, .pos = f.pos, .vel = f.vel,
                               .omega = f.omega, .radius = f.radius};
      rc = dem_output_write_frame(base, &fr, create, err, errlen);
    }
  }
  free_arrays(&f);
  dem_parallel_max_int(&rc, 1);
  if (rc && sim->rank != 0) snprintf(err, errlen, "writing %s.h5 failed on rank 0", name);
  return rc ? -1 : 0;
}
