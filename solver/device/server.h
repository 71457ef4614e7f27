/* The device server of remote offload (device.server; the protocol in remote.h and wire.h): the
 * last process of MPI_COMM_WORLD, placed on the container that holds the device, plays every
 * application rank's device with a real engine. */
#ifndef DEMSIM_DEVICE_SERVER_H
#define DEMSIM_DEVICE_SERVER_H

#include <stddef.h>

struct dem_scenario;

/* Serves every application rank until each has sent stop. 0, or -1 with a
 * message (the caller aborts the run: the clients would wait for ever). */
int dem_device_server_run(const struct dem_scenario *sc, char *err, size_t errlen);

#endif
