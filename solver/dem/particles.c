/* The particle store (see particles.h). Every array is an anonymous private mapping: page
 * aligned, so that the OpenCL layer can wrap it with CL_MEM_USE_HOST_PTR (PoCL then works in
 * place, a GPU driver keeps one device copy), and zero pages that become resident only when
 * written. Growing remaps (pointers may change), after which the engine must be told
 * (dem_engine_resize). */
#define _GNU_SOURCE /* mremap */
#include "dem/particles.h"

#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define DEM_PAGE 4096

/* element size and count per particle of every array, in the order of the struct; `slotted`
 * arrays hold `per` values per slot, p->slots slots per particle */
typedef struct { size_t offset; size_t elem; size_t per; int slotted; } dem_field_t;

static const dem_field_t dem_fields[] = {
  {offsetof(dem_particles_t, id), sizeof(dem_gid_t), 1, 0},
  {offsetof(dem_particles_t, pos), sizeof(double), 3, 0},
  {offsetof(dem_particles_t, vel), sizeof(double), 3, 0},
  {offsetof(dem_particles_t, omega), sizeof(double), 3, 0},
  {offsetof(dem_particles_t, force), sizeof(double), 3, 0},
  {offsetof(dem_particles_t, torque), sizeof(double), 3, 0},
  {offsetof(dem_particles_t, radius), sizeof(double), 1, 0},
  {offsetof(dem_particles_t, nbr_count), sizeof(int32_t), 1, 0},
  {offsetof(dem_particles_t, nbr_index), sizeof(int32_t), 1, 1},
  {offsetof(dem_particles_t, nbr_gid), sizeof(dem_gid_t), 1, 1},
  {offsetof(dem_particles_t, spring), sizeof(double), 3, 1},
};
#define DEM_FIELD_COUNT (sizeof(dem_fields) / sizeof(dem_fields[0]))
_Static_assert(DEM_FIELD_COUNT == DEM_STORE_ARRAYS, "particles.h: DEM_STORE_ARRAYS counts the store's arrays");

static void **dem_field_ptr(dem_particles_t *p, size_t f)
{
  return (void **)((char *)p + dem_fields[f].offset);
}

/* bytes per particle of field f with `slots` slots */
static size_t dem_row(size_t f, int slots)
{
  return dem_fields[f].elem * dem_fields[f].per * (dem_fields[f].slotted ? (size_t)slots : 1);
}

/* Field f's array starts DEM_STAGGER * f bytes into its mapping: streams whose addresses agree
 * modulo 4 KiB conflict in a core's load/store queues and caches, and a kernel streaming six or
 * more page-aligned arrays drew about half the bandwidth of staggered ones on one core here
 * (BENCHMARKS.md). 384 B = 3 x 128 B keeps OpenCL's base address alignment (PoCL: 128 B) and
 * gives the store's 11 arrays distinct offsets within a page (0 .. 3840 B). */
#define DEM_STAGGER 384
_Static_assert(DEM_STAGGER % 128 == 0, "the arrays stay aligned for CL_MEM_USE_HOST_PTR");

static size_t dem_stagger(size_t f) { return DEM_STAGGER * f % DEM_PAGE; }

/* bytes of the mapping that holds `bytes` of field f (never 0: OpenCL rejects zero-sized buffers) */
static size_t dem_map_len(size_t bytes, size_t f)
{
  bytes += dem_stagger(f);
  return bytes ? (bytes + DEM_PAGE - 1) / DEM_PAGE * DEM_PAGE : DEM_PAGE;
}

