/* Work stealing over MPI (design: workloads/nqueens/README.md).
 *
 * Every rank runs tasks from the newest end of its own deque and, between two tasks, answers
 * whatever arrived (MPI_Test): a steal request gets the oldest task of the deque, or "none".
 * An idle rank steals:
 *   RWS  : a random victim among all other ranks, synchronously (it waits for the answer);
 *   CRWS : first, when none is outstanding, one asynchronous request to a random rank of another
 *          site; then synchronous requests to random ranks of its own site, one after another,
 *          while the wide-area one is in flight (van Nieuwpoort, Kielmann and Bal, PPoPP 2001).
 * A rank waiting for an answer still answers others (one standing MPI_Irecv of any source and
 * tag, tested between tasks and waited on when idle), so two
 * ranks stealing from each other never wait for each other. Every message is sent with
 * MPI_Isend: under SMPI a blocking send waits for its receive, which would deadlock that pair.
 *
 * Termination: Dijkstra-Safra's token ring. The basic messages are the task-carrying answers
 * (counted +1 at the sender, -1 at the receiver, which turns black); a rank is passive when its
 * deque is empty, whatever requests it has outstanding, since only a task can make it active
 * again. Rank 0 announces the end (TERM); then every rank waits for its own outstanding
 * requests' answers, says QUIET to rank 0, and rank 0 releases everyone (DONE) once all are
 * quiet: no message is then left unreceived. */
#include "steal.h"
#include "search.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_REQ = 11, TAG_REPLY, TAG_TOKEN, TAG_TERM, TAG_QUIET, TAG_DONE };
enum { KIND_SYNC = 0, KIND_WIDE = 1 };

typedef struct {
  int32_t kind;     /* KIND_SYNC or KIND_WIDE: which request this answers */
  int32_t has_task; /* a task (and the payload) follows */
  nq_task_t task;
} reply_t;

typedef struct {
  int64_t count; /* sum of the counters of the ranks visited */
  int32_t black;
  int32_t pad;
} token_t;

typedef struct {
  const nq_config_t *cfg;
  nq_stats_t *st;
  int rank, size;
  nq_deque_t q;
  uint64_t rng;
  int *local, nlocal;   /* other ranks of this rank's site */
  int *remote, nremote; /* ranks of the other sites */
  MPI_Request *out;     /* sends not known to be complete, with their buffers */
  char **outbuf;
  int nout, capout;
  char *inbuf; /* the standing receive of any message, and its buffer */
  int incap;
  MPI_Request inreq;
  int sync_pending, sync_wide; /* a synchronous request is outstanding (to another site) */
  int wide_pending;            /* an asynchronous wide-area request is outstanding */
  int64_t counter;             /* Safra: task messages sent - received */
  int black, have_token, token_out, terminated, quiet_count, done;
  token_t token;
} worker_t;

#define MPI_TRY(call)                                                                          \
  do {                                                                                         \
    int rc_ = (call);                                                                          \
    if (rc_ != MPI_SUCCESS) {                                                                  \
      fprintf(stderr, "nqueens: %s failed (MPI error %d) at %s:%d\n", #call, rc_, __FILE__,     \
              __LINE__);                                                                       \
      return -1;                                                                               \
    }                                                                                          \
  } while (0)

static uint64_t next_random(worker_t *w)
{
  w->rng ^= w->rng << 13; /* xorshift64 */
  w->rng ^= w->rng >> 7;
  w->rng ^= w->rng << 17;
  return w->rng;
}

/* Completed sends leave the outbox; it grows when every slot is busy. */
static int outbox_reap(worker_t *w)
{
  int kept = 0;
  for (int i = 0; i < w->nout; i++) {
    int done = 0;
    MPI_TRY(MPI_Test(&w->out[i], &done, MPI_STATUS_IGNORE));
    if (done) {
      free(w->outbuf[i]);
    } else {
      w->out[kept] = w->out[i];
      w->outbuf[kept++] = w->outbuf[i];
    }
  }
  w->nout = kept;
  return 0;
}

