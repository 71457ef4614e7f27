#include "base/files.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
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
