/* Checkpoint/restart through the real `demsim` (argv[1]): a run restarted from a checkpoint
 * ends in exactly the state of the uninterrupted run (1 and 4 ranks); a checkpoint of another
 * problem is refused with exit status 2; a run killed while it writes checkpoints always
 * leaves a complete, restartable one. Final states are compared with the HDF5 library. */
#include <CUnit/Basic.h>
#include <hdf5.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "plain_testing.h"

static const char *demsim;
static char dir[256], cfg[512];

static int run(const char *args, char *out, size_t len)
{
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s run %s %s --quiet 2>&1", demsim, cfg, args);
  int rc = dem_plain_run(cmd, out, len);
  if (rc != 0) printf("\n  demsim %s -> %d: %s\n", args, rc, out);
  return rc;
}

static double *read_vec(const char *file, const char *dset, size_t *n)
{
  hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return NULL;
  hid_t d = H5Dopen2(f, dset, H5P_DEFAULT);
  double *buf = NULL;
  if (d >= 0) {
    hid_t sp = H5Dget_space(d);
    hsize_t dims[2] = {0, 1};
    H5Sget_simple_extent_dims(sp, dims, NULL);
    *n = (size_t)(dims[0] * 3);
    buf = malloc(*n * sizeof *buf);
    H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    H5Sclose(sp);
    H5Dclose(d);
  }
  H5Fclose(f);
  return buf;
}

/* The final states of two runs are identical (ids are sorted in particles.h5). */
static void compare_final(const char *a, const char *b, long step)
{
  char pa[512], pb[512], ds[128];
  snprintf(pa, sizeof pa, "%s/%s/particles.h5", dir, a);
  snprintf(pb, sizeof pb, "%s/%s/particles.h5", dir, b);
  const char *fields[] = {"Coordinates", "Velocities", "AngularVelocities"};
  for (int f = 0; f < 3; f++) {
    snprintf(ds, sizeof ds, "/Step%06ld/%s", step, fields[f]);
    size_t na = 0, nb = 0;
    double *x = read_vec(pa, ds, &na), *y = read_vec(pb, ds, &nb);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(y);
    CU_ASSERT_EQUAL_FATAL(na, nb);
    double scale = 0, diff = 0;
    for (size_t i = 0; i < na; i++) {
      scale = fmax(scale, fabs(x[i]));
      diff = fmax(diff, fabs(x[i] - y[i]));
    }
    if (diff > 1e-12 * scale) printf("\n  %s: %s differs by %g (scale %g)\n", b, fields[f], diff, scale);
    CU_ASSERT(diff <= 1e-12 * scale);
    free(x);
    free(y);
  }
}

/* After --restart the throughput counts the steps this run ran (from the checkpoint's step),
 * not all of them: particle_steps_per_s = particles x steps_run / sim_time_s. */
static void throughput_counts_steps_run(const char *run_dir, long from, long to)
{
  char path[512];
  snprintf(path, sizeof path, "%s/%s/summary.json", dir, run_dir);
  json_error_t e;
  json_t *s = json_load_file(path, 0, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  double n = (double)json_integer_value(json_object_get(s, "particles"));
  double t = json_real_value(json_object_get(s, "sim_time_s")), wall = json_real_value(json_object_get(s, "wall_loop_s"));
  CU_ASSERT_EQUAL(json_integer_value(json_object_get(s, "restarted_from_step")), from);
  CU_ASSERT_EQUAL(json_integer_value(json_object_get(s, "steps_run")), to - from);
  double rate = json_real_value(json_object_get(s, "particle_steps_per_s"));
  CU_ASSERT(t > 0 && fabs(rate - n * (double)(to - from) / t) <= 1e-9 * rate);
  double wall_rate = json_real_value(json_object_get(s, "wall_particle_steps_per_s"));
  CU_ASSERT(wall > 0 && fabs(wall_rate - n * (double)(to - from) / wall) <= 1e-9 * wall_rate);
  json_decref(s);
}

static void restart_matches(int ranks)
{
  char args[1024], out[8192], tag[32];
  snprintf(tag, sizeof tag, "p%d", ranks);
  /* uninterrupted: 160 steps; interrupted: 80 steps with a checkpoint, then restarted to 160 */
  snprintf(args, sizeof args, "--ranks %d --steps 160 --out %s/full-%s", ranks, dir, tag);
  CU_ASSERT_EQUAL_FATAL(run(args, out, sizeof out), 0);
  snprintf(args, sizeof args, "--ranks %d --steps 80 --set output.checkpoint_every=80 --out %s/first-%s", ranks, dir, tag);
  CU_ASSERT_EQUAL_FATAL(run(args, out, sizeof out), 0);
  /* the restarted run also gathers its frame in blocks of 300 particles from every rank: the
   * file must not depend on it */
  snprintf(args, sizeof args,
           "--ranks %d --steps 160 --restart %s/first-%s/checkpoint.h5 --set output.gather_block=300 --out %s/second-%s",
           ranks, dir, tag, dir, tag);
  CU_ASSERT_EQUAL_FATAL(run(args, out, sizeof out), 0);
  char a[64], b[64];
  snprintf(a, sizeof a, "full-%s", tag);
  snprintf(b, sizeof b, "second-%s", tag);
  compare_final(a, b, 160);
  throughput_counts_steps_run(a, 0, 160);
  throughput_counts_steps_run(b, 80, 160);
}

static void test_restart_1_rank(void) { restart_matches(1); }
static void test_restart_4_ranks(void) { restart_matches(4); }

static void test_other_problem_refused(void)
{
  char args[1024], out[8192];
  snprintf(args, sizeof args, "--steps 40 --set output.checkpoint_every=40 --out %s/other", dir);
  CU_ASSERT_EQUAL_FATAL(run(args, out, sizeof out), 0);
  /* another material: exit 2, naming the key */
  snprintf(args, sizeof args, "--steps 80 --set material.friction=0.3 --restart %s/other/checkpoint.h5 --out %s/o2", dir, dir);
  CU_ASSERT_EQUAL(run(args, out, sizeof out), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "material.friction"));
  /* not a checkpoint at all */
  snprintf(args, sizeof args, "--steps 80 --restart %s --out %s/o3", cfg, dir);
  CU_ASSERT_EQUAL(run(args, out, sizeof out), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "not an HDF5 file"));
  /* missing */
  snprintf(args, sizeof args, "--steps 80 --restart %s/none.h5 --out %s/o4", dir, dir);
  CU_ASSERT_EQUAL(run(args, out, sizeof out), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "none.h5"));
}