static void *dem_map(size_t bytes, size_t f)
{
  char *ptr = mmap(NULL, dem_map_len(bytes, f), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return ptr == MAP_FAILED ? NULL : ptr + dem_stagger(f);
}

/* grows field f's mapping from old_bytes to bytes (contents kept, the rest zero); NULL on
 * failure, the old mapping then untouched */
static void *dem_remap(void *old, size_t old_bytes, size_t bytes, size_t f)
{
  if (!old) return dem_map(bytes, f);
  if (dem_map_len(bytes, f) == dem_map_len(old_bytes, f)) return old;
  char *ptr = mremap((char *)old - dem_stagger(f), dem_map_len(old_bytes, f), dem_map_len(bytes, f), MREMAP_MAYMOVE);
  return ptr == MAP_FAILED ? NULL : ptr + dem_stagger(f);
}

dem_particles_t *dem_particles_create(size_t cap)
{
  dem_particles_t *p = calloc(1, sizeof(*p));
  if (!p) return NULL;
  p->slots = DEM_INITIAL_SLOTS < DEM_MAX_NEIGHBORS ? DEM_INITIAL_SLOTS : DEM_MAX_NEIGHBORS;
  if (dem_particles_reserve(p, cap ? cap : 1) != 0) {
    dem_particles_destroy(&p);
    return NULL;
  }
  return p;
}

void dem_particles_destroy(dem_particles_t **pp)
{
  if (!pp || !*pp) return;
  dem_particles_t *p = *pp;
  /* p->cap is that of every array; an array grown beyond it by a failed reserve is unmapped
   * with its smaller length, which leaves a few pages mapped: that is only the error path */
  for (size_t f = 0; f < DEM_FIELD_COUNT; ++f)
    if (*dem_field_ptr(p, f))
      munmap((char *)*dem_field_ptr(p, f) - dem_stagger(f), dem_map_len(p->cap * dem_row(f, p->slots), f));
  for (size_t f = 0; f < DEM_FIELD_COUNT; ++f) free(p->page_map[f]);
  free(p);
  *pp = NULL;
}

int dem_particles_reserve(dem_particles_t *p, size_t cap)
{
  if (cap <= p->cap) return 0;
  /* one array at a time; on failure the arrays already grown are merely larger than p->cap,
   * and the store stays valid at its old capacity */
  for (size_t f = 0; f < DEM_FIELD_COUNT; ++f) {
    void **a = dem_field_ptr(p, f);
    void *fresh = dem_remap(*a, p->cap * dem_row(f, p->slots), cap * dem_row(f, p->slots), f);
    if (!fresh) return -1;
    *a = fresh;
  }
  p->cap = cap;
  return 0;
}

int dem_particles_widen_slots(dem_particles_t *p, int slots)
{
  if (slots > DEM_MAX_NEIGHBORS) return -1;
  if (slots <= p->slots) return 0;
  const int old = p->slots;
  /* grow every slotted array first, then move rows from the last particle down: a row's new
   * place starts at or after its old one, so no row is overwritten before it has moved */
  for (size_t f = 0; f < DEM_FIELD_COUNT; ++f) {
    if (!dem_fields[f].slotted) continue;
    void **a = dem_field_ptr(p, f);
    void *fresh = dem_remap(*a, p->cap * dem_row(f, old), p->cap * dem_row(f, slots), f);
    if (!fresh) return -1; /* arrays grown so far keep their old layout: still valid */
    *a = fresh;
  }
  for (size_t f = 0; f < DEM_FIELD_COUNT; ++f) {
    if (!dem_fields[f].slotted) continue;
    char *a = *dem_field_ptr(p, f);
    size_t from = dem_row(f, old), to = dem_row(f, slots);
    for (size_t i = p->n; i-- > 1;) memmove(a + i * to, a + i * from, from);
  }
  p->slots = slots;
  if (p->n > p->moved_rows) p->moved_rows = p->n; /* the rows' pages at the new stride are written */
  return 0;
}

void dem_particles_copy_one(dem_particles_t *to, size_t dst, const dem_particles_t *from, size_t src)
{
  for (size_t f = 0; f < DEM_FIELD_COUNT; ++f) {
    char *d = *(char **)((char *)to + dem_fields[f].offset);
    const char *s = *(char *const *)((const char *)from + dem_fields[f].offset);
    if (!dem_fields[f].slotted) {
      size_t row = dem_row(f, 1);
      memcpy(d + dst * row, s + src * row, row);
    } else {
      /* the used slots only: strides may differ, and unused slots are never read */
      size_t per = dem_fields[f].elem * dem_fields[f].per, used = (size_t)from->nbr_count[src];
      memcpy(d + dst * per * (size_t)to->slots, s + src * per * (size_t)from->slots, used * per);
    }
  }
}

void dem_particles_move_rows(dem_particles_t *p, size_t dst, size_t src, size_t count)
{
  if (count == 0 || dst == src) return;
  /* the per-particle arrays first: nbr_count then names each moved particle's used slots */
  for (size_t f = 0; f < DEM_FIELD_COUNT; ++f) {
    if (dem_fields[f].slotted) continue;
    char *a = *dem_field_ptr(p, f);
    size_t row = dem_row(f, 1);
    memmove(a + dst * row, a + src * row, count * row);
  }
  /* the slot arrays: the used slots only, particle by particle in the direction that keeps
   * overlapping ranges intact (a lattice apart uses none, and its slot pages may never have
   * been written: whole rows would fault them in) */
  for (size_t f = 0; f < DEM_FIELD_COUNT; ++f) {
    if (!dem_fields[f].slotted) continue;
    char *a = *dem_field_ptr(p, f);
    size_t per = dem_fields[f].elem * dem_fields[f].per, stride = per * (size_t)p->slots;
    for (size_t k = 0; k < count; ++k) {
      size_t j = dst < src ? k : count - 1 - k, used = per * (size_t)p->nbr_count[dst + j];
      if (!used) continue;
      memmove(a + (dst + j) * stride, a + (src + j) * stride, used);
    }
  }
}

int dem_particles_permute(dem_particles_t *p, const size_t *perm, size_t n)
{
  size_t widest = 0;
  for (size_t f = 0; f < DEM_FIELD_COUNT; ++f)
    if (dem_row(f, p->slots) > widest) widest = dem_row(f, p->slots);
  const size_t word = 8 * sizeof(uint64_t);
  uint64_t *done = malloc((n / word + 1) * sizeof *done);
  char *tmp = malloc(widest ? widest : 1);
  if (!done || !tmp) {
    free(done);
    free(tmp);
    return -1;
  }
  /* cycle by cycle: the row at the cycle's start is saved, each place then takes its row from
   * perm[k], and the last place takes the saved row */
  for (size_t f = 0; f < DEM_FIELD_COUNT; ++f) {
    size_t row = dem_row(f, p->slots);
    char *a = *dem_field_ptr(p, f);
    memset(done, 0, (n / word + 1) * sizeof *done);
    for (size_t s = 0; s < n; ++s) {
      if (done[s / word] >> (s % word) & 1) continue;
      if (perm[s] == s) continue;
      memcpy(tmp, a + s * row, row);
      size_t k = s;
      for (;;) {
        done[k / word] |= (uint64_t)1 << (k % word);
        size_t from = perm[k];
        if (from == s) {
          memcpy(a + k * row, tmp, row);
          break;
        }
        memcpy(a + k * row, a + from * row, row);
        k = from;
      }
    }
  }
  free(done);
  free(tmp);
  return 0;
}

size_t dem_particles_bytes_per_particle(int slots)
{
  size_t bytes = 0;
  for (size_t f = 0; f < DEM_FIELD_COUNT; ++f) bytes += dem_row(f, slots);
  return bytes;
}

/* marks the pages of bytes [from, to) of slot array f written; returns how many were not */
static size_t dem_mark_pages(dem_particles_t *p, size_t f, size_t from, size_t to)
{
  size_t fresh = 0;
  for (size_t pg = from / DEM_PAGE; pg < (to + DEM_PAGE - 1) / DEM_PAGE; ++pg)
    if (!p->page_map[f][pg]) {
      p->page_map[f][pg] = 1;
      fresh++;
    }
  return fresh;
}

/* the pages of slot array f that the owned particles' used slots (and a widening's moved rows)
 * write; -1 when the map cannot grow */
static long dem_fresh_slot_pages(dem_particles_t *p, size_t f)
{
  const size_t row = dem_row(f, p->slots), slot = row / (size_t)p->slots;
  size_t need = (p->cap * row + DEM_PAGE - 1) / DEM_PAGE;
  if (need > p->page_map_len[f]) {
    unsigned char *m = realloc(p->page_map[f], need);
    if (!m) return -1;
    memset(m + p->page_map_len[f], 0, need - p->page_map_len[f]);
    p->page_map[f] = m;
    p->page_map_len[f] = need;
  }
  size_t fresh = dem_mark_pages(p, f, 0, p->moved_rows * row);
  for (size_t i = 0; i < p->n; ++i)
    if (p->nbr_count[i] > 0) fresh += dem_mark_pages(p, f, i * row, i * row + (size_t)p->nbr_count[i] * slot);
  return (long)fresh;
}

size_t dem_particles_fresh_bytes(dem_particles_t *p, int slots_written)
{
  size_t fresh = 0;
  for (size_t f = 0; f < DEM_FIELD_COUNT; ++f) {
    if (dem_fields[f].slotted) {
      long pages = slots_written ? dem_fresh_slot_pages(p, f) : 0;
      if (pages < 0) return 0;
      fresh += (size_t)pages * DEM_PAGE;
      continue;
    }
    size_t bytes = (p->n + p->n_ghost) * dem_row(f, p->slots);
    if (bytes <= p->written[f]) continue;
    size_t pages_now = (bytes + DEM_PAGE - 1) / DEM_PAGE, pages_then = (p->written[f] + DEM_PAGE - 1) / DEM_PAGE;
    fresh += (pages_now - pages_then) * DEM_PAGE;
    p->written[f] = bytes;
  }
  if (slots_written) p->moved_rows = 0;
  return fresh;
}

const dem_particle_array_t dem_particle_arrays[DEM_ARRAY_COUNT] = {
  {offsetof(dem_particles_t, id), sizeof(dem_gid_t), DEM_F_ID, "id", 0},
  {offsetof(dem_particles_t, pos), 3 * sizeof(double), DEM_F_POS, "pos", 0},
  {offsetof(dem_particles_t, vel), 3 * sizeof(double), DEM_F_VEL, "vel", 0},
  {offsetof(dem_particles_t, omega), 3 * sizeof(double), DEM_F_OMEGA, "omega", 0},
  {offsetof(dem_particles_t, force), 3 * sizeof(double), DEM_F_FORCE, "force", 0},
  {offsetof(dem_particles_t, torque), 3 * sizeof(double), DEM_F_TORQUE, "torque", 0},
  {offsetof(dem_particles_t, radius), sizeof(double), DEM_F_RADIUS, "radius", 0},
  {offsetof(dem_particles_t, nbr_count), sizeof(int32_t), DEM_F_SLOTS, "nbr_count", 0},
  {offsetof(dem_particles_t, nbr_index), sizeof(int32_t), DEM_F_SLOTS, "nbr_index", 1},
  {offsetof(dem_particles_t, nbr_gid), sizeof(dem_gid_t), DEM_F_SLOTS, "nbr_gid", 1},
  {offsetof(dem_particles_t, spring), 3 * sizeof(double), DEM_F_SLOTS, "spring", 1},
};

static size_t row_bytes(const dem_particles_t *p, int f)
{
  return dem_particle_arrays[f].bytes * (dem_particle_arrays[f].slotted ? (size_t)p->slots : 1);
}

static char *field_base(const dem_particles_t *p, int f)
{
  return *(char *const *)((const char *)p + dem_particle_arrays[f].offset);
}

size_t dem_particles_rows_bytes(const dem_particles_t *p, unsigned fields, size_t count)
{
  size_t b = 0;
  for (int f = 0; f < DEM_ARRAY_COUNT; f++)
    if (fields & dem_particle_arrays[f].flag) b += row_bytes(p, f) * count;
  return b;
}

void dem_particles_pack_rows(const dem_particles_t *p, unsigned fields, size_t first, size_t count, char *buf)
{
  for (int f = 0; f < DEM_ARRAY_COUNT; f++) {
    if (!(fields & dem_particle_arrays[f].flag)) continue;
    size_t rb = row_bytes(p, f);
    memcpy(buf, field_base(p, f) + first * rb, count * rb);
    buf += count * rb;
  }
}

void dem_particles_unpack_rows(dem_particles_t *p, unsigned fields, size_t first, size_t count, const char *buf)
{
  for (int f = 0; f < DEM_ARRAY_COUNT; f++) {
    if (!(fields & dem_particle_arrays[f].flag)) continue;
    size_t rb = row_bytes(p, f);
    memcpy(field_base(p, f) + first * rb, buf, count * rb);
    buf += count * rb;
  }
}
