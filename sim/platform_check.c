#define _GNU_SOURCE
#include "platform_check.h"

#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host.h"

static void child(const char *platform, const char (*hosts)[64], int n_hosts, const char *server,
                  const char (*stress)[64], int n_stress, int fd)
{
  char msg[1024] = "";
  int argc = 2;
  char *argv[] = {"demsim-platform-check", "--log=root.thres:critical", NULL};
  simgrid_init(&argc, argv);
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
  /* SimGrid stopped on the file itself: keep its first meaningful line */
  char *line = text;
  for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n"))
    if (strstr(l, "rror") || strstr(l, "arse") || strstr(l, "xml") || strstr(l, "XML")) {
      line = l;
      break;
    }
  snprintf(err, errlen, "%s: not a valid SimGrid platform: %.600s", platform, line[0] ? line : "SimGrid stopped");
  return -1;
}
