/* The neighbour structure (see adjacency.h). */
#include "domain/adjacency.h"

#include <stdlib.h>

#include "base/clock.h"
#include "domain/ghosts.h"
#include "scenario/state.h"

/* a particle's owner, for the partners found by gid */
typedef struct owner { dem_gid_t gid; int32_t rank; } owner_t;

static int by_gid(const void *a, const void *b)
{
  dem_gid_t x = ((const owner_t *)a)->gid, y = ((const owner_t *)b)->gid;
  return x < y ? -1 : x > y;
}

/* The partners through their local indices (nbr_index: a row of this rank, or a ghost row, whose
 * source rank is src[row - n]), checked against the slots' gids: 0, or -1 when a slot names a
 * row that no longer holds its partner (slots restored from a checkpoint before any ghost
 * exists), and then the caller looks the partners up by gid. No sort, no search: a partition
 * of 250,000 particles a rank spent 0.1 s in the sort and the binary searches. */
static int by_index(dem_adjacency_t *adj, const dem_particles_t *p, int me, size_t n_ghost, const int *src,
                    size_t *cut)
{
  const size_t n = p->n, m = n + n_ghost, s = (size_t)p->slots;
  size_t a = 0;
  *cut = 0;
  for (size_t i = 0; i < n; i++) {
    adj->first[i] = a;
    for (int k = 0; k < p->nbr_count[i]; k++) {
      dem_gid_t gid = p->nbr_gid[i * s + (size_t)k];
      if (gid < 0) continue; /* a wall */
      int32_t j = p->nbr_index[i * s + (size_t)k];
      if (j < 0 || (size_t)j >= m || p->id[j] != gid) return -1;
      int rank = (size_t)j < n ? me : src[(size_t)j - n];
      adj->gid[a] = gid;
      adj->proc[a++] = rank;
      *cut += rank != me;
    }
  }
  adj->first[n] = a;
  return 0;
}

/* The same by gid: the owners sorted by gid, each partner found by binary search; a partner
 * found nowhere is left out. 0, or -1 when out of memory. */
static int by_owner(dem_adjacency_t *adj, const dem_particles_t *p, int me, size_t n_ghost, const int *src,
                    size_t *cut)
{
  const size_t n = p->n, m = n + n_ghost, s = (size_t)p->slots;
  owner_t *own = malloc((m ? m : 1) * sizeof *own);
  if (!own) return -1;
  for (size_t i = 0; i < n; i++) own[i] = (owner_t){p->id[i], me};
  for (size_t k = 0; k < n_ghost; k++) own[n + k] = (owner_t){p->id[n + k], src[k]};
  qsort(own, m, sizeof *own, by_gid);
  size_t a = 0;
  *cut = 0;
  for (size_t i = 0; i < n; i++) {
    adj->first[i] = a;
    for (int k = 0; k < p->nbr_count[i]; k++) {
      owner_t key = {p->nbr_gid[i * s + (size_t)k], 0};
      const owner_t *o = key.gid >= 0 ? bsearch(&key, own, m, sizeof *own, by_gid) : NULL;
      if (!o) continue;
      adj->gid[a] = o->gid;
      adj->proc[a++] = o->rank;
      *cut += o->rank != me;
    }
  }
  adj->first[n] = a;
  free(own);
  return 0;
}

int dem_adjacency_build(dem_adjacency_t *a, const dem_sim_t *sim, int rank, size_t n_ghost, size_t *cut)
{
  const dem_particles_t *p = sim->p;
  size_t n = p->n, total = 0;
  for (size_t i = 0; i < n; i++) total += (size_t)p->nbr_count[i];
  int *src = malloc((n_ghost ? n_ghost : 1) * sizeof *src);
  a->first = malloc((n + 1) * sizeof *a->first);
  a->gid = malloc((total ? total : 1) * sizeof *a->gid);
  a->proc = malloc((total ? total : 1) * sizeof *a->proc);
  if (!src || !a->first || !a->gid || !a->proc) {
    free(src);
    return -1;
  }
  if (n_ghost > 0) dem_ghosts_sources(sim->ghosts, src);
  *cut = 0;
  int rc = by_index(a, p, rank, n_ghost, src, cut) == 0 ? 0 : by_owner(a, p, rank, n_ghost, src, cut);
  free(src);
  if (rc) return -1;
  /* host work: every slot read, its partner's id and owner looked up, the structure written */
  dem_work_t w = {.kind = DEM_WORK_PACK, .bytes = (double)total * 24.0 + (double)n * 8.0};
  dem_clock_charge(&w);
  /* the two slot arrays are new memory at every call: allocations this large come from fresh
   * mappings (glibc maps anything above its mmap threshold, 128 KiB rising to the largest block
   * freed, afresh), so their pages fault in as they are written. Counted natively (getrusage's
   * minor faults around the fill, 2 ranks x 250,000 particles in contact, 1,485,000 slots, 11.9 MB
   * of slot arrays): 2,402-3,196 faults a call (9.8-13.1 MB) in a fill of 32-56 ms, on a guest
   * that maps a page in 10.2 us (0.40 GB/s): 25-33 ms of it. adj_first (8 B a particle) comes
   * from the heap after the first call; with every particle apart there are no slots. */
  dem_work_t fresh = {.kind = DEM_WORK_FIRST_TOUCH,
                      .bytes = (double)total * (double)(sizeof *a->gid + sizeof *a->proc)};
  if (total > 0) dem_clock_charge(&fresh);
  return 0;
}

void dem_adjacency_free(dem_adjacency_t *a)
{
  free(a->first);
  free(a->gid);
  free(a->proc);
  a->first = NULL;
  a->gid = NULL;
  a->proc = NULL;
}
