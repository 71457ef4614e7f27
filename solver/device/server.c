/* Remote offload, the device server: one process that serves every application rank's kernels
 * on its own device (see server.h and remote.h; the protocol is wire.h). Per client it keeps a
 * mirror of the client's store and a real engine over it. */
#include "device/server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/parallel.h"
#include "dem/params.h"
#include "dem/particles.h"
#include "device/engine.h"
#include "device/wire.h"
#include "scenario/scenario.h"

/* one client's device: a mirror of its store and a real engine over it */
typedef struct mirror {
  dem_particles_t *p;
  dem_engine_t *e;
  reply_t failed; /* the first failure of an unanswered command (rc != 0), for the next answer */
  int stopped;
} mirror_t;

typedef struct server {
  const dem_scenario_t *sc;
  mirror_t *m;   /* one per application rank (world rank = index) */
  char *buf;
  size_t buf_cap;
} server_t;

static int server_room(server_t *s, size_t bytes) { return dem_wire_grow(&s->buf, &s->buf_cap, bytes); }

/* the mirror takes the client's store shape: capacity, owned and ghost counts, slot stride */
static int mirror_shape(mirror_t *m, const cmd_t *c, char *err, size_t errlen)
{
  if (c->n < 0 || c->n_ghost < 0 || c->n + c->n_ghost > c->cap || c->slots < 1 || c->slots > DEM_MAX_NEIGHBORS)
    return dem_fail(err, errlen, "a store of %lld + %lld particles in %lld with %d slots makes no sense",
                    (long long)c->n, (long long)c->n_ghost, (long long)c->cap, c->slots);
  if (dem_particles_reserve(m->p, (size_t)c->cap) != 0 ||
      (c->slots > m->p->slots && dem_particles_widen_slots(m->p, c->slots) != 0))
    return dem_fail(err, errlen, "out of memory for a store of %lld particles", (long long)c->cap);
  m->p->n = (size_t)c->n;
  m->p->n_ghost = (size_t)c->n_ghost;
  return 0;
}

static int mirror_create(server_t *s, mirror_t *m, const cmd_t *c, int from, char *err, size_t errlen)
{
  dem_params_t prm;
  dem_parallel_world_recv(&prm, sizeof prm, from, NULL);
  if (m->e) return dem_fail(err, errlen, "created twice");
  m->p = dem_particles_create((size_t)(c->cap > 0 ? c->cap : 1));
  if (!m->p) return dem_fail(err, errlen, "out of memory");
  if (mirror_shape(m, c, err, errlen) != 0) return -1;
  dem_engine_opts_t eo = {.backend = strcmp(s->sc->backend, "reference") == 0 ? DEM_BACKEND_REF : DEM_BACKEND_OPENCL,
                          .cl_platform = s->sc->cl_platform, .cl_device = s->sc->cl_device,
                          .cl_device_type = s->sc->cl_device_type};
  m->e = dem_engine_create(&eo, &prm, m->p, err, errlen);
  return m->e ? 0 : -1;
}

/* the rows of a push (received here) or a pull (sent after the reply). A push's rows are
 * always received, so that a refused one leaves no message behind. */
static int mirror_rows(server_t *s, mirror_t *m, const cmd_t *c, int from, size_t *answer)
{
  size_t count = c->count > 0 ? (size_t)c->count : 0;
  size_t bytes = dem_particles_rows_bytes(m->p, c->fields, count);
  if (server_room(s, bytes) != 0) return -2;
  if (c->op == OP_PUSH) dem_parallel_world_recv(s->buf, (long)bytes, from, NULL);
  if (c->first < 0 || c->count < 0 || c->first + c->count > (int64_t)m->p->cap) return -1;
  if (c->op == OP_PULL) {
    if (dem_engine_pull(m->e, c->fields, (size_t)c->first, count) != 0) return -1;
    dem_particles_pack_rows(m->p, c->fields, (size_t)c->first, count, s->buf);
    *answer = bytes;
    return 0;
  }
  dem_particles_unpack_rows(m->p, c->fields, (size_t)c->first, count, s->buf);
  return dem_engine_push(m->e, c->fields, (size_t)c->first, count);
}

