/* End to end through the real `demsim` program (path in argv[1]): a small gravity packing
 * with snapshots, then the outputs read back by real clients: summary.json with jansson,
 * particles.h5 with the HDF5 library and with h5py, the XDMF sidecar as text. Particles
 * start apart, so a top-layer particle is in free fall: its state has a closed form. */
#include <CUnit/Basic.h>
#include <hdf5.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plain_testing.h"

static const char *demsim;
static char dir[256];
static const long N = 1000, STEPS = 60, EVERY = 20;
static const double DT = 1e-8, G = 9.81;

#define run dem_plain_run

static int suite_init(void)
{
  char cfg[512], cmd[2048], out[8192];
  if (dem_plain_scenario(dir, sizeof dir, cfg, sizeof cfg, "output",
                         "name = \"output-test\";\nproblem = { particles = %ld; diameter_ratio = 0.99; };\n"
                         "time = { dt = %g; steps = %ld; };\n"
                         /* frames gathered in blocks of 777 particles: two blocks, the second partial */
                         "output = { snapshot_every = %ld; metrics_every = 10; gather_block = 777; };\n"
                         "platform = { file = \"%s/platforms/openstack.xml\"; hosts = [\"n1-cn6700-4\"]; };\n",
                         N, DT, STEPS, EVERY, dem_plain_source_dir()))
    return -1;
  snprintf(cmd, sizeof cmd, "%s run %s --out %s/out --quiet 2>&1", demsim, cfg, dir);
  int rc = run(cmd, out, sizeof out);
  if (rc != 0) fprintf(stderr, "demsim failed (%d): %s\n", rc, out);
  return rc;
}

static int suite_clean(void) { return dem_plain_rmdir(dir); }

static void test_summary_fields(void)
{
  char path[512];
  snprintf(path, sizeof path, "%s/out/summary.json", dir);
  json_error_t e;
  json_t *s = json_load_file(path, 0, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  const char *keys[] = {"particles", "steps", "ranks", "wall_s", "sim_time_s", "particle_steps_per_s",
                        "particles_start", "particles_end", "kinetic_energy_start_J", "kinetic_energy_end_J",
                        "policy", "repartitions", "lambda_max_percent", "lambda_final_percent", "weight_oscillation",
                        "lambda_after_repartition_percent", "per_rank"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) CU_ASSERT_PTR_NOT_NULL(json_object_get(s, keys[i]));
  CU_ASSERT_EQUAL(json_integer_value(json_object_get(s, "particles")), N);
  CU_ASSERT_EQUAL(json_integer_value(json_object_get(s, "steps")), STEPS);
  CU_ASSERT_EQUAL(json_integer_value(json_object_get(s, "particles_end")), N);
  CU_ASSERT(json_real_value(json_object_get(s, "sim_time_s")) > 0);
  CU_ASSERT(json_real_value(json_object_get(s, "particle_steps_per_s")) > 0);
  CU_ASSERT_EQUAL(json_array_size(json_object_get(s, "per_rank")), 1);
  json_decref(s);
}

static double read_dataset(hid_t file, const char *name, size_t index, size_t width, size_t comp, hsize_t *n_out)
{
  hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
  if (d < 0) return NAN;
  hid_t sp = H5Dget_space(d);
  hsize_t dims[2] = {0, 0};
  H5Sget_simple_extent_dims(sp, dims, NULL);
  double *buf = malloc(dims[0] * width * sizeof *buf);
  H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
  double v = buf[index * width + comp];
  if (n_out) *n_out = dims[0];
  free(buf);
  H5Sclose(sp);
  H5Dclose(d);
  return v;
}

static void test_snapshots_in_hdf5(void)
{
  char path[512];
  snprintf(path, sizeof path, "%s/out/particles.h5", dir);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  CU_ASSERT_FATAL(f >= 0);
  for (long s = EVERY; s <= STEPS; s += EVERY) {
    char g[64];
    snprintf(g, sizeof g, "/Step%06ld/Coordinates", s);
    hsize_t n = 0;
    double x = read_dataset(f, g, 0, 3, 0, &n);
    CU_ASSERT_EQUAL(n, (hsize_t)N);
    CU_ASSERT(isfinite(x));
  }
  /* the last particle is in the top layer, touching nobody: free fall from its site */
  size_t last = (size_t)N - 1;
  double z0 = read_dataset(f, "/Step000020/Coordinates", last, 3, 2, NULL);
  double z1 = read_dataset(f, "/Step000060/Coordinates", last, 3, 2, NULL);
  double v1 = read_dataset(f, "/Step000060/Velocities", last, 3, 2, NULL);
  double t0 = EVERY * DT, t1 = STEPS * DT;
  /* positions near 0.4 m carry rounding of ~1e-16 m per step: compare to 1e-13 m */
  CU_ASSERT_DOUBLE_EQUAL(z1 - z0, -0.5 * G * (t1 * t1 - t0 * t0), 1e-13);
  CU_ASSERT_DOUBLE_EQUAL(v1, -G * t1, 1e-9 * G * t1);
  /* ids are 0..N-1 in order */
  hid_t d = H5Dopen2(f, "/Step000060/ParticleIDs", H5P_DEFAULT);
  int *ids = malloc((size_t)N * sizeof *ids);
  H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, ids);
  int ok = 1;
  for (long i = 0; i < N; i++) ok &= ids[i] == i;
  CU_ASSERT(ok);
  free(ids);
  H5Dclose(d);
  H5Fclose(f);
}

