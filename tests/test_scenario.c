/* The scenario reader and the gravity-packing generator. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dem/particles.h"
#include "scenario/packing.h"
#include "scenario/scenario.h"
#include "testing.h"

static void test_study_lattice(void)
{
  dem_scenario_t s;
  dem_scenario_defaults(&s);
  char err[512];
  /* the study: 1.0 m box, lower half, 500,000 particles -> 100 x 100 x 50 at 0.01 m */
  dem_lattice_t lat;
  CU_ASSERT_EQUAL_FATAL(dem_scenario_lattice(&s, &lat, err, sizeof err), 0);
  CU_ASSERT_EQUAL(lat.count, 500000);
  CU_ASSERT_EQUAL(lat.nx * lat.ny * lat.nz >= 500000, 1);
  CU_ASSERT_DOUBLE_EQUAL(lat.spacing, 0.01, 1.5e-4);
  CU_ASSERT_DOUBLE_EQUAL(lat.diameter, 1.001 * lat.spacing, 1e-15);
  CU_ASSERT_EQUAL(dem_scenario_validate(&s, err, sizeof err), 0);
}

static void test_generator_places_every_particle_inside(void)
{
  dem_scenario_t s;
  dem_scenario_defaults(&s);
  s.particles = 2000;
  s.diameter_ratio = 0.99;
  char err[512];
  CU_ASSERT_EQUAL_FATAL(dem_scenario_validate(&s, err, sizeof err), 0);
  dem_lattice_t lat;
  CU_ASSERT_EQUAL_FATAL(dem_scenario_lattice(&s, &lat, err, sizeof err), 0);
  dem_particles_t *p = dem_particles_create(16);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  /* generated in two blocks, as two ranks would */
  CU_ASSERT_EQUAL(dem_packing_generate(&s, &lat, 0, 700, p), 0);
  CU_ASSERT_EQUAL(dem_packing_generate(&s, &lat, 700, 1300, p), 0);
  CU_ASSERT_EQUAL_FATAL(p->n, 2000);
  double r = 0.5 * lat.diameter, zmax = 0;
  for (size_t i = 0; i < p->n; i++) {
    CU_ASSERT_EQUAL(p->id[i], (dem_gid_t)i);
    CU_ASSERT_DOUBLE_EQUAL(p->radius[i], r, 1e-15);
    for (int a = 0; a < 3; a++) {
      CU_ASSERT(p->pos[3 * i + a] - r >= -1e-12);
      CU_ASSERT(p->pos[3 * i + a] + r <= s.box + 1e-12);
    }
    if (p->pos[3 * i + 2] > zmax) zmax = p->pos[3 * i + 2];
  }
  /* the floor layer rests on the floor; nearest neighbours are one spacing apart */
  CU_ASSERT_DOUBLE_EQUAL(p->pos[2], r, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(p->pos[3 * 1 + 0] - p->pos[0], lat.spacing, 1e-12);
  CU_ASSERT(zmax <= s.box * s.fill);
  dem_particles_destroy(&p);
  CU_ASSERT_PTR_NULL(p);
}

static void test_file_and_overrides(void)
{
  char path[] = "/tmp/demsim-scenario-XXXXXX";
  int fd = mkstemp(path);
  CU_ASSERT_FATAL(fd >= 0);
  const char *text = "name = \"x\";\nproblem = { particles = 1000; };\nmaterial = { friction = 0.25; };\n"
                     "run = { policy = \"RW5\"; };\nplatform = { file = \"p.xml\"; hosts = [\"a\", \"b\"]; };\n"
                     "stress = ( { host = \"c\"; kind = \"vm\"; workers = 2; bytes = 2e9; on = 10.0; off = 50.0; } );\n";
  CU_ASSERT_EQUAL(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  dem_scenario_t s;
  dem_scenario_defaults(&s);
  char err[512] = "";
  CU_ASSERT_EQUAL_FATAL(dem_scenario_read(&s, path, err, sizeof err), 0);
  CU_ASSERT_EQUAL(s.particles, 1000);
  CU_ASSERT_DOUBLE_EQUAL(s.params.mat.friction, 0.25, 0);
  CU_ASSERT_STRING_EQUAL(s.policy, "RW5");
  CU_ASSERT_EQUAL(s.n_hosts, 2);
  CU_ASSERT_STRING_EQUAL(s.hosts[1], "b");
  CU_ASSERT_EQUAL(s.n_stress, 1);
  CU_ASSERT_EQUAL(s.stress[0].vm, 1);
  CU_ASSERT_EQUAL(s.stress[0].workers, 2);
  CU_ASSERT_DOUBLE_EQUAL(s.stress[0].off_s, 50.0, 0);
  /* the platform is relative to the scenario file */
  CU_ASSERT_PTR_NOT_NULL(strstr(s.platform, "/tmp/p.xml"));
  CU_ASSERT_EQUAL(dem_scenario_set(&s, "material.friction=0.75", err, sizeof err), 0);
  CU_ASSERT_DOUBLE_EQUAL(s.params.mat.friction, 0.75, 0);
  CU_ASSERT_EQUAL(dem_scenario_set(&s, "time.steps=12", err, sizeof err), 0);
  CU_ASSERT_EQUAL(s.steps, 12);
  CU_ASSERT_EQUAL(dem_scenario_set(&s, "time.steps=1.5", err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "time.steps"));
  CU_ASSERT_EQUAL(dem_scenario_set(&s, "nope=1", err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "nope"));
  /* --set takes a value as the file writes it: a quoted string, a list; errors name the option */
  CU_ASSERT_EQUAL(dem_scenario_set(&s, "platform.hosts=[\"x\", \"y\", \"z\"]", err, sizeof err), 0);
  CU_ASSERT_EQUAL(s.n_hosts, 3);
  CU_ASSERT_STRING_EQUAL(s.hosts[2], "z");
  CU_ASSERT_EQUAL(dem_scenario_set(&s, "run.partitioner=\"RIB\"", err, sizeof err), 0);
  CU_ASSERT_STRING_EQUAL(s.partitioner, "RIB");
  CU_ASSERT_EQUAL(dem_scenario_set(&s, "run.partitioner=HSFC", err, sizeof err), 0); /* bare, as before */
  CU_ASSERT_STRING_EQUAL(s.partitioner, "HSFC");
  /* choices in any case, stored in their own spelling */
  CU_ASSERT_EQUAL(dem_scenario_set(&s, "run.policy=rw5", err, sizeof err), 0);
  CU_ASSERT_STRING_EQUAL(s.policy, "RW5");
  CU_ASSERT_EQUAL(dem_scenario_set(&s, "run.partitioner=\"hsfc\"", err, sizeof err), 0);
  CU_ASSERT_STRING_EQUAL(s.partitioner, "HSFC");
  CU_ASSERT_EQUAL(dem_scenario_set(&s, "platform.hosts=[\"x\"", err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "--set platform.hosts"));
  CU_ASSERT_EQUAL(dem_scenario_set(&s, "time.steps=\"ten\"", err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "--set time.steps"));
  CU_ASSERT_PTR_NULL(strstr(err, ".cfg"));
  unlink(path);
}

static CU_TestInfo tests[] = {
  {"the study's lattice: 500,000 particles at 0.01 m", test_study_lattice},
  {"generated particles are inside the box, on the lattice", test_generator_places_every_particle_inside},
  {"scenario file and --set overrides", test_file_and_overrides},
  CU_TEST_INFO_NULL};
static CU_SuiteInfo suites[] = {{"scenario", NULL, NULL, NULL, NULL, tests}, CU_SUITE_INFO_NULL};
DEM_TEST_MAIN(suites)
