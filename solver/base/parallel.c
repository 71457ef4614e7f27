/* MPI calls, all in one place (see parallel.h). Return codes of MPI calls are checked by
 * MPI_ERRORS_ARE_FATAL on MPI_COMM_WORLD, the standard default, which aborts with MPI's
 * own message; the checks below only cover what MPI does not. */
#include "base/parallel.h"

#include "base/clock.h"

#include <mpi.h>
#include <stdlib.h>
#include <stdio.h>
#include <limits.h>
#include <string.h>
#include <time.h>

/* The communicator of every call below: the application's ranks (MPI_COMM_WORLD, or its part
 * without the device servers after dem_parallel_split_servers), or MPI_COMM_SELF while a test
 * runs a serial reference (dem_parallel_use_self). */
static int use_self;
static int split;         /* 1 once dem_parallel_split_servers made app_comm */
static MPI_Comm app_comm; /* valid when split */

enum { HOST_NAME = 128 };
static char *hosts; /* HOST_NAME bytes a rank of comm() (dem_parallel_learn_hosts) */
static int n_hosts;

/* a function, not a constant: under SMPI MPI_COMM_WORLD is itself a call, per rank */
static MPI_Comm comm(void) { return use_self ? MPI_COMM_SELF : split ? app_comm : MPI_COMM_WORLD; }

MPI_Comm dem_parallel_comm(void) { return comm(); }

MPI_Comm dem_parallel_comm_split(int color)
{
  int me = 0;
  MPI_Comm c = MPI_COMM_NULL;
  MPI_Comm_rank(comm(), &me);
  MPI_Comm_split(comm(), color, me, &c);
  return c;
}

void dem_parallel_comm_free(MPI_Comm *c)
{
  if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
}

int dem_parallel_split_servers(int app_ranks)
{
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  int server = me >= app_ranks;
  MPI_Comm_split(MPI_COMM_WORLD, server, me, &app_comm);
  split = 1;
  return server;
}

int dem_parallel_world_rank(void)
{
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

/* the device-server protocol's messages: their own tag, on MPI_COMM_WORLD (client and server
 * are in different halves of the split) */
enum { DEM_TAG_DEVICE = 7700 };

void dem_parallel_world_send(const void *buf, long n, int dest)
{
  MPI_Send(buf, (int)n, MPI_BYTE, dest, DEM_TAG_DEVICE, MPI_COMM_WORLD);
}

long dem_parallel_world_recv(void *buf, long max, int src, int *from)
{
  MPI_Status st;
  MPI_Recv(buf, (int)max, MPI_BYTE, src < 0 ? MPI_ANY_SOURCE : src, DEM_TAG_DEVICE, MPI_COMM_WORLD, &st);
  int count = 0;
  MPI_Get_count(&st, MPI_BYTE, &count);
  if (from) *from = st.MPI_SOURCE;
  return count;
}

void dem_parallel_use_self(int on) { use_self = on; }

int dem_parallel_init(int *argc, char ***argv)
{
  int flag = 0;
  MPI_Initialized(&flag);
  if (!flag && MPI_Init(argc, argv) != MPI_SUCCESS) return -1;
  return 0;
}

void dem_parallel_finalize(void)
{
  int flag = 0;
  MPI_Finalized(&flag);
  if (flag) return;
  if (split) MPI_Comm_free(&app_comm);
  split = 0;
  free(hosts);
  hosts = NULL;
  n_hosts = 0;
  MPI_Finalize();
}

void dem_parallel_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

int dem_parallel_rank(void)
{
  int r = 0;
  MPI_Comm_rank(comm(), &r);
  return r;
}

int dem_parallel_size(void)
{
  int n = 1;
  MPI_Comm_size(comm(), &n);
  return n;
}

void dem_parallel_barrier(void)
{
  MPI_Barrier(comm());
  dem_clock_synced();
}

void dem_parallel_barrier_idle(void)
{
  MPI_Request req;
  int done = 0;
  const struct timespec ms = {0, 1000000};
  MPI_Ibarrier(comm(), &req);
  for (MPI_Test(&req, &done, MPI_STATUS_IGNORE); !done; MPI_Test(&req, &done, MPI_STATUS_IGNORE))
    nanosleep(&ms, NULL);
}

/* every reduction: its completion seen when this rank runs (dem_clock_synced) */
static void allreduce(void *v, int n, MPI_Datatype type, MPI_Op op)
{
  MPI_Allreduce(MPI_IN_PLACE, v, n, type, op, comm());
  dem_clock_synced();
}

void dem_parallel_sum_double(double *v, int n) { allreduce(v, n, MPI_DOUBLE, MPI_SUM); }
void dem_parallel_max_double(double *v, int n) { allreduce(v, n, MPI_DOUBLE, MPI_MAX); }
void dem_parallel_min_double(double *v, int n) { allreduce(v, n, MPI_DOUBLE, MPI_MIN); }
void dem_parallel_sum_long(long *v, int n) { allreduce(v, n, MPI_LONG, MPI_SUM); }
void dem_parallel_max_int(int *v, int n) { allreduce(v, n, MPI_INT, MPI_MAX); }

void dem_parallel_gather_double(const double *in, int n, double *out, int root)
{
  MPI_Gather(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, root, comm());
  dem_clock_synced();
}

void dem_parallel_gather_counts(long mine, long *counts, int root)
{
  MPI_Gather(&mine, 1, MPI_LONG, counts, 1, MPI_LONG, root, comm());
  dem_clock_synced();
}

/* Byte counts can exceed INT_MAX at the full study scale, so the gather is done as one
 * receive per rank in chunks rather than with MPI_Gatherv's int counts. */
void dem_parallel_gatherv_bytes(const void *in, long n, void *out, const long *counts, int root)
{
  const long chunk = 1L << 30;
  int rank = dem_parallel_rank(), size = dem_parallel_size();
  if (rank != root) {
    for (long off = 0; off < n; off += chunk) {
      long len = n - off < chunk ? n - off : chunk;
      MPI_Send((const char *)in + off, (int)len, MPI_BYTE, root, 77, comm());
    }
    return;
  }
  char *dst = out;
  for (int r = 0; r < size; r++) {
    if (r == root) memcpy(dst, in, (size_t)n);
    else
      for (long off = 0; off < counts[r]; off += chunk) {
        long len = counts[r] - off < chunk ? counts[r] - off : chunk;
        MPI_Recv(dst + off, (int)len, MPI_BYTE, r, 77, comm(), MPI_STATUS_IGNORE);
      }
    dst += counts[r];
  }
}

void dem_parallel_bcast(void *buf, long bytes, int root)
{
  MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, comm());
  dem_clock_synced();
}

