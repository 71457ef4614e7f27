/* Bad input fails cleanly: each malformed or impossible scenario makes `demsim run` exit with
 * status 2 and a message naming the file and the key, before anything runs. The program
 * under test is the real `demsim` (path in argv[1]); this test is a plain program, not MPI. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *demsim = NULL;
static char dir[256];

static const char *base =
  "name = \"t\";\n"
  "platform = { file = \"__PLATFORM__\"; hosts = [\"n1-cn6700-4\", \"n2-cn6700-4\"]; };\n";

/* Writes `body` (with __PLATFORM__ replaced) to a file and runs demsim on it; returns the exit
 * status and the combined output in out. */
static int run_case(const char *name, const char *body, const char *extra, char *out, size_t outlen)
{
  char path[512], cmd[2048];
  snprintf(path, sizeof path, "%s/%s.cfg", dir, name);
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  const char *mark = strstr(body, "__PLATFORM__");
  if (mark) {
    fwrite(body, 1, (size_t)(mark - body), f);
    fprintf(f, "%s/platforms/openstack.xml", getenv("DEMSIM_SOURCE_DIR") ? getenv("DEMSIM_SOURCE_DIR") : DEMSIM_SOURCE_DIR);
    fputs(mark + strlen("__PLATFORM__"), f);
  } else {
    fputs(body, f);
  }
  fclose(f);
  snprintf(cmd, sizeof cmd, "%s run %s --dry-run --quiet --out %s/out-%s %s 2>&1", demsim, path, dir, name, extra ? extra : "");
  FILE *p = popen(cmd, "r");
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  size_t n = fread(out, 1, outlen - 1, p);
  out[n] = '\0';
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The base holds no problem/material/time/run group (defaults apply), so that each case can add
 * the group it breaks: libconfig refuses a group given twice. A scenario needs one of them, so
 * a case that breaks nothing in the file adds RUN1.
 * Each case: a name, the text appended to (or replacing) the valid base, the key the
 * message must name. */
#define RUN1 "run = { ranks = 1; };\n"

typedef struct bad_case {
  const char *name;
  const char *append;  /* appended to base */
  const char *replace; /* or the whole file */
  const char *extra;   /* extra command-line arguments */
  const char *expect;  /* text the message must contain */
} bad_case_t;

static const bad_case_t cases[] = {
  {"unknown_key", "material = { youngs_modulus = 5.0e6; poisson = 0.45; restitution = 0.3; friction = 0.5; density = 2500.0; colour = 3; };\n", NULL, NULL, "material.colour"},
  {"unknown_group", "physics = { gravity = -9.81; magnetism = 1.0; };\n", NULL, NULL, "physics.magnetism"},
  {"wrong_type_string", "run = { ranks = \"two\"; };\n", NULL, NULL, "run.ranks"},
  {"wrong_type_number", "run = { policy = 3; };\n", NULL, NULL, "run.policy"},
  {"float_for_integer", "time = { dt = 1.0e-8; steps = 10.5; };\n", NULL, NULL, "time.steps"},
  {"negative_box", "problem = { box = -1.0; };\n", NULL, NULL, "problem.box"},
  {"zero_box", "problem = { box = 0.0; };\n", NULL, NULL, "problem.box"},
  {"zero_fill", "problem = { fill = 0.0; };\n", NULL, NULL, "problem.fill"},
  {"negative_particles", "problem = { particles = -5; };\n", NULL, NULL, "problem.particles"},
  {"zero_steps", "time = { dt = 1.0e-8; steps = 0; };\n", NULL, NULL, "time.steps"},
  {"negative_dt", "time = { dt = -1.0e-8; steps = 10; };\n", NULL, NULL, "time.dt"},
  {"dt_too_large", "time = { dt = 1.0e-3; steps = 10; };\n", NULL, NULL, "time.dt"},
  {"deep_overlap", "problem = { diameter_ratio = 1.2; };\n", NULL, NULL, "problem.diameter_ratio"},
  {"zero_density", "material = { density = 0.0; };\n", NULL, NULL, "material.density"},
  {"restitution_above_one", "material = { restitution = 1.5; };\n", NULL, NULL, "material.restitution"},
  {"poisson_too_high", "material = { poisson = 0.7; };\n", NULL, NULL, "material.poisson"},
  {"negative_friction", "material = { friction = -0.1; };\n", NULL, NULL, "material.friction"},
  {"bad_policy", "run = { policy = \"FAST\"; };\n", NULL, NULL, "run.policy"},
  {"bad_partitioner", "run = { partitioner = \"METIS\"; };\n", NULL, NULL, "run.partitioner"},
  {"partitioner_unknown", "run = { partitioner = \"rcbx\"; };\n", NULL, NULL, "key 'run.partitioner' = \"rcbx\": expected one of RCB|RIB"},
  {"partitioner_not_a_string", "run = { partitioner = 1; };\n", NULL, NULL, "run.partitioner"},
  {"hier_without_sites", "run = { ranks = 2; partitioner = \"HIER\"; };\n", NULL, NULL, "platform.sites"},
  {"sites_wrong_count", RUN1, NULL, "--set platform.sites=0", "platform.sites"},
  {"sites_out_of_order", "run = { ranks = 2; };\n", NULL, "--set platform.sites=1,0", "platform.sites"},
  {"sites_not_numbers", RUN1, NULL, "--set platform.sites=a,b", "platform.sites"},
  {"sites_strings_in_file", NULL,
   "name = \"t\";\nplatform = { file = \"__PLATFORM__\"; hosts = [\"n1-cn6700-4\", \"n2-cn6700-4\"]; "
   "sites = [\"a\", \"b\"]; };\n", NULL, "platform.sites"},
  {"negative_site_threshold", "run = { site_threshold = -5.0; };\n", NULL, NULL, "run.site_threshold"},
  {"bad_set_partitioner", RUN1, NULL, "--set run.partitioner=PARMETIS", "run.partitioner"},
  {"ewma_alpha_zero", "run = { policy = \"EWMA\"; ewma_alpha = 0.0; };\n", NULL, NULL, "run.ewma_alpha"},
  {"ewma_alpha_above_one", "run = { ewma_alpha = 1.5; };\n", NULL, NULL, "run.ewma_alpha"},
  {"negative_pi_kp", "run = { policy = \"PI\"; pi_kp = -1.0; };\n", NULL, NULL, "run.pi_kp"},
  {"pi_ki_above_one", "run = { pi_ki = 2.0; };\n", NULL, NULL, "run.pi_ki"},
  {"ruper_change_one", "run = { policy = \"RUPER\"; ruper_change = 1.0; };\n", NULL, NULL, "run.ruper_change"},
  {"negative_ruper_tmin", "run = { ruper_tmin_factor = -1.0; };\n", NULL, NULL, "run.ruper_tmin_factor"},
  {"negative_ruper_threshold", "run = { ruper_threshold = -5.0; };\n", NULL, NULL, "run.ruper_threshold"},
  {"zero_ruper_report_min", "run = { ruper_report_min = 0; };\n", NULL, NULL, "run.ruper_report_min"},
  {"ruper_report_max_below_min", "run = { ruper_report_min = 10; ruper_report_max = 5; };\n", NULL, NULL,
   "run.ruper_report_max"},
  {"zero_repartition", "run = { repartition_every = 0; };\n", NULL, NULL, "run.repartition_every"},
  {"more_ranks_than_hosts", "run = { ranks = 3; };\n", NULL, NULL, "run.ranks"},
  {"stress_on_rank_host", "stress = ( { host = \"n1-cn6700-4\"; kind = \"vm\"; workers = 2; bytes = 2e9; } );\n", NULL, NULL, "stress"},
  {"stress_bad_kind", "stress = ( { host = \"n3-cn6700-4\"; kind = \"disk\"; } );\n", NULL, NULL, "stress.[0].kind"},
  {"syntax_error", NULL, "problem = { box = 1.0 \n", NULL, "syntax error"},
  {"particles_do_not_fit", "problem = { particles = 1000; spacing = 0.6; };\n", NULL, NULL, "problem"},
  {"bad_set_key", RUN1, NULL, "--set material.colour=3", "material.colour"},
  {"bad_set_value", RUN1, NULL, "--set time.steps=ten", "time.steps"},
  {"typo_key_suggested", RUN1, NULL, "--set material.frction=0.3", "unknown key 'material.frction' (did you mean 'material.friction'?"},
  {"integer_range_in_full", RUN1, NULL, "--set problem.particles=-5", "= -5: expected a value in [0, 2147483647]"},
  {"open_range_without_infinity", RUN1, NULL, "--set material.density=0", "= 0: expected a value > 0 kg/m^3"},
  {"unknown_container", RUN1, NULL, "--set platform.hosts=n9-nowhere", "\"n9-nowhere\" is not a host of"},
  {"bad_set_list", RUN1, NULL, "--set 'platform.hosts=[\"n1-cn6700-4\"'", "--set platform.hosts"},
  {"bad_option", RUN1, NULL, "--frobnicate", "--frobnicate"},
  {"bad_backend", RUN1, NULL, "--backend cuda", "device.backend"},
  {"measured_without_speed", RUN1, NULL, "--set device.cost=measured", "device.local_speed"},
  {"code_cost_zero", RUN1, NULL, "--set device.code_cost=0", "device.code_cost"},
  {"noise_cv_negative", RUN1, NULL, "--set noise.enabled=true --set noise.cpu_cv=-0.1", "noise.cpu_cv"},
  {"noise_tau_zero", RUN1, NULL, "--set noise.enabled=true --set noise.mem_cv=0.1 --set noise.mem_tau=0", "noise.mem_tau"},
  {"noise_dt_zero", RUN1, NULL, "--set noise.dt=0", "noise.dt"},
  {"measured_on_reference", RUN1, NULL, "--set device.cost=measured --set device.local_speed=4e9 --backend reference",
   "device.cost"},
  {"bad_cost", RUN1, NULL, "--set device.cost=guessed", "device.cost"},
  {"server_measured", RUN1, NULL, "--set device.server=n3-cn6700-4 --set device.cost=measured --set device.local_speed=4e9",
   "device.server"},
  {"server_runs_stress", "run = { ranks = 1; };\nstress = ( { host = \"n3-cn6700-4\"; kind = \"vm\"; bytes = 1e9; } );\n", NULL,
   "--set device.server=n3-cn6700-4", "device.server"},
  /* a file that says nothing about what to simulate, rather than the defaults run silently */
  {"empty_file", NULL, "", NULL, "the scenario is empty"},
  {"comments_only", NULL, "# a scenario still to be written\n", NULL, "the scenario is empty"},
  {"output_only", NULL, "name = \"t\";\noutput = { metrics_every = 10; };\n", NULL, "no problem or run settings"},
  {"empty_file_with_options", NULL, "", "--particles 1000 --steps 10", "the scenario is empty"},
  /* a container lost mid-run */
  {"failure_at_and_mtbf", "run = { ranks = 2; };\nfailure = { host = \"n1-cn6700-4\"; at = 1.0; mtbf = 5.0; };\n", NULL,
   NULL, "failure.mtbf"},
  {"failure_host_without_at", "run = { ranks = 2; };\nfailure = { host = \"n1-cn6700-4\"; };\n", NULL, NULL, "failure.at"},
  {"failure_host_with_mtbf", "run = { ranks = 2; };\nfailure = { host = \"n1-cn6700-4\"; mtbf = 5.0; };\n", NULL, NULL,
   "failure.host"},
  {"failure_host_runs_no_rank", "run = { ranks = 2; };\nfailure = { host = \"n3-cn6700-4\"; at = 1.0; };\n", NULL, NULL,
   "failure.host"},
  {"failure_single_rank", RUN1, NULL, "--set failure.mtbf=5", "run.ranks"},
  {"failure_negative_at", "run = { ranks = 2; };\nfailure = { host = \"n1-cn6700-4\"; at = -1.0; };\n", NULL, NULL,
   "failure.at"},
  {"failure_negative_mtbf", "run = { ranks = 2; };\nfailure = { mtbf = -5.0; };\n", NULL, NULL, "failure.mtbf"},
  {"failure_negative_latency", "run = { ranks = 2; };\nfailure = { mtbf = 5.0; restart_latency = -1.0; };\n", NULL, NULL,
   "failure.restart_latency"},
  {"failure_bad_attempt", "run = { ranks = 2; };\n", NULL, "--attempt minus", "--attempt"},
};

static void test_each_bad_input_exits_2(void)
{
  char out[4096], body[4096];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const bad_case_t *c = &cases[i];
    if (c->replace) snprintf(body, sizeof body, "%s", c->replace);
    else snprintf(body, sizeof body, "%s%s", base, c->append);
    int rc = run_case(c->name, body, c->extra, out, sizeof out);
    if (rc != 2 || !strstr(out, c->expect))
      printf("\n  case %s: exit %d, output: %s", c->name, rc, out);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, c->expect));
    /* a message names the file too (the command-line cases name the option) */
    if (!c->extra) CU_ASSERT_PTR_NOT_NULL(strstr(out, c->name));
    /* nothing was run: no summary written */
    char summary[512];
    snprintf(summary, sizeof summary, "%s/out-%s/summary.json", dir, c->name);
    CU_ASSERT_NOT_EQUAL(access(summary, F_OK), 0);
  }
}

