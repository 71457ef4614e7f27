/* The N-queens search: bitmask backtracking (a placement is legal where no column or diagonal
 * mask has its bit set). Expansion creates one child task per legal square of the next row;
 * nq_task_solve does the same recursively without creating tasks. */
#include "search.h"

#include <stdlib.h>
#include <string.h>

int nq_deque_init(nq_deque_t *q, size_t cap)
{
  q->items = malloc(cap * sizeof *q->items);
  q->head = q->tail = 0;
  q->cap = q->items ? cap : 0;
  return q->items ? 0 : -1;
}

void nq_deque_destroy(nq_deque_t *q)
{
  free(q->items);
  q->items = NULL;
  q->head = q->tail = q->cap = 0;
}

int nq_deque_push(nq_deque_t *q, nq_task_t t)
{
  if (q->tail == q->cap) {
    if (q->head > 0) { /* slide the live tasks to the front before growing */
      memmove(q->items, q->items + q->head, nq_deque_size(q) * sizeof *q->items);
      q->tail -= q->head;
      q->head = 0;
    }
    if (q->tail == q->cap) {
      size_t cap = q->cap ? 2 * q->cap : 64;
      nq_task_t *items = realloc(q->items, cap * sizeof *items);
      if (!items)
        return -1;
      q->items = items;
      q->cap = cap;
    }
  }
  q->items[q->tail++] = t;
  return 0;
}

int nq_deque_pop_newest(nq_deque_t *q, nq_task_t *t)
{
  if (q->tail == q->head)
    return 0;
  *t = q->items[--q->tail];
  if (q->tail == q->head)
    q->head = q->tail = 0;
  return 1;
}

int nq_deque_pop_oldest(nq_deque_t *q, nq_task_t *t)
{
  if (q->tail == q->head)
    return 0;
  *t = q->items[q->head++];
  if (q->tail == q->head)
    q->head = q->tail = 0;
  return 1;
}

int nq_task_expand(int n, nq_task_t t, nq_deque_t *q)
{
  uint32_t all = (n >= 32) ? 0xffffffffu : ((1u << n) - 1u);
  uint32_t free_sq = all & ~(t.cols | t.diag1 | t.diag2);
  int count = 0;
  while (free_sq) {
    uint32_t bit = free_sq & (0u - free_sq);
    free_sq ^= bit;
    nq_task_t c = {t.cols | bit, ((t.diag1 | bit) << 1) & all, (t.diag2 | bit) >> 1, t.depth + 1};
    if (nq_deque_push(q, c) != 0)
      return -1;
    count++;
  }
  return count;
}

static uint64_t solve_rec(uint32_t all, uint32_t cols, uint32_t d1, uint32_t d2, uint64_t *nodes)
{
  if (cols == all)
    return 1;
  uint64_t found = 0;
  uint32_t free_sq = all & ~(cols | d1 | d2);
  while (free_sq) {
    uint32_t bit = free_sq & (0u - free_sq);
    free_sq ^= bit;
    (*nodes)++;
    found += solve_rec(all, cols | bit, ((d1 | bit) << 1) & all, (d2 | bit) >> 1, nodes);
  }
  return found;
}

uint64_t nq_task_solve(int n, nq_task_t t, uint64_t *nodes)
{
  uint32_t all = (n >= 32) ? 0xffffffffu : ((1u << n) - 1u);
  return solve_rec(all, t.cols, t.diag1, t.diag2, nodes);
}

uint64_t nq_known_solutions(int n)
{
  static const uint64_t known[] = {0, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200,
                                   73712, 365596, 2279184, 14772512};
  return (n >= 1 && n <= 16) ? known[n] : 0;
}