static int post(worker_t *w, int dest, int tag, const void *data, int len)
{
  if (w->nout == w->capout && outbox_reap(w) != 0)
    return -1;
  if (w->nout == w->capout) {
    int cap = w->capout ? 2 * w->capout : 16;
    MPI_Request *out = realloc(w->out, cap * sizeof *out);
    if (out)
      w->out = out;
    char **outbuf = realloc(w->outbuf, cap * sizeof *outbuf);
    if (outbuf)
      w->outbuf = outbuf;
    if (!out || !outbuf) {
      fprintf(stderr, "nqueens: out of memory (outbox of %d sends)\n", cap);
      return -1;
    }
    w->capout = cap;
  }
  char *buf = calloc(1, len > 0 ? len : 1);
  if (!buf) {
    fprintf(stderr, "nqueens: out of memory (a message of %d B)\n", len);
    return -1;
  }
  memcpy(buf, data, len);
  MPI_TRY(MPI_Isend(buf, len, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &w->out[w->nout]));
  w->outbuf[w->nout++] = buf;
  w->st->bytes_sent += len;
  w->st->messages_sent += 1;
  return 0;
}

static int send_request(worker_t *w, int victim, int kind)
{
  int wide = w->cfg->site[victim] != w->cfg->site[w->rank];
  int32_t k = kind;
  if (kind == KIND_WIDE)
    w->wide_pending = 1;
  else {
    w->sync_pending = 1;
    w->sync_wide = wide;
  }
  if (wide)
    w->st->steal_wide += 1;
  else
    w->st->steal_local += 1;
  double inflight = (w->sync_pending && w->sync_wide) + w->wide_pending;
  if (inflight > w->st->wide_inflight_max)
    w->st->wide_inflight_max = inflight;
  return post(w, victim, TAG_REQ, &k, sizeof k);
}

/* A thief asked: the oldest task (the coarsest), or none. */
static int answer_request(worker_t *w, int thief, int32_t kind)
{
  int len = (int)sizeof(reply_t) + w->cfg->payload;
  char *msg = calloc(1, len);
  if (!msg) {
    fprintf(stderr, "nqueens: out of memory (a reply of %d B)\n", len);
    return -1;
  }
  reply_t r = {kind, 0, nq_task_root()};
  if (!w->terminated && nq_deque_pop_oldest(&w->q, &r.task)) {
    r.has_task = 1;
    w->counter++;
  } else {
    len = (int)sizeof(reply_t);
  }
  memcpy(msg, &r, sizeof r);
  int rc = post(w, thief, TAG_REPLY, msg, len);
  free(msg);
  return rc;
}

static int take_reply(worker_t *w, int victim, const reply_t *r)
{
  int wide = w->cfg->site[victim] != w->cfg->site[w->rank];
  if (r->kind == KIND_WIDE)
    w->wide_pending = 0;
  else
    w->sync_pending = 0;
  if (!r->has_task)
    return 0;
  w->counter--;
  w->black = 1;
  if (wide)
    w->st->steal_wide_ok += 1;
  else
    w->st->steal_local_ok += 1;
  if (nq_deque_push(&w->q, r->task) != 0) {
    fprintf(stderr, "nqueens: out of memory (deque)\n");
    return -1;
  }
  return 0;
}

/* Acts on the message that the standing receive got; then posts it again. */
static int handle(worker_t *w, const MPI_Status *s)
{
  int src = s->MPI_SOURCE, tag = s->MPI_TAG, rc = 0;
  switch (tag) {
  case TAG_REQ: {
    int32_t kind;
    memcpy(&kind, w->inbuf, sizeof kind);
    rc = answer_request(w, src, kind);
    break;
  }
  case TAG_REPLY: {
    reply_t r;
    memcpy(&r, w->inbuf, sizeof r);
    rc = take_reply(w, src, &r);
    break;
  }
  case TAG_TOKEN:
    memcpy(&w->token, w->inbuf, sizeof w->token);
    w->have_token = 1;
    break;
  case TAG_TERM:
    w->terminated = 1;
    break;
  case TAG_QUIET:
    w->quiet_count++;
    break;
  case TAG_DONE:
    w->done = 1;
    return 0; /* the last message: no receive is posted again */
  default:
    fprintf(stderr, "nqueens: rank %d: unexpected tag %d from rank %d\n", w->rank, tag, src);
    return -1;
  }
  if (rc != 0 ||
      (w->rank == 0 && w->quiet_count == w->size - 1 && !w->sync_pending && !w->wide_pending))
    return rc; /* rank 0: every rank is quiet, nothing more will come */
  MPI_TRY(MPI_Irecv(w->inbuf, w->incap, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                    &w->inreq));
  return 0;
}

