/* demsim's version and the build (SMPI or native), as `demsim --version`, summary.json and
 * particles.h5 name them. */
#ifndef DEMSIM_BASE_VERSION_H
#define DEMSIM_BASE_VERSION_H

#define DEM_VERSION "0.1"
#ifdef DEMSIM_SMPI
#define DEM_BUILD "smpi"
#else
#define DEM_BUILD "native"
#endif

#endif