#ifdef DEMSIM_SMPI
/* A small platform: one node with its memory bus and two containers; %s is replaced by the
 * properties of the second container (to break them). */
static const char *platform_fmt =
  "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
  "<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">\n"
  "<host id=\"m-membus\" speed=\"1e10f\"><prop id=\"loaded_latency\" value=\"0:1\"/></host>\n"
  "<host id=\"m-a\" speed=\"1e10f\" core=\"2\"><prop id=\"container\" value=\"A\"/><prop id=\"node\" value=\"m\"/>"
  "<prop id=\"node_type\" value=\"t\"/><prop id=\"membus\" value=\"m-membus\"/><prop id=\"core_bw\" value=\"5e9\"/>"
  "<prop id=\"device\" value=\"cpu\"/><prop id=\"launch_latency\" value=\"0\"/>"
  "<prop id=\"core_gather_bw\" value=\"5e9\"/><prop id=\"cache_line\" value=\"64\"/><prop id=\"llc_bytes\" value=\"1e6\"/></host>\n"
  "<host id=\"m-b\" speed=\"1e10f\" core=\"2\">%s</host>\n"
  "</zone></platform>\n";

#define XML_HEAD "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n" \
                 "<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">\n"
#define XML_TAIL "</zone></platform>\n"

/* Platform faults: each exits with 2 before smpirun starts, naming the file and host. */
static void test_bad_platforms_exit_2(void)
{
  const char *good_b = "<prop id=\"container\" value=\"B\"/><prop id=\"node\" value=\"m\"/><prop id=\"node_type\" "
                       "value=\"t\"/><prop id=\"membus\" value=\"m-membus\"/><prop id=\"core_bw\" value=\"5e9\"/>"
                       "<prop id=\"device\" value=\"cpu\"/><prop id=\"launch_latency\" value=\"0\"/>"
                       "<prop id=\"core_gather_bw\" value=\"5e9\"/><prop id=\"cache_line\" value=\"64\"/><prop id=\"llc_bytes\" value=\"1e6\"/>";
  const char *no_bw = "<prop id=\"container\" value=\"B\"/><prop id=\"node\" value=\"m\"/><prop id=\"node_type\" "
                      "value=\"t\"/><prop id=\"membus\" value=\"m-membus\"/>"
                      "<prop id=\"device\" value=\"cpu\"/><prop id=\"launch_latency\" value=\"0\"/>"
                      "<prop id=\"core_gather_bw\" value=\"5e9\"/><prop id=\"cache_line\" value=\"64\"/><prop id=\"llc_bytes\" value=\"1e6\"/>";
  const char *bad_divider = "<prop id=\"container\" value=\"B\"/><prop id=\"node\" value=\"m\"/><prop id=\"node_type\" "
                            "value=\"t\"/><prop id=\"membus\" value=\"m-membus\"/><prop id=\"core_bw\" value=\"5e9\"/>"
                            "<prop id=\"device\" value=\"cpu\"/><prop id=\"launch_latency\" value=\"0\"/>"
                            "<prop id=\"core_gather_bw\" value=\"5e9\"/><prop id=\"cache_line\" value=\"64\"/>"
                            "<prop id=\"llc_bytes\" value=\"1e6\"/><prop id=\"divider_rate\" value=\"fast\"/>";
  const char *bad_lanes = "<prop id=\"container\" value=\"B\"/><prop id=\"node\" value=\"m\"/><prop id=\"node_type\" "
                          "value=\"t\"/><prop id=\"membus\" value=\"m-membus\"/><prop id=\"core_bw\" value=\"5e9\"/>"
                          "<prop id=\"device\" value=\"cpu\"/><prop id=\"launch_latency\" value=\"0\"/>"
                          "<prop id=\"core_gather_bw\" value=\"5e9\"/><prop id=\"cache_line\" value=\"64\"/>"
                          "<prop id=\"llc_bytes\" value=\"1e6\"/><prop id=\"simd_lanes\" value=\"0.5\"/>";
  const struct { const char *name, *props, *xml, *hosts, *stress, *expect; } cases[] = {
    {"platform_host_missing", good_b, NULL, "\"m-a\", \"m-zz\"", NULL, "m-zz"},
    {"platform_divider_not_a_number", bad_divider, NULL, "\"m-a\", \"m-b\"", NULL, "divider_rate"},
    {"platform_lanes_below_one", bad_lanes, NULL, "\"m-a\", \"m-b\"", NULL, "simd_lanes"},
    {"platform_property_missing", no_bw, NULL, "\"m-a\", \"m-b\"", NULL, "core_bw"},
    {"platform_stress_host_missing", good_b, NULL, "\"m-a\"", "m-nowhere", "stress.[0].host"},
    /* SimGrid's own cause, with the file and the line (tests/scripts/check_cloud.py: more) */
    {"platform_malformed_xml", NULL, "<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\"><host id=", "\"m-a\"", NULL,
     "platform_malformed_xml.xml:1: not a valid SimGrid platform: Invalid XML"},
    {"platform_speed_fast", NULL, XML_HEAD "<host id=\"m-a\" speed=\"fast\"/>\n" XML_TAIL, "\"m-a\"", NULL,
     "platform_speed_fast.xml:4: not a valid SimGrid platform: cannot parse number:fast"},
    {"platform_unknown_router", NULL, XML_HEAD "<host id=\"m-a\" speed=\"1e9f\"/>\n<link id=\"l\" bandwidth=\"1GBps\" latency=\"1us\"/>\n"
     "<route src=\"m-a\" dst=\"nowhere\"><link_ctn id=\"l\"/></route>\n" XML_TAIL, "\"m-a\"", NULL,
     "platform_unknown_router.xml:6: not a valid SimGrid platform: Route dst='nowhere'"},
    {"platform_unknown_link", NULL, XML_HEAD "<host id=\"m-a\" speed=\"1e9f\"/>\n<host id=\"m-b\" speed=\"1e9f\"/>\n"
     "<route src=\"m-a\" dst=\"m-b\"><link_ctn id=\"nolink\"/></route>\n" XML_TAIL, "\"m-a\"", NULL,
     "platform_unknown_link.xml:6: not a valid SimGrid platform: Link not found: nolink"},
    {"platform_unclosed_tag", NULL, XML_HEAD "<host id=\"m-a\" speed=\"1e9f\">\n</zone></platform>\n", "\"m-a\"", NULL,
     "platform_unclosed_tag.xml:5: not a valid SimGrid platform: Invalid XML (XML input line 5, state 75): Unexpected end-tag `</zone>': `</host>' expected"},
    {"platform_file_missing", NULL, NULL, "\"m-a\"", NULL, "platform.file"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char xml_path[512], body[4096], out[4096], xml[4096];
    snprintf(xml_path, sizeof xml_path, "%s/%s.xml", dir, cases[i].name);
    if (cases[i].props || cases[i].xml) {
      FILE *f = fopen(xml_path, "w");
      CU_ASSERT_PTR_NOT_NULL_FATAL(f);
      if (cases[i].xml) fputs(cases[i].xml, f);
      else {
        snprintf(xml, sizeof xml, platform_fmt, cases[i].props);
        fputs(xml, f);
      }
      fclose(f);
    }
    char stress[256] = "";
    if (cases[i].stress)
      snprintf(stress, sizeof stress, "stress = ( { host = \"%s\"; kind = \"vm\"; bytes = 1e9; } );\n", cases[i].stress);
    int ranks = strchr(cases[i].hosts, ',') ? 2 : 1;
    snprintf(body, sizeof body, "name = \"t\";\nrun = { ranks = %d; };\nplatform = { file = \"%s\"; hosts = [%s]; };\n%s",
             ranks, xml_path, cases[i].hosts, stress);
    int rc = run_case(cases[i].name, body, NULL, out, sizeof out);
    if (rc != 2 || !strstr(out, cases[i].expect)) printf("\n  case %s: exit %d, output: %s", cases[i].name, rc, out);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, cases[i].expect));
  }
  /* a device server on a container the platform does not have */
  char body[1024], out[4096];
  snprintf(body, sizeof body, "%s%s", base, RUN1);
  int rc = run_case("platform_server_missing", body, "--set device.server=n9-nowhere", out, sizeof out);
  if (rc != 2 || !strstr(out, "device.server")) printf("\n  case platform_server_missing: exit %d, output: %s", rc, out);
  CU_ASSERT_EQUAL(rc, 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "key 'device.server': container \"n9-nowhere\""));
}
#endif