/* a string attribute of obj, "" when absent */
static void read_string_attr(hid_t obj, const char *name, char *buf, size_t len)
{
  buf[0] = '\0';
  if (H5Aexists(obj, name) <= 0) return;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT), t = H5Aget_type(a), mem = H5Tcopy(H5T_C_S1);
  size_t n = H5Tget_size(t);
  if (n < len) {
    H5Tset_size(mem, n);
    if (H5Aread(a, mem, buf) < 0) buf[0] = '\0';
    buf[n] = '\0';
  }
  H5Tclose(mem);
  H5Tclose(t);
  H5Aclose(a);
}

/* every dataset carries its units; the root names the scenario, its configuration and the build */
static void test_hdf5_units_and_scenario(void)
{
  char path[512], v[8192];
  snprintf(path, sizeof path, "%s/out/particles.h5", dir);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  CU_ASSERT_FATAL(f >= 0);
  const char *units[][2] = {{"ParticleIDs", "1"}, {"Owner", "1"}, {"Contacts", "1"}, {"Radius", "m"},
                            {"Coordinates", "m"}, {"Velocities", "m/s"}, {"AngularVelocities", "rad/s"}};
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    char name[64];
    snprintf(name, sizeof name, "/Step000060/%s", units[i][0]);
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    CU_ASSERT_FATAL(d >= 0);
    read_string_attr(d, "units", v, sizeof v);
    CU_ASSERT_STRING_EQUAL(v, units[i][1]);
    H5Dclose(d);
  }
  read_string_attr(f, "scenario", v, sizeof v);
  CU_ASSERT_STRING_EQUAL(v, "output-test");
  read_string_attr(f, "scenario_file", v, sizeof v);
  CU_ASSERT_PTR_NOT_NULL(strstr(v, "s.cfg"));
  read_string_attr(f, "configuration", v, sizeof v);
  CU_ASSERT_PTR_NOT_NULL(strstr(v, "time.steps"));
  CU_ASSERT_PTR_NOT_NULL(strstr(v, "problem.particles"));
  read_string_attr(f, "demsim_version", v, sizeof v);
  CU_ASSERT(v[0] != '\0');
  read_string_attr(f, "build", v, sizeof v);
  CU_ASSERT(strcmp(v, "smpi") == 0 || strcmp(v, "native") == 0);
  H5Fclose(f);
}

static void test_h5py_reads_it(void)
{
  char cmd[1024], out[1024];
  snprintf(cmd, sizeof cmd,
           "/usr/bin/python3 -c \"import h5py; f = h5py.File('%s/out/particles.h5', 'r'); "
           "g = f['Step000060']; print(len(g['ParticleIDs']), g['Radius'][0], g['Velocities'][-1][2], "
           "sorted(k for k in f.keys()))\" 2>&1", dir);
  CU_ASSERT_EQUAL_FATAL(run(cmd, out, sizeof out), 0);
  long n = 0;
  double r = 0, vz = 0;
  CU_ASSERT_EQUAL(sscanf(out, "%ld %lf %lf", &n, &r, &vz), 3);
  CU_ASSERT_EQUAL(n, N);
  CU_ASSERT(r > 0 && r < 0.1);
  CU_ASSERT_DOUBLE_EQUAL(vz, -G * STEPS * DT, 1e-9 * G * STEPS * DT);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "'Step000020', 'Step000040', 'Step000060'"));
}

static void test_xdmf_sidecar(void)
{
  char path[512];
  snprintf(path, sizeof path, "%s/out/particles.xmf", dir);
  FILE *f = fopen(path, "r");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  static char text[1 << 16];
  size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = '\0';
  fclose(f);
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "CollectionType=\"Temporal\""));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "TopologyType=\"Polyvertex\""));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "particles.h5:/Step000040/Coordinates"));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "Name=\"AngularVelocities\""));
  int grids = 0;
  for (const char *p = text; (p = strstr(p, "<Time Value=")); p++) grids++;
  CU_ASSERT_EQUAL(grids, 3);
}

static void test_metrics_csv(void)
{
  char path[512], line[512];
  snprintf(path, sizeof path, "%s/out/metrics.csv", dir);
  FILE *f = fopen(path, "r");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  int rows = 0;
  CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, f));
  CU_ASSERT_PTR_NOT_NULL(strstr(line, "step,time_s,rank,host,load_s,wait_s,comm_s,weight,particles,ghosts"));
  while (fgets(line, sizeof line, f)) rows++;
  fclose(f);
  CU_ASSERT_EQUAL(rows, STEPS / 10);
}

int main(int argc, char **argv)
{
  if (argc < 2) return 2;
  demsim = argv[1];
  static CU_TestInfo tests[] = {
    {"summary.json has every field", test_summary_fields},
    {"snapshots in HDF5; free fall matches the closed form", test_snapshots_in_hdf5},
    {"h5py reads the file", test_h5py_reads_it},
    {"particles.h5 has units and the scenario", test_hdf5_units_and_scenario},
    {"the XDMF sidecar lists every snapshot for ParaView", test_xdmf_sidecar},
    {"metrics.csv has a row per interval", test_metrics_csv},
    CU_TEST_INFO_NULL};
  static CU_SuiteInfo suites[] = {{"outputs", suite_init, suite_clean, NULL, NULL, tests}, CU_SUITE_INFO_NULL};
  return dem_plain_main(suites);
}
