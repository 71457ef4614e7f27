/* Remote offload (device.server): a rank without a device of its own runs its kernels on the
 * device of another node, through a device-server process, over MPI.
 *
 * MPI_COMM_WORLD is split (dem_parallel_split_servers): the first run.ranks processes are the
 * application, the last one is the device server, placed on the container device.server names.
 * Each application rank keeps the authority over its particles (the host store, as with a
 * local GPU); the server (server.h) keeps, per client, a mirror store and a real engine (engine.h:
 * OpenCL or the reference) that plays the client's device. The engine's interface is the
 * protocol: allocate (create, resize), copy to and from the device (push, pull), run a kernel
 * (kick-drift, kick, search, forces, boundaries, external), wait (finish), stop. Every command
 * is one message (its header, then the rows it carries). A command whose result the host needs
 * is answered by one message (status, the work the kernel reported, the search's slot stride,
 * then the rows a pull asked for): a remote procedure call, so the client waits for the
 * network and the remote device like a host waits for a GPU. Push, forces and boundaries are
 * not answered (the forces only run at external, as on a local device); a failure of one of
 * them comes back with the next answer.
 *
 * Time: under SMPI the server's engine charges its kernels and copies to the server's
 * container (its GPU model, its PCIe link), and the messages cross the modelled network, so a
 * rank's step costs the round trips, the transfers of ghost and migrated rows over the LAN,
 * and the remote device's time, shared among the clients in the order their commands arrive.
 * Natively the same code runs between real processes. */
#ifndef DEMSIM_DEVICE_REMOTE_H
#define DEMSIM_DEVICE_REMOTE_H

#include <stddef.h>

#include "device/backend.h"

struct dem_params;
struct dem_particles;
struct dem_scenario;

typedef struct dem_remote dem_remote_t;

/* The client, called by engine.c for a DEM_BACKEND_REMOTE engine; each mirrors the engine
 * call of the same name. 0, or -1 with the message in err (dem_remote_error). */
dem_remote_t *dem_remote_create(const struct dem_params *prm, struct dem_particles *p, char *err, size_t errlen);
void dem_remote_destroy(dem_remote_t **r);
const char *dem_remote_error(const dem_remote_t *r);
const char *dem_remote_device_name(const dem_remote_t *r);
int dem_remote_compute_units(const dem_remote_t *r);
dem_engine_work_t dem_remote_last_work(const dem_remote_t *r);
int dem_remote_copy(dem_remote_t *r, int to_host, unsigned fields, size_t first, size_t count);
int dem_remote_resize(dem_remote_t *r);
int dem_remote_kick_drift(dem_remote_t *r, double kick);
int dem_remote_kick(dem_remote_t *r);
/* 1 when a search is due, 0 when not, -1 on failure */
int dem_remote_needs_search(dem_remote_t *r);
int dem_remote_search(dem_remote_t *r);
int dem_remote_forces(dem_remote_t *r);
int dem_remote_boundaries(dem_remote_t *r);
int dem_remote_external(dem_remote_t *r);
int dem_remote_finish(dem_remote_t *r);

/* An application rank that never created a remote engine (a run that stopped before) still
 * tells the server it is done, so that the server ends. Does nothing without device.server or
 * when this rank's engine said so already. */
void dem_remote_release(const struct dem_scenario *sc);


#endif