/* Kill runs that checkpoint every few steps at various moments: whatever checkpoint.h5 is
 * left must be complete (a restart from it succeeds). */
static void test_killed_run_leaves_a_whole_checkpoint(void)
{
  int checked = 0;
  for (int trial = 0; trial < 6; trial++) {
    char outdir[512], cmd[2048];
    snprintf(outdir, sizeof outdir, "%s/kill%d", dir, trial);
    pid_t pid = fork();
    if (pid == 0) {
      snprintf(cmd, sizeof cmd, "exec %s run %s --steps 100000 --set output.checkpoint_every=5 --out %s --quiet "
               ">/dev/null 2>&1", demsim, cfg, outdir);
      setpgid(0, 0);
      /* a killed launcher cannot remove its SMPI temporary directory: keep it in the test's */
      setenv("TMPDIR", dir, 1);
      execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
      _exit(127);
    }
    /* wait for the first checkpoint (up to 60 s), then kill at a varying moment after it, so
     * that some kills land while the next one is being written */
    char first[600];
    snprintf(first, sizeof first, "%s/checkpoint.h5", outdir);
    for (int w = 0; w < 600 && access(first, F_OK) != 0; w++) {
      struct timespec tick = {0, 100000000L};
      nanosleep(&tick, NULL);
    }
    struct timespec ts = {0, 37000000L * (long)(trial + 1)};
    nanosleep(&ts, NULL);
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    /* the launcher's children (smpirun, the simulated ranks) die on their own time: one may still
     * finish the rename of its next checkpoint; read the file once the whole group is gone */
    for (int w = 0; w < 200 && kill(-pid, 0) == 0; w++) {
      struct timespec gone = {0, 50000000L};
      nanosleep(&gone, NULL);
    }
    char ck[600];
    snprintf(ck, sizeof ck, "%s/checkpoint.h5", outdir);
    CU_ASSERT_EQUAL(access(ck, F_OK), 0);
    if (access(ck, F_OK) != 0) continue;
    char out[8192];
    hid_t f = H5Fopen(ck, H5F_ACC_RDONLY, H5P_DEFAULT);
    CU_ASSERT(f >= 0);
    if (f >= 0) {
      long step = 0;
      hid_t a = H5Aopen(f, "Step", H5P_DEFAULT);
      CU_ASSERT(a >= 0);
      if (a >= 0) {
        H5Aread(a, H5T_NATIVE_LONG, &step);
        H5Aclose(a);
      }
      H5Fclose(f);
      CU_ASSERT(step > 0 && step % 5 == 0);
      char rargs[1400];
      snprintf(rargs, sizeof rargs, "--restart %s --steps %ld --out %s/restarted", ck, step + 5, outdir);
      CU_ASSERT_EQUAL(run(rargs, out, sizeof out), 0);
      checked++;
    }
  }
  CU_ASSERT_EQUAL(checked, 6);
}

static int suite_init(void)
{
  /* in contact, so that springs and the contact history matter; repartitions in between */
  if (dem_plain_scenario(dir, sizeof dir, cfg, sizeof cfg, "restart",
                         "name = \"restart-test\";\nproblem = { particles = 3000; diameter_ratio = 1.001; };\n"
                         "run = { policy = \"RW\"; repartition_every = 30; };\n"
                         "physics = { check_every = 40; };\n"
                         "platform = { file = \"%s/platforms/openstack.xml\"; "
                         "hosts = [\"n1-cn6700-4\", \"n2-cn6700-4\", \"n3-cn6700-3\", \"n6-cn4790-4\"]; };\n",
                         dem_plain_source_dir()))
    return -1;
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  return 0;
}

static int suite_clean(void) { return dem_plain_rmdir(dir); }

int main(int argc, char **argv)
{
  if (argc < 2) return 2;
  demsim = argv[1];
  static CU_TestInfo tests[] = {
    {"1 rank: restarted run = uninterrupted run", test_restart_1_rank},
    {"4 ranks: restarted run = uninterrupted run", test_restart_4_ranks},
    {"a checkpoint of another problem is refused (exit 2)", test_other_problem_refused},
    {"a killed run leaves a whole checkpoint", test_killed_run_leaves_a_whole_checkpoint},
    CU_TEST_INFO_NULL};
  static CU_SuiteInfo suites[] = {{"restart", suite_init, suite_clean, NULL, NULL, tests}, CU_SUITE_INFO_NULL};
  return dem_plain_main(suites);
}
