/* Remote offload: the protocol, the client (an application rank's engine) and the device
 * server (see remote.h). Messages go through parallel.c (the only module that calls MPI). */
#include "remote.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "error.h"
#include "parallel.h"
#include "params.h"
#include "particles.h"
#include "scenario.h"

enum { OP_CREATE = 1, OP_RESIZE, OP_PUSH, OP_PULL, OP_KICK_DRIFT, OP_KICK, OP_NEEDS_SEARCH, OP_SEARCH, OP_FORCES,
       OP_BOUNDARIES, OP_EXTERNAL, OP_FINISH, OP_STOP };

/* a command; rows (push) or the parameters (create) follow in a second message */
typedef struct cmd {
  int32_t op, slots;
  uint32_t fields;
  int32_t unused;
  int64_t first, count, n, n_ghost, cap;
  double kick;
} cmd_t;

/* the answer; the rows of a pull follow in a second message */
typedef struct reply {
  int32_t rc, flag, slots, units;
  dem_engine_work_t last;
  char err[240];
  char name[120];
} reply_t;

/* the mirror holds the store's arrays of dem_engine_arrays (engine.h) */

static size_t row_bytes(const dem_particles_t *p, int f)
{
  return dem_engine_arrays[f].bytes * (dem_engine_arrays[f].slotted ? (size_t)p->slots : 1);
}

static char *field_base(const dem_particles_t *p, int f)
{
  return *(char *const *)((const char *)p + dem_engine_arrays[f].offset);
}

size_t dem_remote_rows_bytes(const dem_particles_t *p, unsigned fields, size_t count)
{
  size_t b = 0;
  for (int f = 0; f < DEM_ARRAY_COUNT; f++)
    if (fields & dem_engine_arrays[f].flag) b += row_bytes(p, f) * count;
  return b;
}

void dem_remote_pack(const dem_particles_t *p, unsigned fields, size_t first, size_t count, char *buf)
{
  for (int f = 0; f < DEM_ARRAY_COUNT; f++) {
    if (!(fields & dem_engine_arrays[f].flag)) continue;
    size_t rb = row_bytes(p, f);
    memcpy(buf, field_base(p, f) + first * rb, count * rb);
    buf += count * rb;
  }
}

void dem_remote_unpack(dem_particles_t *p, unsigned fields, size_t first, size_t count, const char *buf)
{
  for (int f = 0; f < DEM_ARRAY_COUNT; f++) {
    if (!(fields & dem_engine_arrays[f].flag)) continue;
    size_t rb = row_bytes(p, f);
    memcpy(field_base(p, f) + first * rb, buf, count * rb);
    buf += count * rb;
  }
}

/* ------------------------------------------------------------------ client ------------- */

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

/* a message buffer of at least `bytes` (client and server alike); 0 or -1 */
static int grow(char **buf, size_t *cap, size_t bytes)
{
  if (bytes <= *cap) return 0;
  char *b = realloc(*buf, bytes);
  if (!b) return -1;
  *buf = b;
  *cap = bytes;
  return 0;
}

static int room(dem_remote_t *r, size_t bytes) { return grow(&r->buf, &r->buf_cap, bytes); }

/* Commands that return nothing the host needs are not answered: the server keeps their failure
 * and returns it with the next answer (a GPU runtime reports an asynchronous error the same way). */
static int answered(int op) { return op != OP_PUSH && op != OP_FORCES && op != OP_BOUNDARIES && op != OP_STOP; }

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
  if (!answered(c->op)) return 0;
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
  size_t bytes = dem_remote_rows_bytes(r->p, fields, count);
  if (room(r, bytes) != 0) return fail(r, to_host ? "pull" : "push", "out of memory");
  cmd_t c = {.op = to_host ? OP_PULL : OP_PUSH, .fields = fields, .first = (int64_t)first, .count = (int64_t)count};
  if (!to_host) {
    dem_remote_pack(r->p, fields, first, count, r->buf);
    return call(r, &c, "push", bytes, 0, NULL);
  }
  if (call(r, &c, "pull", 0, bytes, NULL) != 0) return -1;
  dem_remote_unpack(r->p, fields, first, count, r->buf);
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

/* ------------------------------------------------------------------ server ------------- */

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

static int server_room(server_t *s, size_t bytes) { return grow(&s->buf, &s->buf_cap, bytes); }

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
  size_t bytes = dem_remote_rows_bytes(m->p, c->fields, count);
  if (server_room(s, bytes) != 0) return -2;
  if (c->op == OP_PUSH) dem_parallel_world_recv(s->buf, (long)bytes, from, NULL);
  if (c->first < 0 || c->count < 0 || c->first + c->count > (int64_t)m->p->cap) return -1;
  if (c->op == OP_PULL) {
    if (dem_engine_pull(m->e, c->fields, (size_t)c->first, count) != 0) return -1;
    dem_remote_pack(m->p, c->fields, (size_t)c->first, count, s->buf);
    *answer = bytes;
    return 0;
  }
  dem_remote_unpack(m->p, c->fields, (size_t)c->first, count, s->buf);
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
    if (!answered(c.op)) { /* kept for the next answer */
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
