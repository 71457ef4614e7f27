/* Small file-system helpers shared by the launcher, the run and the probe. */
#ifndef DEMSIM_BASE_FILES_H
#define DEMSIM_BASE_FILES_H

#include <stddef.h>

/* Creates path and every missing folder above it (mkdir -p). 0, or -1 with errno set (ENAMETOOLONG
 * for a path longer than PATH_MAX). */
int dem_files_make_dirs(const char *path);

/* Removes path and everything under it (rm -rf; links are removed, not followed). 0, or -1 with
 * errno set by the first entry that could not be removed; a path that does not exist is 0. */
int dem_files_remove_tree(const char *path);

/* A temporary folder of its own for the programs started next (mpirun, smpirun): DIR =
 * $TMPDIR (or /tmp)/PREFIX-XXXXXX, made and set as TMPDIR, the old value kept in saved ("" when
 * unset). Open MPI keeps its session under $TMPDIR/ompi.HOST.UID, shared by every mpirun of the
 * user: one that ends removes it while another, starting, creates its own below it, and the
 * second fails ("unable to create the desired directory ... File exists"); SMPI copies its
 * privatised libraries there under fixed names. 0, or -1 with errno set (nothing changed). */
int dem_files_tmpdir_push(const char *prefix, char *dir, size_t len, char *saved, size_t saved_len);

/* Puts TMPDIR back to saved and removes dir with what the programs left in it. 0, or -1 with errno
 * set by the removal. */
int dem_files_tmpdir_pop(const char *dir, const char *saved);

#endif
