/* Error messages of the solver: every fallible call writes what went wrong into a caller's
 * buffer and returns -1, so that the caller decides how to report and exit. */
#ifndef DEMSIM_BASE_ERROR_H
#define DEMSIM_BASE_ERROR_H

#include <stddef.h>

/* Formats the message into err (when err is not NULL) and returns -1. */
int dem_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
