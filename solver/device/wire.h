/* The remote device's protocol (remote.h): the commands a client sends and the answers its
 * device server (server.h) returns, one message each; the rows they carry follow in a second
 * message (dem_particles_pack_rows). Shared by the two ends only. */
#ifndef DEMSIM_DEVICE_WIRE_H
#define DEMSIM_DEVICE_WIRE_H

#include <stdint.h>
#include <stdlib.h>

#include "device/backend.h"

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

/* a message buffer of at least `bytes` (client and server alike); 0 or -1 */
static inline int dem_wire_grow(char **buf, size_t *cap, size_t bytes)
{
  if (bytes <= *cap) return 0;
  char *b = realloc(*buf, bytes);
  if (!b) return -1;
  *buf = b;
  *cap = bytes;
  return 0;
}

/* Commands that return nothing the host needs are not answered: the server keeps their failure
 * and returns it with the next answer (a GPU runtime reports an asynchronous error the same way). */
static inline int dem_wire_answered(int op) { return op != OP_PUSH && op != OP_FORCES && op != OP_BOUNDARIES && op != OP_STOP; }

#endif
