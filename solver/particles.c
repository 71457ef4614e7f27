/* The particle store (see particles.h). Every array is page aligned (posix_memalign) so that
 * the OpenCL layer can wrap it with CL_MEM_USE_HOST_PTR: PoCL then works in place, a GPU
 * driver keeps one device copy. Growing reallocates (pointers change), after which the engine
 * must be told (dem_engine_resize). */
#include "particles.h"

#include <stdlib.h>
#include <string.h>

#define DEM_PAGE 4096

/* element size and count per particle of every array, in the order of the struct */
typedef struct { size_t offset; size_t elem; size_t per; } dem_field_t;

static const dem_field_t dem_fields[] = {
  {offsetof(dem_particles_t, id), sizeof(dem_gid_t), 1},
  {offsetof(dem_particles_t, pos), sizeof(double), 3},
  {offsetof(dem_particles_t, vel), sizeof(double), 3},
  {offsetof(dem_particles_t, omega), sizeof(double), 3},
  {offsetof(dem_particles_t, force), sizeof(double), 3},
  {offsetof(dem_particles_t, torque), sizeof(double), 3},
  {offsetof(dem_particles_t, radius), sizeof(double), 1},
  {offsetof(dem_particles_t, nbr_count), sizeof(int32_t), 1},
  {offsetof(dem_particles_t, nbr_index), sizeof(int32_t), DEM_MAX_NEIGHBORS},
  {offsetof(dem_particles_t, nbr_gid), sizeof(dem_gid_t), DEM_MAX_NEIGHBORS},
  {offsetof(dem_particles_t, spring), sizeof(double), 3 * DEM_MAX_NEIGHBORS},
};
#define DEM_FIELD_COUNT (sizeof(dem_fields) / sizeof(dem_fields[0]))

static void **dem_field_ptr(dem_particles_t *p, size_t f)
{
  return (void **)((char *)p + dem_fields[f].offset);
}

static void *dem_aligned_zero(size_t bytes)
{
  void *ptr = NULL;
  /* never ask for 0 bytes: OpenCL rejects zero-sized buffers */
  if (bytes == 0) bytes = DEM_PAGE;
  if (posix_memalign(&ptr, DEM_PAGE, bytes) != 0) return NULL;
  memset(ptr, 0, bytes);
  return ptr;
}

dem_particles_t *dem_particles_create(size_t cap)
{
  dem_particles_t *p = calloc(1, sizeof(*p));
  if (!p) return NULL;
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
  for (size_t f = 0; f < DEM_FIELD_COUNT; ++f) free(*dem_field_ptr(p, f));
  free(p);
  *pp = NULL;
}

int dem_particles_reserve(dem_particles_t *p, size_t cap)
{
  if (cap <= p->cap) return 0;
  /* one array at a time, so that growing costs at most one extra array (memory is the limit
   * at 500,000 particles per process); on failure the arrays already grown are merely larger
   * than p->cap, and the store stays valid at its old capacity */
  for (size_t f = 0; f < DEM_FIELD_COUNT; ++f) {
    void *fresh = dem_aligned_zero(cap * dem_fields[f].elem * dem_fields[f].per);
    if (!fresh) return -1;
    void **old = dem_field_ptr(p, f);
    if (*old && p->cap) memcpy(fresh, *old, p->cap * dem_fields[f].elem * dem_fields[f].per);
    free(*old);
    *old = fresh;
  }
  p->cap = cap;
  return 0;
}

void dem_particles_copy_one(dem_particles_t *to, size_t dst, const dem_particles_t *from, size_t src)
{
  for (size_t f = 0; f < DEM_FIELD_COUNT; ++f) {
    size_t row = dem_fields[f].elem * dem_fields[f].per;
    char *d = *(char **)((char *)to + dem_fields[f].offset);
    const char *s = *(char *const *)((const char *)from + dem_fields[f].offset);
    memcpy(d + dst * row, s + src * row, row);
  }
}

int dem_particles_permute(dem_particles_t *p, const size_t *perm, size_t n)
{
  size_t widest = 0;
  for (size_t f = 0; f < DEM_FIELD_COUNT; ++f)
    if (dem_fields[f].elem * dem_fields[f].per > widest) widest = dem_fields[f].elem * dem_fields[f].per;
  char *tmp = malloc(n ? n * widest : 1);
  if (!tmp) return -1;
  for (size_t f = 0; f < DEM_FIELD_COUNT; ++f) {
    size_t row = dem_fields[f].elem * dem_fields[f].per;
    char *a = *dem_field_ptr(p, f);
    for (size_t k = 0; k < n; ++k) memcpy(tmp + k * row, a + perm[k] * row, row);
    memcpy(a, tmp, n * row);
  }
  free(tmp);
  return 0;
}

size_t dem_particles_bytes_per_particle(void)
{
  size_t bytes = 0;
  for (size_t f = 0; f < DEM_FIELD_COUNT; ++f) bytes += dem_fields[f].elem * dem_fields[f].per;
  return bytes;
}