/* Answers everything that has arrived, without waiting. A standing MPI_Irecv tested here,
 * rather than MPI_Iprobe: SMPI charges every unsuccessful MPI_Iprobe a growing simulated delay
 * (smpi/iprobe times the number of unsuccessful calls in a row), which a poll between every
 * two tasks would turn into seconds. */
static int poll(worker_t *w)
{
  while (w->size > 1) {
    int flag = 0;
    MPI_Status s;
    MPI_TRY(MPI_Test(&w->inreq, &flag, &s));
    if (!flag)
      return 0;
    if (handle(w, &s) != 0)
      return -1;
  }
  return 0;
}

/* Waits for one message and acts on it. */
static int wait_one(worker_t *w)
{
  MPI_Status s;
  MPI_TRY(MPI_Wait(&w->inreq, &s));
  return handle(w, &s);
}

/* Safra's token, moved on by a passive rank (deque empty, no task running). */
static int pass_token(worker_t *w)
{
  if (w->size == 1) {
    w->terminated = 1;
    return 0;
  }
  int next = (w->rank + 1) % w->size;
  if (w->rank == 0) {
    if (w->token_out && !w->have_token)
      return 0;
    if (w->have_token && !w->token.black && !w->black && w->token.count + w->counter == 0) {
      w->terminated = 1;
      for (int r = 1; r < w->size; r++)
        if (post(w, r, TAG_TERM, &w->token, sizeof w->token) != 0)
          return -1;
      return 0;
    }
    token_t fresh = {0, 0, 0};
    w->have_token = 0;
    w->token_out = 1;
    w->black = 0;
    return post(w, next, TAG_TOKEN, &fresh, sizeof fresh);
  }
  if (!w->have_token)
    return 0;
  token_t t = {w->token.count + w->counter, w->token.black || w->black, 0};
  w->have_token = 0;
  w->black = 0;
  return post(w, next, TAG_TOKEN, &t, sizeof t);
}

/* One synchronous steal: the request, then every message until its answer (or the end). */
static int steal_sync(worker_t *w, int victim)
{
  if (send_request(w, victim, KIND_SYNC) != 0)
    return -1;
  while (w->sync_pending && !w->terminated)
    if (wait_one(w) != 0)
      return -1;
  return 0;
}

/* An idle rank's move: pass the token on, then steal as the strategy says. */
static int idle_step(worker_t *w)
{
  if (pass_token(w) != 0)
    return -1;
  if (w->terminated || w->size == 1)
    return 0;
  if (w->cfg->strategy == NQ_RWS) {
    int v = (int)(next_random(w) % (uint64_t)(w->size - 1));
    return steal_sync(w, v >= w->rank ? v + 1 : v);
  }
  if (w->nremote > 0 && !w->wide_pending &&
      send_request(w, w->remote[next_random(w) % (uint64_t)w->nremote], KIND_WIDE) != 0)
    return -1;
  if (w->nlocal > 0)
    return steal_sync(w, w->local[next_random(w) % (uint64_t)w->nlocal]);
  return wait_one(w); /* alone on its site: wait for the wide-area answer or the token */
}

