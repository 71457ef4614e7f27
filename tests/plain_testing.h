/* Shared helpers of the plain (non-MPI) test programs that drive the real `demsim` binary:
 * a scratch directory, running a command and capturing its output, and the CUnit main. */
#ifndef DEMSIM_TESTS_PLAIN_TESTING_H
#define DEMSIM_TESTS_PLAIN_TESTING_H

#include <CUnit/Basic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs a shell command, stores its combined output in out, returns its exit status (-1 when
 * it did not exit normally). */
static inline int dem_plain_run(const char *cmd, char *out, size_t len)
{
  FILE *p = popen(cmd, "r");
  if (!p) return -1;
  size_t n = fread(out, 1, len - 1, p);
  out[n] = '\0';
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Creates /tmp/demsim-NAME-XXXXXX in dir (len >= 64). 0 or -1. */
static inline int dem_plain_tmpdir(char *dir, size_t len, const char *name)
{
  snprintf(dir, len, "/tmp/demsim-%s-XXXXXX", name);
  return mkdtemp(dir) ? 0 : -1;
}

static inline int dem_plain_rmdir(const char *dir)
{
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* Creates the scratch directory /tmp/demsim-NAME-XXXXXX in dir (len >= 64) and writes the
 * scenario fmt (printf-style, with its arguments) to dir/s.cfg, whose path goes to cfg. 0 or -1. */
static inline int dem_plain_scenario(char *dir, size_t dirlen, char *cfg, size_t cfglen, const char *name,
                                     const char *fmt, ...)
{
  if (dem_plain_tmpdir(dir, dirlen, name)) return -1;
  snprintf(cfg, cfglen, "%s/s.cfg", dir);
  FILE *f = fopen(cfg, "w");
  if (!f) return -1;
  va_list ap;
  va_start(ap, fmt);
  int ok = vfprintf(f, fmt, ap) >= 0;
  va_end(ap);
  return fclose(f) == 0 && ok ? 0 : -1;
}

/* The source tree (scenarios, platforms): from the environment CTest sets, else the build's. */
static inline const char *dem_plain_source_dir(void)
{
  const char *s = getenv("DEMSIM_SOURCE_DIR");
  return s ? s : DEMSIM_SOURCE_DIR;
}

/* Runs the suites verbosely; exit status 1 when a test or a suite set-up failed. */
static inline int dem_plain_main(CU_SuiteInfo *suites)
{
  if (CU_initialize_registry() != CUE_SUCCESS || CU_register_suites(suites) != CUE_SUCCESS) return 2;
  CU_basic_set_mode(CU_BRM_VERBOSE);
  CU_basic_run_tests();
  int failed = (int)(CU_get_number_of_failures() + CU_get_number_of_suites_failed());
  CU_cleanup_registry();
  return failed ? 1 : 0;
}

#endif
