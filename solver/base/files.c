#define _XOPEN_SOURCE 700 /* nftw */
#include "base/files.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int dem_files_make_dirs(const char *path)
{
  char tmp[PATH_MAX];
  if (strlen(path) >= sizeof tmp) {
    errno = ENAMETOOLONG;
    return -1;
  }
  snprintf(tmp, sizeof tmp, "%s", path);
  for (char *p = tmp + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      if (mkdir(tmp, 0777) && errno != EEXIST) return -1;
      *p = '/';
    }
  return (mkdir(tmp, 0777) && errno != EEXIST) ? -1 : 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  (void)st, (void)flag, (void)ftw;
  return remove(path) && errno != ENOENT ? -1 : 0;
}

int dem_files_remove_tree(const char *path)
{
  struct stat st;
  if (lstat(path, &st)) return errno == ENOENT ? 0 : -1;
  return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int dem_files_tmpdir_push(const char *prefix, char *dir, size_t len, char *saved, size_t saved_len)
{
  const char *base = getenv("TMPDIR");
  snprintf(saved, saved_len, "%s", base ? base : "");
  if ((size_t)snprintf(dir, len, "%s/%s-XXXXXX", base && *base ? base : "/tmp", prefix) >= len) {
    errno = ENAMETOOLONG;
    return -1;
  }
  if (!mkdtemp(dir)) return -1;
  setenv("TMPDIR", dir, 1);
  return 0;
}

int dem_files_tmpdir_pop(const char *dir, const char *saved)
{
  if (saved[0])
    setenv("TMPDIR", saved, 1);
  else
    unsetenv("TMPDIR");
  return dem_files_remove_tree(dir);
}
