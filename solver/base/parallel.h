/* The only module that calls MPI (as CoMD's parallel.c): ranks, reductions, gathers and the
 * point-to-point exchange used by the ghosts. Everything else sees plain C types. Time stamps
 * come from dem_clock_now() (clock.h): simulated time under SMPI. */
#ifndef DEMSIM_BASE_PARALLEL_H
#define DEMSIM_BASE_PARALLEL_H

#include <stddef.h>

int dem_parallel_init(int *argc, char ***argv);
void dem_parallel_finalize(void);
void dem_parallel_abort(int code);
int dem_parallel_rank(void);
int dem_parallel_size(void);
void dem_parallel_barrier(void);
/* A barrier that sleeps 1 ms between polls instead of spinning on a core (for ranks that wait
 * while others measure). */
void dem_parallel_barrier_idle(void);
/* In-place reductions over all ranks. */
void dem_parallel_sum_double(double *v, int n);
void dem_parallel_max_double(double *v, int n);
void dem_parallel_min_double(double *v, int n);
void dem_parallel_sum_long(long *v, int n);
void dem_parallel_max_int(int *v, int n);
/* Gathers n doubles from every rank into out (size n * ranks) on root. */
void dem_parallel_gather_double(const double *in, int n, double *out, int root);
/* Gathers a variable number of bytes from every rank into out on root; counts (bytes per rank)
 * and out must be large enough on root (use dem_parallel_gather_counts first). */
void dem_parallel_gather_counts(long mine, long *counts, int root);
void dem_parallel_gatherv_bytes(const void *in, long n, void *out, const long *counts, int root);
void dem_parallel_bcast(void *buf, long bytes, int root);
/* Blocking point-to-point bytes (small control messages). */
void dem_parallel_send_bytes(const void *buf, long n, int dest);
void dem_parallel_recv_bytes(void *buf, long n, int src);
/* The name of the processor (the SimGrid host under SMPI). */
void dem_parallel_processor_name(char *buf, size_t len);
/* Collective: every rank learns each rank's host (dem_clock_host), which the transfers of
 * dem_parallel_xchg and dem_parallel_moved name to the clock (dem_clock_moved). */
void dem_parallel_learn_hosts(void);
/* Records `bytes` sent to (sending) or received from rank `peer` of the blocking completion in
 * progress (dem_clock_moved on its host; nothing before dem_parallel_learn_hosts). */
void dem_parallel_moved(int peer, double bytes, int sending);
/* Every rank contributes n doubles; out (n * ranks) receives them all, in rank order, on every rank. */
void dem_parallel_allgather_double(const double *in, int n, double *out);
/* Every rank sends one int to every rank: recv[r] = what rank r put in its send[me]. */
void dem_parallel_alltoall_int(const int *send, int *recv);

/* The lowest rank of this rank's node (the ranks that share memory with it). Collective. */
int dem_parallel_node_leader(void);
/* MPI ping-pong of `bytes` between ranks a and b, `reps` timed round trips (s) into rtt_s on a
 * (after two untimed ones). Every other rank returns at once. 0, or -1 when out of memory. */
int dem_parallel_pingpong(int a, int b, long bytes, int reps, double *rtt_s);
/* Gathers every rank's string, in rank order, to root: there, a malloc'd buffer of the strings
 * one after the other, each with its terminating NUL; NULL on the other ranks. Collective. */
char *dem_parallel_gather_text(const char *mine, int root);

/* Device servers (device.server): the world ranks from app_ranks on serve the kernels of the
 * others (solver/device/server.c). Splits MPI_COMM_WORLD: every call of this module then works on the
 * application's ranks only. Returns 1 on a server rank, 0 on an application rank. Collective
 * over the world. */
int dem_parallel_split_servers(int app_ranks);
int dem_parallel_world_rank(void);
/* The device-server protocol: blocking messages over the whole world, with their own tag.
 * recv: src < 0 takes any source (written to *from); returns the bytes received (at most max). */
void dem_parallel_world_send(const void *buf, long n, int dest);
long dem_parallel_world_recv(void *buf, long max, int src, int *from);
#ifdef MPI_VERSION
/* The application's communicator, for the one other MPI user (Zoltan, partition.c). */
MPI_Comm dem_parallel_comm(void);
/* Collective: the ranks of the application's communicator with the same color, in rank order
 * (a site's ranks, for Zoltan within the site); dem_parallel_comm_free releases it. */
MPI_Comm dem_parallel_comm_split(int color);
void dem_parallel_comm_free(MPI_Comm *c);
#endif

/* Tests only: 1 makes every call above work on this rank alone (MPI_COMM_SELF), so that a
 * parallel test can run the 1-rank reference of a simulation inside the same program; 0 goes
 * back to all ranks. */
void dem_parallel_use_self(int on);

/* A non-blocking point-to-point exchange (the ghosts' per-step traffic): post receives and
 * sends, then wait for all of them. The request table is allocated once (at ghost
 * registration) and reused every step. Buffers must stay untouched until the wait. */
typedef struct dem_parallel_xchg dem_parallel_xchg_t;
/* Room for `max_requests` posted receives and sends together. NULL when out of memory. */
dem_parallel_xchg_t *dem_parallel_xchg_create(int max_requests);
void dem_parallel_xchg_destroy(dem_parallel_xchg_t **x);
/* 0, or -1 when the table is full or the message exceeds INT_MAX bytes. */
int dem_parallel_xchg_recv(dem_parallel_xchg_t *x, void *buf, size_t bytes, int from, int tag);
int dem_parallel_xchg_send(dem_parallel_xchg_t *x, const void *buf, size_t bytes, int to, int tag);
/* Blocks until every posted request completed, then empties the table. */
void dem_parallel_xchg_wait(dem_parallel_xchg_t *x);

/* Non-blocking control messages of a fixed size (the speed reports and balancing decisions of
 * monitor.c): standing receives on one tag, tested without waiting, and sends that complete in
 * the background. Standing MPI_Irecv + MPI_Test rather than MPI_Iprobe: SMPI charges each
 * unsuccessful MPI_Iprobe a growing simulated delay. */
typedef struct dem_parallel_mailbox dem_parallel_mailbox_t;
/* Posts the standing receives of `bytes` on `tag`: one from rank `from`, or with from = -1 one
 * from each rank. NULL when out of memory. */
dem_parallel_mailbox_t *dem_parallel_mailbox_create(size_t bytes, int tag, int from);
/* 1 with a message in buf (and its sender in *from, if not NULL) when one arrived, else 0. */
int dem_parallel_mailbox_test(dem_parallel_mailbox_t *m, void *buf, int *from);
/* Blocks until a message arrives. */
void dem_parallel_mailbox_wait(dem_parallel_mailbox_t *m, void *buf, int *from);
/* Sends a copy of buf to rank `to` without waiting. 0, or -1 when out of memory. */
int dem_parallel_mailbox_send(dem_parallel_mailbox_t *m, const void *buf, int to);
/* Collective: receives every message still on its way to this rank, passing each to deliver
 * (may be NULL), and waits for this rank's sends, so that nothing is left in flight. */
void dem_parallel_mailbox_close(dem_parallel_mailbox_t *m, void (*deliver)(void *ctx, const void *msg, int from),
                                void *ctx);
void dem_parallel_mailbox_destroy(dem_parallel_mailbox_t **m);

#endif
