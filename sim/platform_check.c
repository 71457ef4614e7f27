#define _GNU_SOURCE
#include "platform_check.h"

#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host.h"

static void child(const char *platform, const char (*hosts)[64], int n_hosts, const char *server,
                  const char (*stress)[64], int n_stress, int fd)
{
  char msg[1024] = "";
  /* SimGrid's own error (a parse error with its file and line, an exception's text) reaches the
   * parent through stderr, one message a line, without the logging's decorations */
  int argc = 4;
  char *argv[] = {"demsim-platform-check", "--log=root.thres:critical", "--log=xbt_exception.thres:error",
                  "--log=xbt_exception.fmt:%m%n", NULL};
  simgrid_init(&argc, argv);
  smpi_init_options(); /* a platform's <config> may set SMPI's own options (smpi/os, smpi/or) */
  simgrid_load_platform(platform);
  int rc = 0;
  for (int i = 0; i < n_hosts + (server ? 1 : 0) && rc == 0; i++) {
    sim_host_t h;
    char e[512];
    const char *name = i < n_hosts ? hosts[i] : server, *key = i < n_hosts ? "platform.hosts" : "device.server";
    if (!sg_host_by_name(name)) {
      snprintf(msg, sizeof msg, "key '%s': container \"%s\" is not a host of %s", key, name, platform);
      rc = 1;
    } else if (sim_host_read(&h, name, e, sizeof e)) {
      snprintf(msg, sizeof msg, "%s: %s", platform, e);
      rc = 1;
    }
  }
  for (int i = 0; i < n_stress && rc == 0; i++) {
    sim_host_t h;
    char e[512];
    if (!sg_host_by_name(stress[i])) {
      snprintf(msg, sizeof msg, "key 'stress.[%d].host': container \"%s\" is not a host of %s", i, stress[i], platform);
      rc = 1;
    } else if (sim_host_read(&h, stress[i], e, sizeof e)) {
      snprintf(msg, sizeof msg, "%s: %s", platform, e);
      rc = 1;
    }
  }
  if (write(fd, msg, strlen(msg)) < 0) rc = 1;
  _exit(rc);
}

/* The line of the platform file where "name" first appears as an attribute value, or 0. */
static int line_naming(const char *platform, const char *name)
{
  FILE *f = fopen(platform, "r");
  if (!f) return 0;
  char quoted[160], buf[4096];
  snprintf(quoted, sizeof quoted, "\"%s\"", name);
  int line = 0, found = 0;
  while (!found && fgets(buf, sizeof buf, f)) {
    line++;
    found = strstr(buf, quoted) != NULL;
  }
  fclose(f);
  return found ? line : 0;
}

/* The message of a platform SimGrid stopped on, from what the child printed: SimGrid's parse
 * error ("Parse error at FILE:LINE: WHAT", its continuation line cut short) or its exception's
 * text ("Uncaught exception TYPE: WHAT"; the line is the file's first naming what SimGrid did not
 * find, where it says "not found: NAME"). */
static void simgrid_error(const char *platform, char *text, char *err, size_t errlen)
{
  char *parse = strstr(text, "Parse error at "), *uncaught = strstr(text, "Uncaught exception ");
  int line = 0;
  const char *what = "SimGrid stopped without a message";
  char more[240] = "";
  if (parse) {
    char *colon = strchr(parse + 15, '\n');
    if (colon) *colon = '\0';
    char *p = strstr(parse, ": ");  /* FILE:LINE: WHAT; FILE may hold ':' but not ": " */
    if (p) {
      char *q = p;
      while (q > parse + 15 && q[-1] >= '0' && q[-1] <= '9') q--;
      line = atoi(q);
      what = p + 2;
    }
    if (colon && colon[1] && strncmp(colon + 1, "Exiting now", 11) != 0) {
      char *end = strchr(colon + 1, '\n');
      if (end) *end = '\0';
      snprintf(more, sizeof more, " %.200s%s", colon + 1, strlen(colon + 1) > 200 ? "..." : "");
    }
  } else if (uncaught) {
    char *end = strchr(uncaught, '\n');
    if (end) *end = '\0';
    char *p = strstr(uncaught + 19, ": ");
    what = p ? p + 2 : uncaught + 19;
    const char *nf = strstr(what, "not found: ");
    if (nf) line = line_naming(platform, nf + 11);
  }
  if (line > 0)
    snprintf(err, errlen, "%s:%d: not a valid SimGrid platform: %.600s%s", platform, line, what, more);
  else
    snprintf(err, errlen, "%s: not a valid SimGrid platform: %.600s%s", platform, what, more);
}

int sim_platform_check(const char *platform, const char (*hosts)[64], int n_hosts, const char *server,
                       const char (*stress)[64], int n_stress, char *err, size_t errlen)
{
  int out[2], diag[2];
  if (pipe(out) || pipe(diag)) {
    snprintf(err, errlen, "cannot check the platform (pipe)");
    return -1;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(out[0]);
    close(diag[0]);
    dup2(diag[1], 1);
    dup2(diag[1], 2);
    child(platform, hosts, n_hosts, server, stress, n_stress, out[1]);
  }
  close(out[1]);
  close(diag[1]);
  char msg[1024] = "", text[4096] = "";
  ssize_t n = read(out[0], msg, sizeof msg - 1);
  msg[n > 0 ? n : 0] = '\0';
  size_t got = 0;
  while (got < sizeof text - 1 && (n = read(diag[0], text + got, sizeof text - 1 - got)) > 0) got += (size_t)n;
  text[got] = '\0';
  close(out[0]);
  close(diag[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
  if (msg[0]) {
    snprintf(err, errlen, "%s", msg);
    return -1;
  }
  simgrid_error(platform, text, err, errlen);
  return -1;
}
