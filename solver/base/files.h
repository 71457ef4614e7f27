/* Small file-system helpers shared by the launcher, the run and the probe. */
#ifndef DEMSIM_BASE_FILES_H
#define DEMSIM_BASE_FILES_H

/* Creates path and every missing folder above it (mkdir -p). 0, or -1 with errno set (ENAMETOOLONG
 * for a path longer than PATH_MAX). */
int dem_files_make_dirs(const char *path);

/* Removes path and everything under it (rm -rf; links are removed, not followed). 0, or -1 with
 * errno set by the first entry that could not be removed; a path that does not exist is 0. */
int dem_files_remove_tree(const char *path);

#endif