/* runs one command on the mirror; -1 with the engine's message in rep->err */
static int serve(server_t *s, mirror_t *m, const cmd_t *c, int from, reply_t *rep, size_t *answer)
{
  if (c->op != OP_CREATE && !m->e) {
    snprintf(rep->err, sizeof rep->err, "command %d before create", c->op);
    return -1;
  }
  /* the client's rows have its slot stride: the mirror follows it when it widened */
  if (c->op != OP_CREATE && c->slots > m->p->slots && dem_particles_widen_slots(m->p, c->slots) != 0) return -2;
  int rc = 0;
  switch (c->op) {
  case OP_CREATE: return mirror_create(s, m, c, from, rep->err, sizeof rep->err);
  case OP_RESIZE:
    if (mirror_shape(m, c, rep->err, sizeof rep->err) != 0) return -1;
    rc = dem_engine_resize(m->e);
    break;
  case OP_PUSH: case OP_PULL: rc = mirror_rows(s, m, c, from, answer); break;
  case OP_KICK_DRIFT:
    rc = dem_engine_kick_drift(m->e, c->kick);
    if (rc == 0) rep->flag = dem_engine_needs_search(m->e);
    break;
  case OP_KICK: rc = dem_engine_kick(m->e); break;
  case OP_NEEDS_SEARCH: rep->flag = dem_engine_needs_search(m->e); break;
  case OP_SEARCH: rc = dem_engine_search(m->e); break;
  case OP_FORCES: rc = dem_engine_forces(m->e); break;
  case OP_BOUNDARIES: rc = dem_engine_boundaries(m->e); break;
  case OP_EXTERNAL: rc = dem_engine_external(m->e); break;
  case OP_FINISH: rc = dem_engine_finish(m->e); break;
  default: snprintf(rep->err, sizeof rep->err, "unknown command %d", c->op); return -1;
  }
  if (rc != 0) snprintf(rep->err, sizeof rep->err, "%s", dem_engine_error(m->e));
  return rc;
}

static void mirror_free(mirror_t *m)
{
  dem_engine_destroy(&m->e);
  dem_particles_destroy(&m->p);
}

int dem_device_server_run(const dem_scenario_t *sc, char *err, size_t errlen)
{
  server_t s = {.sc = sc, .m = calloc((size_t)sc->ranks, sizeof(mirror_t))};
  if (!s.m) return dem_fail(err, errlen, "device server: out of memory");
  if (dem_clock_init(err, errlen)) {
    free(s.m);
    return -1;
  }
  int left = sc->ranks, rc = 0;
  while (left > 0 && rc == 0) {
    cmd_t c;
    int from = -1;
    dem_parallel_world_recv(&c, sizeof c, -1, &from);
    if (from < 0 || from >= sc->ranks) {
      rc = dem_fail(err, errlen, "device server: a command from world rank %d, which is no application rank", from);
      break;
    }
    mirror_t *m = &s.m[from];
    if (c.op == OP_STOP) {
      mirror_free(m);
      m->stopped = 1;
      left--;
      continue;
    }
    reply_t rep = {0};
    size_t answer = 0;
    rep.rc = serve(&s, m, &c, from, &rep, &answer);
    if (rep.rc == -2) {
      rc = dem_fail(err, errlen, "device server: out of memory serving world rank %d", from);
      break;
    }
    if (rep.rc != 0 && !rep.err[0]) snprintf(rep.err, sizeof rep.err, "rows out of the store's range");
    if (!dem_wire_answered(c.op)) { /* kept for the next answer */
      if (rep.rc != 0 && !m->failed.rc) m->failed = rep;
      continue;
    }
    if (m->failed.rc) { /* an unanswered command failed before this one */
      rep = m->failed;
      m->failed.rc = 0;
      answer = 0;
    }
    if (m->e) {
      rep.last = dem_engine_last_work(m->e);
      rep.slots = m->p->slots;
      rep.units = dem_engine_compute_units(m->e);
      snprintf(rep.name, sizeof rep.name, "%s on %s", dem_engine_device_name(m->e), dem_clock_host());
    }
    dem_parallel_world_send(&rep, sizeof rep, from);
    if (rep.rc == 0 && answer) dem_parallel_world_send(s.buf, (long)answer, from);
  }
  for (int i = 0; i < sc->ranks; i++) mirror_free(&s.m[i]);
  free(s.m);
  free(s.buf);
  return rc;
}