/* Runs one task: children onto the deque above the threshold depth, solved below it. */
static int run_task(worker_t *w, nq_task_t t)
{
  double t0 = MPI_Wtime();
  if ((int)t.depth < w->cfg->threshold && (int)t.depth < w->cfg->n) {
    if (nq_task_expand(w->cfg->n, t, &w->q) < 0) {
      fprintf(stderr, "nqueens: out of memory (deque)\n");
      return -1;
    }
  } else {
    uint64_t nodes = 0;
    w->st->solutions += (double)nq_task_solve(w->cfg->n, t, &nodes);
    w->st->nodes += (double)nodes;
  }
  w->st->tasks += 1;
  w->st->last_task_end = MPI_Wtime();
  w->st->busy += w->st->last_task_end - t0;
  return 0;
}

/* After TERM: wait for this rank's outstanding answers, then for everyone's (QUIET / DONE). */
static int shut_down(worker_t *w)
{
  while (w->sync_pending || w->wide_pending)
    if (wait_one(w) != 0)
      return -1;
  if (w->rank != 0) {
    int32_t z = 0;
    if (post(w, 0, TAG_QUIET, &z, sizeof z) != 0)
      return -1;
    while (!w->done)
      if (wait_one(w) != 0)
        return -1;
  } else {
    while (w->quiet_count < w->size - 1)
      if (wait_one(w) != 0)
        return -1;
    int32_t z = 0;
    for (int r = 1; r < w->size; r++)
      if (post(w, r, TAG_DONE, &z, sizeof z) != 0)
        return -1;
  }
  MPI_TRY(MPI_Waitall(w->nout, w->out, MPI_STATUSES_IGNORE));
  for (int i = 0; i < w->nout; i++)
    free(w->outbuf[i]);
  w->nout = 0;
  return 0;
}

static int worker_init(worker_t *w, const nq_config_t *cfg, nq_stats_t *st)
{
  memset(w, 0, sizeof *w);
  memset(st, 0, sizeof *st);
  w->cfg = cfg;
  w->st = st;
  MPI_TRY(MPI_Comm_rank(MPI_COMM_WORLD, &w->rank));
  MPI_TRY(MPI_Comm_size(MPI_COMM_WORLD, &w->size));
  w->rng = (cfg->seed + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)(w->rank + 1) * 0xBF58476D1CE4E5B9ull;
  if (w->rng == 0)
    w->rng = 1;
  w->local = malloc(w->size * sizeof *w->local);
  w->remote = malloc(w->size * sizeof *w->remote);
  if (!w->local || !w->remote || nq_deque_init(&w->q, 256) != 0) {
    fprintf(stderr, "nqueens: out of memory\n");
    return -1;
  }
  for (int r = 0; r < w->size; r++) {
    if (r == w->rank)
      continue;
    if (cfg->site[r] == cfg->site[w->rank])
      w->local[w->nlocal++] = r;
    else
      w->remote[w->nremote++] = r;
  }
  if (w->rank == 0 && nq_deque_push(&w->q, nq_task_root()) != 0)
    return -1;
  w->incap = (int)sizeof(reply_t) + cfg->payload;
  if (w->incap < (int)sizeof(token_t))
    w->incap = (int)sizeof(token_t);
  w->inbuf = malloc(w->incap);
  if (!w->inbuf) {
    fprintf(stderr, "nqueens: out of memory (a receive buffer of %d B)\n", w->incap);
    return -1;
  }
  w->inreq = MPI_REQUEST_NULL;
  if (w->size > 1)
    MPI_TRY(MPI_Irecv(w->inbuf, w->incap, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                      &w->inreq));
  return 0;
}

static void worker_destroy(worker_t *w)
{
  nq_deque_destroy(&w->q);
  free(w->local);
  free(w->remote);
  free(w->out);
  free(w->outbuf);
  free(w->inbuf);
}

int nq_steal_run(const nq_config_t *cfg, nq_stats_t *stats)
{
  worker_t w;
  int rc = worker_init(&w, cfg, stats);
  while (rc == 0 && !w.terminated) {
    nq_task_t t;
    if (nq_deque_pop_newest(&w.q, &t)) {
      rc = run_task(&w, t);
      if (rc == 0)
        rc = poll(&w);
    } else {
      rc = idle_step(&w);
    }
  }
  if (rc == 0)
    rc = shut_down(&w);
  worker_destroy(&w);
  return rc;
}
