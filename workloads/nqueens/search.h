/* The N-queens search, free of MPI: tasks, the per-rank double-ended queue, expansion and the
 * sequential solver. A task is a partial placement of `depth` queens, one per row, held as three
 * bitmasks (occupied columns and the two diagonals as seen from the next row). */
#ifndef DEMSIM_NQUEENS_SEARCH_H
#define DEMSIM_NQUEENS_SEARCH_H

#include <stdint.h>
#include <stddef.h>

typedef struct {
  uint32_t cols;  /* columns taken */
  uint32_t diag1; /* squares of the next row attacked along one diagonal */
  uint32_t diag2; /* ... along the other */
  uint32_t depth; /* queens placed (rows filled) */
} nq_task_t;

/* Owner pushes and pops at the newest end (depth first); thieves take the oldest (coarsest). */
typedef struct {
  nq_task_t *items;
  size_t head; /* index of the oldest task */
  size_t tail; /* one past the newest */
  size_t cap;
} nq_deque_t;

int nq_deque_init(nq_deque_t *q, size_t cap);
void nq_deque_destroy(nq_deque_t *q);
int nq_deque_push(nq_deque_t *q, nq_task_t t); /* 0, or -1 when out of memory */
int nq_deque_pop_newest(nq_deque_t *q, nq_task_t *t);
int nq_deque_pop_oldest(nq_deque_t *q, nq_task_t *t);
static inline size_t nq_deque_size(const nq_deque_t *q) { return q->tail - q->head; }

static inline nq_task_t nq_task_root(void) { return (nq_task_t){0, 0, 0, 0}; }

/* Pushes every child of t (one queen more) onto q, the last column pushed first popped.
 * Returns the number of children, or -1 when out of memory. */
int nq_task_expand(int n, nq_task_t t, nq_deque_t *q);

/* Solutions below t, searched sequentially; *nodes counts the placements tried. */
uint64_t nq_task_solve(int n, nq_task_t t, uint64_t *nodes);

/* Known solution counts for n = 1..16 (OEIS A000170); 0 outside that range. */
uint64_t nq_known_solutions(int n);

#endif