/* Host maps (native.hostmap). Native build: each bad map exits with 2 and names the map file and
 * the entry or container; a stress container sharing a rank container's cores is accepted with a
 * note. SMPI build: the key is accepted and ignored. */
#ifndef DEMSIM_SMPI
#define MAP_OK_C0 "{ container = \"c0\"; host = \"localhost\"; cores = \"0\"; }"
#define MAP_OK_S1 "{ container = \"s1\"; host = \"localhost\"; cores = \"0\"; }"

static const char *map_scenario =
  "name = \"t\";\nrun = { ranks = 2; };\nplatform = { hosts = [%s]; };\n"
  "stress = ( { host = \"s1\"; kind = \"vm\"; workers = 1; bytes = 64e6; } );\n"
  "native = { hostmap = \"%s.map\"; };\n";

/* Writes NAME.map and a scenario using it; runs demsim --dry-run on it. */
static int run_map_case(const char *name, const char *hosts, const char *entries, char *out, size_t outlen)
{
  char path[512], body[2048];
  snprintf(path, sizeof path, "%s/%s.map", dir, name);
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fprintf(f, "hostmap = ( %s );\n", entries);
  fclose(f);
  snprintf(body, sizeof body, map_scenario, hosts, name);
  return run_case(name, body, NULL, out, outlen);
}