void dem_parallel_processor_name(char *buf, size_t len)
{
  char name[MPI_MAX_PROCESSOR_NAME];
  int n = 0;
  MPI_Get_processor_name(name, &n);
  snprintf(buf, len, "%s", name);
}

void dem_parallel_allgather_double(const double *in, int n, double *out)
{
  MPI_Allgather(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, comm());
  dem_clock_synced();
}

void dem_parallel_alltoall_int(const int *send, int *recv)
{
  MPI_Alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, comm());
  dem_clock_synced();
}

struct dem_parallel_xchg {
  int max, count;
  MPI_Request *req;
};

dem_parallel_xchg_t *dem_parallel_xchg_create(int max_requests)
{
  dem_parallel_xchg_t *x = calloc(1, sizeof *x);
  if (!x) return NULL;
  x->max = max_requests > 0 ? max_requests : 1;
  x->req = malloc((size_t)x->max * sizeof *x->req);
  if (!x->req) {
    free(x);
    return NULL;
  }
  return x;
}

void dem_parallel_xchg_destroy(dem_parallel_xchg_t **x)
{
  if (!*x) return;
  free((*x)->req);
  free(*x);
  *x = NULL;
}

void dem_parallel_learn_hosts(void)
{
  char mine[HOST_NAME] = {0};
  snprintf(mine, sizeof mine, "%s", dem_clock_host());
  int n = dem_parallel_size();
  char *all = malloc((size_t)n * HOST_NAME);
  if (!all) return; /* nothing recorded: the clock treats the waits as before */
  MPI_Allgather(mine, HOST_NAME, MPI_CHAR, all, HOST_NAME, MPI_CHAR, comm());
  free(hosts);
  hosts = all;
  n_hosts = n;
}

void dem_parallel_moved(int peer, double bytes, int sending)
{
  if (peer >= 0 && peer < n_hosts) dem_clock_moved(hosts + (size_t)peer * HOST_NAME, bytes, sending);
}

int dem_parallel_xchg_recv(dem_parallel_xchg_t *x, void *buf, size_t bytes, int from, int tag)
{
  if (x->count >= x->max || bytes > INT_MAX) return -1;
  dem_parallel_moved(from, (double)bytes, 0);
  MPI_Irecv(buf, (int)bytes, MPI_BYTE, from, tag, comm(), &x->req[x->count++]);
  return 0;
}

int dem_parallel_xchg_send(dem_parallel_xchg_t *x, const void *buf, size_t bytes, int to, int tag)
{
  if (x->count >= x->max || bytes > INT_MAX) return -1;
  dem_parallel_moved(to, (double)bytes, 1);
  MPI_Isend(buf, (int)bytes, MPI_BYTE, to, tag, comm(), &x->req[x->count++]);
  return 0;
}

