/* Remote offload, the client: an application rank's engine backend that runs its kernels on a
 * device server (see remote.h; the protocol is wire.h, the server server.c). Messages go
 * through base/parallel.c (the only module that calls MPI). */
#include "device/remote.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/parallel.h"
#include "dem/params.h"
#include "dem/particles.h"
#include "device/wire.h"
#include "scenario/scenario.h"


struct dem_remote {
  dem_particles_t *p;
  int server;  /* world rank of the server */
  int search_flag; /* the search test's answer carried by the last kick-drift's answer, or -1
                    * once another command may have changed it */
  int units;
  dem_engine_work_t last;
  char *buf;   /* rows to and from the server */
  size_t buf_cap;
  char name[200];
  char err[512];
};

static int stop_sent; /* this process told the server it is done */

static int fail(dem_remote_t *r, const char *what, const char *why)
{
  snprintf(r->err, sizeof r->err, "device server (world rank %d), %s: %s", r->server, what, why);
  return -1;
}


static int room(dem_remote_t *r, size_t bytes) { return dem_wire_grow(&r->buf, &r->buf_cap, bytes); }


/* sends the command (and `payload` bytes of r->buf after it); when it is answered, waits for the
 * answer, takes in its slot stride and work, and receives `answer_rows` bytes into r->buf */
static int call(dem_remote_t *r, cmd_t *c, const char *what, size_t payload, size_t answer_rows, reply_t *out)
{
  const dem_particles_t *p = r->p;
  c->n = (int64_t)p->n;
  c->n_ghost = (int64_t)p->n_ghost;
  c->cap = (int64_t)p->cap;
  c->slots = p->slots;
  r->search_flag = -1;
  dem_parallel_world_send(c, sizeof *c, r->server);
  if (payload) dem_parallel_world_send(r->buf, (long)payload, r->server);
  if (!dem_wire_answered(c->op)) return 0;
  reply_t rep;
  dem_parallel_world_recv(&rep, sizeof rep, r->server, NULL);
  rep.err[sizeof rep.err - 1] = '\0';
  if (rep.rc != 0) return fail(r, what, rep.err);
  if (answer_rows) dem_parallel_world_recv(r->buf, (long)answer_rows, r->server, NULL);
  r->last = rep.last;
  if (rep.slots > r->p->slots && dem_particles_widen_slots(r->p, rep.slots) != 0)
    return fail(r, what, "out of memory widening this rank's contact slots to the device's");
  if (out) *out = rep;
  return 0;
}

static int simple(dem_remote_t *r, int op, const char *what)
{
  cmd_t c = {.op = op};
  return call(r, &c, what, 0, 0, NULL);
}

dem_remote_t *dem_remote_create(const dem_params_t *prm, dem_particles_t *p, char *err, size_t errlen)
{
  dem_remote_t *r = calloc(1, sizeof *r);
  if (!r || room(r, sizeof *prm) != 0) {
    if (r) free(r);
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  r->p = p;
  r->search_flag = -1;
  r->server = dem_parallel_size(); /* the server follows the application's ranks */
  memcpy(r->buf, prm, sizeof *prm);
  cmd_t c = {.op = OP_CREATE};
  reply_t rep;
  if (call(r, &c, "create", sizeof *prm, 0, &rep) != 0 ||
      dem_remote_copy(r, 0, DEM_F_ALL, 0, p->n + p->n_ghost) != 0) {
    snprintf(err, errlen, "%s", r->err);
    dem_remote_destroy(&r);
    return NULL;
  }
  rep.name[sizeof rep.name - 1] = '\0';
  snprintf(r->name, sizeof r->name, "%s (remote, world rank %d)", rep.name, r->server);
  r->units = rep.units > 0 ? rep.units : 1;
  return r;
}

void dem_remote_destroy(dem_remote_t **rp)
{
  if (!rp || !*rp) return;
  dem_remote_t *r = *rp;
  if (!stop_sent) {
    cmd_t c = {.op = OP_STOP};
    dem_parallel_world_send(&c, sizeof c, r->server);
    stop_sent = 1;
  }
  free(r->buf);
  free(r);
  *rp = NULL;
}

void dem_remote_release(const dem_scenario_t *sc)
{
  if (!sc->server[0] || stop_sent) return;
  cmd_t c = {.op = OP_STOP};
  dem_parallel_world_send(&c, sizeof c, sc->ranks);
  stop_sent = 1;
}

const char *dem_remote_error(const dem_remote_t *r) { return r->err; }
const char *dem_remote_device_name(const dem_remote_t *r) { return r->name; }
int dem_remote_compute_units(const dem_remote_t *r) { return r->units; }
dem_engine_work_t dem_remote_last_work(const dem_remote_t *r) { return r->last; }

int dem_remote_copy(dem_remote_t *r, int to_host, unsigned fields, size_t first, size_t count)
{
  if (first + count > r->p->cap) return fail(r, to_host ? "pull" : "push", "rows beyond the store's capacity");
  if (count == 0) return 0; /* no message for nothing (a rank without ghosts) */
  size_t bytes = dem_particles_rows_bytes(r->p, fields, count);
  if (room(r, bytes) != 0) return fail(r, to_host ? "pull" : "push", "out of memory");
  cmd_t c = {.op = to_host ? OP_PULL : OP_PUSH, .fields = fields, .first = (int64_t)first, .count = (int64_t)count};
  if (!to_host) {
    dem_particles_pack_rows(r->p, fields, first, count, r->buf);
    return call(r, &c, "push", bytes, 0, NULL);
  }
  if (call(r, &c, "pull", 0, bytes, NULL) != 0) return -1;
  dem_particles_unpack_rows(r->p, fields, first, count, r->buf);
  return 0;
}

int dem_remote_resize(dem_remote_t *r) { return simple(r, OP_RESIZE, "resize"); }

/* the answer carries the search test, which the step asks for next: one round trip fewer */
int dem_remote_kick_drift(dem_remote_t *r, double kick)
{
  cmd_t c = {.op = OP_KICK_DRIFT, .kick = kick};
  reply_t rep = {0};
  if (call(r, &c, "kick-drift", 0, 0, &rep) != 0) return -1;
  r->search_flag = rep.flag != 0;
  return 0;
}

int dem_remote_kick(dem_remote_t *r) { return simple(r, OP_KICK, "kick"); }

int dem_remote_needs_search(dem_remote_t *r)
{
  if (r->search_flag >= 0) return r->search_flag;
  cmd_t c = {.op = OP_NEEDS_SEARCH};
  reply_t rep = {0};
  if (call(r, &c, "search test", 0, 0, &rep) != 0) return -1;
  return rep.flag != 0;
}

int dem_remote_search(dem_remote_t *r) { return simple(r, OP_SEARCH, "search"); }
int dem_remote_forces(dem_remote_t *r) { return simple(r, OP_FORCES, "forces"); }
int dem_remote_boundaries(dem_remote_t *r) { return simple(r, OP_BOUNDARIES, "boundaries"); }
int dem_remote_external(dem_remote_t *r) { return simple(r, OP_EXTERNAL, "external"); }
int dem_remote_finish(dem_remote_t *r) { return simple(r, OP_FINISH, "finish"); }