static void test_bad_host_maps_exit_2(void)
{
  const char *two = "\"c0\", \"c1\"";
  const struct { const char *name, *hosts, *entries, *expect; } cases[] = {
    {"map_unknown_key", two, "{ container = \"c0\"; host = \"localhost\"; cores = \"0\"; colour = 1; }, "
     "{ container = \"c1\"; host = \"localhost\"; cores = \"1\"; }, " MAP_OK_S1, "entry 0 (container \"c0\"): unknown key 'colour'"},
    {"map_no_container", two, MAP_OK_C0 ", { host = \"localhost\"; cores = \"1\"; }, " MAP_OK_S1, "entry 1 (container \"\")"},
    {"map_empty_host", two, MAP_OK_C0 ", { container = \"c1\"; host = \"\"; cores = \"1\"; }, " MAP_OK_S1,
     "entry 1 (container \"c1\"): expected a non-empty string 'host'"},
    {"map_bad_cores", two, MAP_OK_C0 ", { container = \"c1\"; host = \"localhost\"; cores = \"1-\"; }, " MAP_OK_S1,
     "entry 1 (container \"c1\"): cores \"1-\""},
    {"map_duplicate", two, MAP_OK_C0 ", { container = \"c1\"; host = \"localhost\"; cores = \"1\"; }, " MAP_OK_C0,
     "entry 2 (container \"c0\"): duplicate container"},
    {"map_rank_container_missing", two, MAP_OK_C0 ", " MAP_OK_S1, "container \"c1\" runs rank 1"},
    {"map_stress_container_missing", two, MAP_OK_C0 ", { container = \"c1\"; host = \"localhost\"; cores = \"1\"; }",
     "container \"s1\" runs stress[0]"},
    {"map_unknown_host", two, MAP_OK_C0 ", { container = \"c1\"; host = \"no-such-host.invalid\"; cores = \"1\"; }, " MAP_OK_S1,
     "entry 1 (container \"c1\"): host \"no-such-host.invalid\": unknown host"},
    {"map_rank_cores_overlap", two, MAP_OK_C0 ", { container = \"c1\"; host = \"localhost\"; cores = \"0\"; }, " MAP_OK_S1,
     "entries 0 (container \"c0\", cores \"0\") and 1 (container \"c1\", cores \"0\")"},
    {"map_more_ranks_than_cores", "\"c0\", \"c0\"", MAP_OK_C0 ", " MAP_OK_S1, "entry 0 (container \"c0\"): 2 ranks run on it"},
    {"map_core_not_here", two, MAP_OK_C0 ", { container = \"c1\"; host = \"localhost\"; cores = \"999\"; }, " MAP_OK_S1,
     "entry 1 (container \"c1\"): cores \"999\": core 999 does not exist on this machine"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char out[4096], map[300];
    int rc = run_map_case(cases[i].name, cases[i].hosts, cases[i].entries, out, sizeof out);
    snprintf(map, sizeof map, "%s.map", cases[i].name);
    if (rc != 2 || !strstr(out, cases[i].expect) || !strstr(out, map))
      printf("\n  case %s: exit %d, output: %s", cases[i].name, rc, out);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, cases[i].expect));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, map));
  }
}

