/* External force: gravity, F += m g. */

inline void dem_external_add(__constant const double *prm, double r, double *f)
{
  double m = dem_mass(prm, r);
  for (int c = 0; c < 3; ++c) f[c] = f[c] + m * prm[DEM_P_GRAVITY + c];
}

__kernel void dem_external(int first, int n, __constant const double *prm, __global const double *radius,
                           __global double *force)
{
  int i = first + (int)get_global_id(0);
  if (i >= n) return;
  double f[3];
  for (int c = 0; c < 3; ++c) f[c] = force[3 * i + c];
  dem_external_add(prm, radius[i], f);
  for (int c = 0; c < 3; ++c) force[3 * i + c] = f[c];
}
