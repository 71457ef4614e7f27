/* Shared definitions of the DEM kernels. The files of this folder are concatenated, in the
 * order listed in CMakeLists.txt, into one OpenCL C 1.2 program. Every kernel runs one
 * work-item per owned particle i (global size rounded up to the work-group size, so each kernel
 * checks i < n); ghosts [n, n + n_ghost) are read only. Double precision throughout and no FMA
 * contraction, so that the results match the plain-C reference (solver/dem/physics_ref.c), which
 * performs the same operations in the same order.
 *
 * DEM_MAX_NEIGHBORS (the most slots a particle may need, kept in private arrays) is given at
 * build time with -D; the store's slot stride (`slots`, at most that) is a kernel argument. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF

#ifndef DEM_MAX_NEIGHBORS
#error "DEM_MAX_NEIGHBORS must be defined at build time (-D)"
#endif
#ifndef DEM_MAX_LOCAL
#error "DEM_MAX_LOCAL (the largest work-group size launched) must be defined at build time (-D)"
#endif

#define DEM_WALLS 6 /* the planes of the box (solver/dem/particles.h: DEM_WALL_COUNT), slots -1 .. -6 */

/* Layout of the parameter buffer (__constant double prm[]); mirrored by solver/device/device.c. */
#define DEM_P_DT 0      /* s */
#define DEM_P_GRAVITY 1 /* m/s^2, 3 values */
#define DEM_P_LO 4      /* m, box lower corner, 3 values */
#define DEM_P_HI 7      /* m, box upper corner, 3 values */
#define DEM_P_SKIN 10   /* m */
#define DEM_P_KN 11     /* Pa, 4/3 E*: normal stiffness k = KN sqrt(R*) */
#define DEM_P_KT 12     /* Pa, 8 G*: tangential stiffness k_t = KT sqrt(R*) sqrt(delta) */
#define DEM_P_DAMPN 13  /* -, normal damping alpha */
#define DEM_P_GT 14     /* -, damp_t sqrt(6 G* / E*): gamma_t = GT sqrt(m* k) delta^{1/4} */
#define DEM_P_MU 15     /* - */
#define DEM_P_MASSF 16  /* kg/m^3, density * 4/3 pi */

/* Layout of one set of step counters (uint[DEM_COUNTERS]); mirrored by solver/device/device.c. There
 * are two sets, used on alternate steps: kick-drift of step s records the displacement in set
 * s % 2 and clears set (s + 1) % 2, which the force kernels of step s then fill, and which the
 * host reads with the displacement of step s + 1. No fill command, one read per step. */
#define DEM_COUNTERS 4
#define DEM_C_DISP 0     /* float bits of max (|v| dt)^2 (m^2) over the last kick-drift (atomic_max) */
#define DEM_C_CONTACTS 1 /* particle slots in contact, summed over force evaluations */
#define DEM_C_WALL_CONTACTS 2 /* wall slots in contact, likewise */

/* Layout of the search status buffer (int[4]); mirrored by solver/device/device.c. */
#define DEM_S_OVERFLOW 0 /* set to 1 by the first particle with too many partners */
#define DEM_S_GID 1      /* that particle's global id */
#define DEM_S_COUNT 2    /* and its number of partners */
#define DEM_S_PAIRS 3    /* slots written */
#define DEM_S_WALLS 4    /* of which wall slots */
#define DEM_S_UNFIT 5    /* largest partner count above `slots` (atomic_max; 0 when all fit) */
#define DEM_S_WALL_PARTICLES 6 /* entries of the wall list (boundaries.cl: dem_wall_list) */

inline double dem_mass(__constant const double *prm, double r)
{
  return prm[DEM_P_MASSF] * r * r * r;
}

/* 1 when particle i has wall slots. Walls have the gids -1 - w < 0 and the slots are sorted by
 * gid, so a particle's wall slots come first: its first slot says. */
inline int dem_has_walls(int i, int slots, __global const int *nbr_count, __global const int *nbr_index)
{
  return nbr_count[i] > 0 && nbr_index[i * slots] < 0;
}

/* distance (m) from x to the plane of wall w, positive inside the box */
inline double dem_wall_distance(__constant const double *prm, double x, int w)
{
  int a = w / 2;
  return (w & 1) ? prm[DEM_P_HI + a] - x : x - prm[DEM_P_LO + a];
}

/* a and b summed over the work-group, in work-item 0 (0 elsewhere): each work-item leaves its
 * values in part[] and the first adds them up. A local atomic per work-item, as before, cost
 * PoCL's CPU work-group loop a locked add per particle: 3 % of the pair pass (BENCHMARKS-history.md "The
 * pair pass without its locked adds"). Every work-item of the group must call it (barrier).
 * part: 2 * DEM_MAX_LOCAL local uints (DEM_MAX_LOCAL, the largest work-group size the host
 * launches, is given at build time with -D). */
inline uint2 dem_group_sum2(__local uint *part, uint a, uint b)
{
  const uint l = (uint)get_local_id(0), nl = (uint)get_local_size(0);
  part[l] = a;
  part[DEM_MAX_LOCAL + l] = b;
  barrier(CLK_LOCAL_MEM_FENCE);
  uint2 s = (uint2)(0, 0);
  if (l == 0) {
    uint16 va = (uint16)(0), vb = (uint16)(0);
    uint q = 0;
    for (; q + 16 <= nl; q += 16) { /* sixteen at a time: the loop is one work-item's */
      va += vload16(0, part + q);
      vb += vload16(0, part + DEM_MAX_LOCAL + q);
    }
    uint8 a8 = va.lo + va.hi, b8 = vb.lo + vb.hi;
    uint4 a4 = a8.lo + a8.hi, b4 = b8.lo + b8.hi;
    s.x = a4.x + a4.y + a4.z + a4.w;
    s.y = b4.x + b4.y + b4.z + b4.w;
    for (; q < nl; ++q) {
      s.x += part[q];
      s.y += part[DEM_MAX_LOCAL + q];
    }
  }
  return s;
}

/* the largest of a over the work-group, in work-item 0 (0 elsewhere); as dem_group_sum2 (every
 * work-item of the group calls it; part: DEM_MAX_LOCAL local uints at least) */
inline uint dem_group_max(__local uint *part, uint a)
{
  const uint l = (uint)get_local_id(0), nl = (uint)get_local_size(0);
  part[l] = a;
  barrier(CLK_LOCAL_MEM_FENCE);
  uint m = 0;
  if (l == 0) {
    uint16 v = (uint16)(0);
    uint q = 0;
    for (; q + 16 <= nl; q += 16) v = max(v, vload16(0, part + q));
    uint8 v8 = max(v.lo, v.hi);
    uint4 v4 = max(v8.lo, v8.hi);
    m = max(max(v4.x, v4.y), max(v4.z, v4.w));
    for (; q < nl; ++q) m = max(m, part[q]);
  }
  return m;
}

/* adds the particle and wall contacts of the work-group to counters[] with one global atomic
 * each per group (a global atomic per work-item would serialise a CPU device); every work-item
 * of the group must call it. part: as dem_group_sum2's. */
inline void dem_group_count(__local uint *part, uint pair_contacts, uint wall_contacts,
                            volatile __global uint *counters)
{
  uint2 s = dem_group_sum2(part, pair_contacts, wall_contacts);
  if (s.x) atomic_add(&counters[DEM_C_CONTACTS], s.x);
  if (s.y) atomic_add(&counters[DEM_C_WALL_CONTACTS], s.y);
}