/* A stress neighbour on a rank container's core: accepted, with one note; the dry run prints the
 * placement. */
static void test_host_map_neighbour_noted(void)
{
  char out[8192];
  int rc = run_map_case("map_neighbour", "\"c0\", \"c1\"",
                        MAP_OK_C0 ", { container = \"c1\"; host = \"localhost\"; cores = \"1\"; }, " MAP_OK_S1, out,
                        sizeof out);
  if (rc != 0) printf("\n  neighbour case: exit %d, output: %s", rc, out);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "note:"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "container \"s1\" shares core 0 with container \"c0\""));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "rank 0=localhost slot=0"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "rank 1=localhost slot=1"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "taskset -c 0"));
}
#else
/* Under SMPI the modelled platform places the ranks: a host map, even a missing one, is ignored. */
static void test_host_map_ignored(void)
{
  char out[8192], body[2048];
  snprintf(body, sizeof body, "%s%snative = { hostmap = \"no-such.map\"; };\n", base, RUN1);
  int rc = run_case("map_ignored", body, NULL, out, sizeof out);
  if (rc != 0) printf("\n  ignored map: exit %d, output: %s", rc, out);
  CU_ASSERT_EQUAL(rc, 0);
}
#endif

static void test_missing_file_exits_2(void)
{
  char cmd[512], out[1024];
  snprintf(cmd, sizeof cmd, "%s run %s/does-not-exist.cfg 2>&1", demsim, dir);
  FILE *p = popen(cmd, "r");
  size_t n = fread(out, 1, sizeof out - 1, p);
  out[n] = '\0';
  int st = pclose(p);
  CU_ASSERT_EQUAL(WEXITSTATUS(st), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "does-not-exist.cfg"));
}