void dem_parallel_xchg_wait(dem_parallel_xchg_t *x)
{
  double t0 = dem_clock_now();
  MPI_Waitall(x->count, x->req, MPI_STATUSES_IGNORE);
  dem_clock_blocked(dem_clock_now() - t0);
  dem_clock_synced();
  x->count = 0;
}

void dem_parallel_send_bytes(const void *buf, long n, int dest)
{
  MPI_Send(buf, (int)n, MPI_BYTE, dest, 78, comm());
}

void dem_parallel_recv_bytes(void *buf, long n, int src)
{
  MPI_Recv(buf, (int)n, MPI_BYTE, src, 78, comm(), MPI_STATUS_IGNORE);
  dem_clock_synced();
}

int dem_parallel_node_leader(void)
{
  MPI_Comm node;
  int me = dem_parallel_rank(), leader = me;
  MPI_Comm_split_type(comm(), MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node);
  MPI_Allreduce(&me, &leader, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  return leader;
}

/* Two warm-up round trips (connection set-up, first-touch of the buffer), then `reps` timed
 * ones. Both ranks take part; only `a` records the times. */
int dem_parallel_pingpong(int a, int b, long bytes, int reps, double *rtt_s)
{
  int me = dem_parallel_rank();
  if ((me != a && me != b) || bytes > INT_MAX) return me == a || me == b ? -1 : 0;
  char *buf = calloc((size_t)bytes, 1);
  if (!buf) return -1;
  int peer = me == a ? b : a;
  for (int i = -2; i < reps; i++) {
    double t0 = MPI_Wtime();
    if (me == a) {
      MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 79, comm());
      MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 79, comm(), MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 79, comm(), MPI_STATUS_IGNORE);
      MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 79, comm());
    }
    if (me == a && i >= 0) rtt_s[i] = MPI_Wtime() - t0;
  }
  free(buf);
  return 0;
}

char *dem_parallel_gather_text(const char *mine, int root)
{
  int size = dem_parallel_size(), rank = dem_parallel_rank();
  long n = (long)strlen(mine) + 1, total = 0;
  long *counts = rank == root ? malloc((size_t)size * sizeof *counts) : NULL;
  if (rank == root && !counts) dem_parallel_abort(1);
  dem_parallel_gather_counts(n, counts, root);
  if (rank == root)
    for (int r = 0; r < size; r++) total += counts[r];
  char *all = rank == root ? malloc((size_t)total + 1) : NULL;
  if (rank == root && !all) dem_parallel_abort(1);
  dem_parallel_gatherv_bytes(mine, n, all, counts, root);
  if (all) all[total] = '\0';
  free(counts);
  return all;
}

/* A mailbox: standing receives (one from a given rank, or one from each rank), each posted
 * again after its message, and the sends still in flight, each with its own copy of the bytes
 * (the caller's buffer is free as soon as send returns). One receive per sender rather than
 * one from any source: under SMPI a receive posted again after a message matches the next one
 * only as simulated time passes, so a single receive would take one report per poll. A send
 * slot is free when its request is MPI_REQUEST_NULL (MPI_Test sets it so on completion). */
typedef struct mail_slot {
  MPI_Request req;
  unsigned char *buf;
} mail_slot_t;

struct dem_parallel_mailbox {
  int tag;
  size_t bytes;
  int nrecv, from, next; /* receives; their sender (-1: receive i from rank i); the next to test */
  MPI_Request *recv;
  unsigned char *inbox;  /* nrecv x bytes */
  int nslots;
  mail_slot_t *slots;
  long *sent_to;         /* per rank, messages sent */
  long received;
};

static void mailbox_post(dem_parallel_mailbox_t *m, int i)
{
  MPI_Irecv(m->inbox + (size_t)i * m->bytes, (int)m->bytes, MPI_BYTE, m->from < 0 ? i : m->from, m->tag, comm(),
            &m->recv[i]);
}

dem_parallel_mailbox_t *dem_parallel_mailbox_create(size_t bytes, int tag, int from)
{
  dem_parallel_mailbox_t *m = calloc(1, sizeof *m);
  if (!m || bytes > INT_MAX) {
    free(m);
    return NULL;
  }
  int n = dem_parallel_size();
  m->tag = tag;
  m->bytes = bytes;
  m->from = from;
  m->nrecv = from < 0 ? n : 1;
  m->recv = malloc((size_t)m->nrecv * sizeof *m->recv);
  m->inbox = malloc((size_t)m->nrecv * bytes);
  m->sent_to = calloc((size_t)n, sizeof *m->sent_to);
  if (!m->recv || !m->inbox || !m->sent_to) {
    free(m->recv);
    free(m->inbox);
    free(m->sent_to);
    free(m);
    return NULL;
  }
  for (int i = 0; i < m->nrecv; i++) mailbox_post(m, i);
  return m;
}

