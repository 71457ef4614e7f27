/* Starting a run: `demsim run` writes the hostfile and runs `smpirun` (SMPI build) or
 * `mpirun` (native build, P > 1) on the MPI application, so a user never writes a hostfile
 * or an MPI command line. */
#ifndef DEMSIM_RUN_LAUNCHER_H
#define DEMSIM_RUN_LAUNCHER_H

struct dem_scenario;
struct dem_cli;

/* True when this process should run the simulation itself (native build: one rank, or
 * already started by mpirun). */
int dem_launch_in_process(const struct dem_scenario *s);
/* Builds the command line, starts it (and the native build's real stress-ng processes),
 * waits, and returns the exit status to give back (0, 1 or 2). */
int dem_launch(int argc, char **argv, const struct dem_scenario *s, const struct dem_cli *cli);

/* `demsim exec`: the MPI program cli->program on the scenario's cloud (launcher.c); the exit status. */
int dem_launch_program(const struct dem_scenario *s, const struct dem_cli *cli);

#endif