static void test_valid_input_passes(void)
{
  char out[4096];
  char body[1024];
  snprintf(body, sizeof body, "%s%s", base, RUN1);
  int rc = run_case("valid", body, NULL, out, sizeof out);
  if (rc != 0) printf("\n  valid case: exit %d, output: %s", rc, out);
  CU_ASSERT_EQUAL(rc, 0);
}

/* 1 when the effective configuration printed in out has `key = value` on one line */
__attribute__((unused)) static int config_has(const char *out, const char *key, const char *value)
{
  const char *k = strstr(out, key);
  if (!k) return 0;
  const char *eq = strchr(k, '=');
  const char *nl = strchr(k, '\n');
  if (!eq || (nl && eq > nl)) return 0;
  const char *v = strstr(eq, value);
  return v && (!nl || v < nl);
}

/* DEMSIM_DEVICE: a device spec sets device.* over the file (--set over it); a bad one exits 2
 * naming the variable. */
static void test_device_environment(void)
{
  char out[8192], body[1024];
  snprintf(body, sizeof body, "%s%s", base, RUN1);
  setenv("DEMSIM_DEVICE", "2:1", 1);
  int rc = run_case("device_env", body, NULL, out, sizeof out);
  CU_ASSERT_EQUAL(rc, 0);
#ifndef DEMSIM_SMPI /* the SMPI launcher's dry run prints the smpirun command, not the configuration */
  CU_ASSERT(config_has(out, "device.platform ", "2"));
  CU_ASSERT(config_has(out, "device.device ", "1"));
#endif
  setenv("DEMSIM_DEVICE", "gpu", 1);
  rc = run_case("device_env_set", body, "--set device.type=cpu", out, sizeof out);
  CU_ASSERT_EQUAL(rc, 0);
#ifndef DEMSIM_SMPI
  CU_ASSERT(config_has(out, "device.type ", "\"cpu\""));
#endif
  setenv("DEMSIM_DEVICE", "fast", 1);
  rc = run_case("device_env_bad", body, NULL, out, sizeof out);
  CU_ASSERT_EQUAL(rc, 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "DEMSIM_DEVICE"));
  unsetenv("DEMSIM_DEVICE");
}