/* Copies the message receive i got, then posts it again. */
static void mailbox_take(dem_parallel_mailbox_t *m, int i, const MPI_Status *st, void *buf, int *from)
{
  memcpy(buf, m->inbox + (size_t)i * m->bytes, m->bytes);
  if (from) *from = st->MPI_SOURCE;
  m->received++;
  mailbox_post(m, i);
}

int dem_parallel_mailbox_test(dem_parallel_mailbox_t *m, void *buf, int *from)
{
  /* round robin, so that one busy sender cannot hide the others */
  for (int k = 0; k < m->nrecv; k++) {
    int i = (m->next + k) % m->nrecv, done = 0;
    MPI_Status st;
    MPI_Test(&m->recv[i], &done, &st);
    if (done) {
      m->next = (i + 1) % m->nrecv;
      mailbox_take(m, i, &st, buf, from);
      return 1;
    }
  }
  return 0;
}

void dem_parallel_mailbox_wait(dem_parallel_mailbox_t *m, void *buf, int *from)
{
  MPI_Status st;
  int i = 0;
  MPI_Waitany(m->nrecv, m->recv, &i, &st);
  mailbox_take(m, i, &st, buf, from);
}

/* A slot whose send completed (or a new one), or NULL when out of memory. */
static mail_slot_t *mailbox_free_slot(dem_parallel_mailbox_t *m)
{
  for (int i = 0; i < m->nslots; i++) {
    int done = 0;
    if (m->slots[i].req != MPI_REQUEST_NULL) MPI_Test(&m->slots[i].req, &done, MPI_STATUS_IGNORE);
    if (m->slots[i].req == MPI_REQUEST_NULL) return &m->slots[i];
  }
  mail_slot_t *s = realloc(m->slots, (size_t)(m->nslots + 1) * sizeof *s);
  if (!s) return NULL;
  m->slots = s;
  s[m->nslots].req = MPI_REQUEST_NULL;
  s[m->nslots].buf = malloc(m->bytes);
  if (!s[m->nslots].buf) return NULL;
  return &s[m->nslots++];
}

int dem_parallel_mailbox_send(dem_parallel_mailbox_t *m, const void *buf, int to)
{
  mail_slot_t *s = mailbox_free_slot(m);
  if (!s) return -1;
  memcpy(s->buf, buf, m->bytes);
  MPI_Isend(s->buf, (int)m->bytes, MPI_BYTE, to, m->tag, comm(), &s->req);
  m->sent_to[to]++;
  return 0;
}

void dem_parallel_mailbox_close(dem_parallel_mailbox_t *m, void (*deliver)(void *ctx, const void *msg, int from),
                                void *ctx)
{
  int n = dem_parallel_size(), me = dem_parallel_rank();
  long *expect = malloc((size_t)n * sizeof *expect);
  unsigned char *msg = malloc(m->bytes);
  if (expect && msg) {
    memcpy(expect, m->sent_to, (size_t)n * sizeof *expect);
    MPI_Allreduce(MPI_IN_PLACE, expect, n, MPI_LONG, MPI_SUM, comm());
    for (int from; m->received < expect[me];) {
      dem_parallel_mailbox_wait(m, msg, &from);
      if (deliver) deliver(ctx, msg, from);
    }
  }
  free(expect);
  free(msg);
  for (int i = 0; i < m->nslots; i++) MPI_Wait(&m->slots[i].req, MPI_STATUS_IGNORE);
}

void dem_parallel_mailbox_destroy(dem_parallel_mailbox_t **m)
{
  if (!*m) return;
  for (int i = 0; i < (*m)->nrecv; i++) {
    MPI_Cancel(&(*m)->recv[i]);
    MPI_Wait(&(*m)->recv[i], MPI_STATUS_IGNORE);
  }
  free((*m)->recv);
  /* sends nobody will receive (a run that stopped on an error) are left to MPI */
  for (int i = 0; i < (*m)->nslots; i++) {
    if ((*m)->slots[i].req != MPI_REQUEST_NULL) MPI_Request_free(&(*m)->slots[i].req);
    else free((*m)->slots[i].buf);
  }
  free((*m)->slots);
  free((*m)->inbox);
  free((*m)->sent_to);
  free(*m);
  *m = NULL;
}
