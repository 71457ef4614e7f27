/* Numerical safety and determinism through the real `demsim` (argv[1]):
 *  - a run whose particles are driven into a wall by an absurd gravity stops with exit status
 *    1, a message naming the particle, the step and the likely cause, and the failing state
 *    written to failed.h5 (readable);
 *  - the same scenario run twice gives the same summary.json apart from its wall-clock fields
 *    (in the SMPI build this is the simulator's determinism, with 3 ranks and a stress). */
#include <CUnit/Basic.h>
#include <hdf5.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plain_testing.h"

static const char *demsim;
static char dir[256], cfg[512];

static int run(const char *args, char *out, size_t len)
{
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s run %s %s --quiet 2>&1", demsim, cfg, args);
  return dem_plain_run(cmd, out, len);
}

static void test_blow_up_is_caught(void)
{
  char args[1024], out[8192];
  snprintf(args, sizeof args, "--steps 400 --set physics.gravity=1e12 --set physics.check_every=10 --out %s/boom", dir);
  int rc = run(args, out, sizeof out);
  printf("\n  %s", out);
  CU_ASSERT_EQUAL(rc, 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "particle"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "step "));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "time step"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "failed.h5"));
  char path[600];
  snprintf(path, sizeof path, "%s/boom/failed.h5", dir);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  CU_ASSERT(f >= 0);
  if (f >= 0) H5Fclose(f);
  /* nothing that looks like a complete run */
  snprintf(path, sizeof path, "%s/boom/summary.json", dir);
  CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);
}

static json_t *load_without_wall(const char *sub)
{
  char path[600];
  snprintf(path, sizeof path, "%s/%s/summary.json", dir, sub);
  json_error_t e;
  json_t *s = json_load_file(path, 0, &e);
  if (!s) return NULL;
  json_object_del(s, "wall_s");
  json_object_del(s, "wall_loop_s");
  json_object_del(s, "wall_particle_steps_per_s");
  json_object_del(s, "wall_partition_s"); /* real time in Zoltan, in both builds */
#ifndef DEMSIM_SMPI
  /* natively every time is wall time: compare what does not depend on it */
  const char *timed[] = {"sim_time_s", "particle_steps_per_s", "rank0_timers_s", "per_rank", "lambda_max_percent",
                         "lambda_final_percent", "lambda_after_repartition_percent", "weight_oscillation", "partition_s",
                         "migration_s", "setup_s", "setup_started_at_s", "time_breakdown_s",
                         /* RW's weights follow wall time, and with them the parts */
                         "ghosts_per_rank_per_step", "ghost_bytes_per_rank_per_step",
                         "ghost_bytes_per_rank_per_step_max", "edge_cut", "edge_cut_fraction",
                         "migration_particles_per_repartition", "migration_bytes_per_repartition"};
  for (size_t i = 0; i < sizeof timed / sizeof timed[0]; i++) json_object_del(s, timed[i]);
#endif
  return s;
}

static void test_same_scenario_twice_same_summary(void)
{
  char args[1024], out[8192];
  for (int k = 0; k < 2; k++) {
    snprintf(args, sizeof args, "--ranks 3 --steps 120 --repartition-every 40 --policy RW --out %s/det%d", dir, k);
    CU_ASSERT_EQUAL_FATAL(run(args, out, sizeof out), 0);
  }
  json_t *a = load_without_wall("det0"), *b = load_without_wall("det1");
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  CU_ASSERT(json_object_size(a) > 10);
  int same = json_equal(a, b);
  if (!same) {
    char *x = json_dumps(a, JSON_SORT_KEYS | JSON_COMPACT), *y = json_dumps(b, JSON_SORT_KEYS | JSON_COMPACT);
    printf("\n  first:  %s\n  second: %s\n", x, y);
    free(x);
    free(y);
  }
  CU_ASSERT(same);
  json_decref(a);
  json_decref(b);
}

static int suite_init(void)
{
  if (dem_plain_scenario(dir, sizeof dir, cfg, sizeof cfg, "safety",
                         "name = \"safety-test\";\nproblem = { particles = 3000; diameter_ratio = 1.001; };\n"
                         "platform = { file = \"%s/platforms/openstack.xml\"; "
                         "hosts = [\"n1-cn6700-2a\", \"n2-cn6700-2a\", \"n3-cn6700-4\"]; };\n"
                         "stress = ( { host = \"n1-cn6700-2b\"; kind = \"vm\"; workers = 2; bytes = 1e9; "
                         "start = 0.001; on = 0.002; off = 0.002; } );\n",
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
    {"a blow-up stops naming the particle, the step and the cause", test_blow_up_is_caught},
    {"the same scenario twice gives the same summary.json", test_same_scenario_twice_same_summary},
    CU_TEST_INFO_NULL};
  static CU_SuiteInfo suites[] = {{"safety", suite_init, suite_clean, NULL, NULL, tests}, CU_SUITE_INFO_NULL};
  return dem_plain_main(suites);
}