static void test_help_lists_every_option(void)
{
  char cmd[512], out[8192];
  snprintf(cmd, sizeof cmd, "%s --help 2>&1", demsim);
  FILE *p = popen(cmd, "r");
  size_t n = fread(out, 1, sizeof out - 1, p);
  out[n] = '\0';
  CU_ASSERT_EQUAL(WEXITSTATUS(pclose(p)), 0);
  const char *opts[] = {"--out", "--particles", "--steps", "--policy", "--repartition-every", "--ranks", "--set",
                        "--backend", "--quiet", "--dry-run", "--attempt"};
  for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) CU_ASSERT_PTR_NOT_NULL(strstr(out, opts[i]));
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: test_bad_input PATH_TO_DEMSIM\n");
    return 2;
  }
  demsim = argv[1];
  snprintf(dir, sizeof dir, "/tmp/demsim-bad-input-XXXXXX");
  if (!mkdtemp(dir)) return 2;
  static CU_TestInfo tests[] = {
    {"each bad input exits with 2 and names the key", test_each_bad_input_exits_2},
    {"a missing scenario file exits with 2", test_missing_file_exits_2},
#ifdef DEMSIM_SMPI
    {"bad platforms exit with 2 and name the host or property", test_bad_platforms_exit_2},
    {"a host map is ignored under SMPI", test_host_map_ignored},
#else
    {"bad host maps exit with 2 and name the map and the entry", test_bad_host_maps_exit_2},
    {"a stress neighbour sharing a rank's cores is noted", test_host_map_neighbour_noted},
#endif
    {"the valid base scenario is accepted", test_valid_input_passes},
    {"--help lists every option", test_help_lists_every_option},
    {"DEMSIM_DEVICE picks the device; a bad value exits with 2", test_device_environment},
    CU_TEST_INFO_NULL};
  static CU_SuiteInfo suites[] = {{"bad input", NULL, NULL, NULL, NULL, tests}, CU_SUITE_INFO_NULL};
  CU_initialize_registry();
  CU_register_suites(suites);
  CU_basic_set_mode(CU_BRM_VERBOSE);
  CU_basic_run_tests();
  int failed = (int)CU_get_number_of_failures();
  CU_cleanup_registry();
  char rm[300];
  snprintf(rm, sizeof rm, "rm -rf %s", dir);
  if (system(rm)) {}
  return failed ? 1 : 0;
}
