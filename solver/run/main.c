/* demsim: the DEM application. Prolog (arguments, scenario, MPI, set-up), the time loop,
 * epilog (outputs). In the SMPI build this is the program smpirun runs on every rank (the
 * `demsim` launcher starts it); in the native build it is `demsim` itself. */
#include <stdio.h>
#include <stdlib.h>

#include "run/cli.h"
#include "run/launcher.h"
#include "base/parallel.h"
#include "run/probe.h"
#include "device/remote.h"
#include "device/server.h"
#include "scenario/scenario.h"
#include "run/simulation.h"

/* The device-server process (device.server): serves the ranks' kernels until they are done. */
static int serve_devices(const dem_scenario_t *sc)
{
  char err[1024];
  if (dem_device_server_run(sc, err, sizeof err)) {
    fprintf(stderr, "demsim: %s\n", err);
    fflush(stderr);
    dem_parallel_abort(1);
  }
  dem_parallel_finalize();
  return 0;
}

int main(int argc, char **argv)
{
  static dem_cli_t cli;
  static dem_scenario_t sc;
  static dem_sim_t sim;
  char err[2048];
  /* input is validated before MPI starts, identically on every rank: bad input exits with 2 */
  if (dem_cli_parse(argc, argv, &cli, err, sizeof err)) {
    fprintf(stderr, "demsim: %s\n", err);
    return 2;
  }
  if (cli.command == DEM_CMD_HELP) dem_cli_print_help(stdout);
  if (cli.command == DEM_CMD_KEYS) dem_scenario_print_keys(stdout);
  if (cli.command == DEM_CMD_VERSION) printf("demsim 0.1\n");
  if (cli.command == DEM_CMD_PROBE) {
#ifdef DEMSIM_SMPI
    fprintf(stderr, "demsim: %s\n", DEM_PROBE_NATIVE_ONLY);
    return 2;
#else
    return dem_probe_main(argc, argv, &cli);
#endif
  }
  if (cli.command != DEM_CMD_RUN) return 0;
  if (dem_cli_load_scenario(&cli, &sc, err, sizeof err)) {
    fprintf(stderr, "demsim: %s\n", err);
    return 2;
  }
  if (cli.dry_run) {
    printf("demsim: %s is valid; effective configuration:\n", sc.file);
    dem_scenario_print(&sc, stdout);
#ifndef DEMSIM_SMPI
    if (sc.hostmap[0]) return dem_launch(argc, argv, &sc, &cli); /* checks the map, prints the placement */
#endif
    return 0;
  }
#ifndef DEMSIM_SMPI
  if (!dem_launch_in_process(&sc)) return dem_launch(argc, argv, &sc, &cli);
#endif

  dem_parallel_init(&argc, &argv);
  if (sc.server[0] && dem_parallel_split_servers(sc.ranks)) return serve_devices(&sc);
  int rc = dem_simulation_setup(&sim, &sc, &cli, err, sizeof err);
  if (rc == 0) rc = dem_simulation_run(&sim, err, sizeof err);
  if (rc == 0) rc = dem_simulation_finish(&sim, err, sizeof err);
  if (rc == DEM_SIM_BAD_INPUT) {
    if (dem_parallel_rank() == 0) fprintf(stderr, "demsim: %s\n", err);
    dem_simulation_destroy(&sim);
    dem_remote_release(&sc);
    dem_parallel_finalize();
    return 2;
  }
  if (rc == DEM_SIM_HOST_FAILED) {
    /* a container was lost: the launcher restarts from the last checkpoint (failure.h) */
    if (dem_parallel_rank() == 0) fprintf(stderr, "demsim: a container was lost (failure.*); %s/failures.txt has it\n",
                                          sc.out_dir);
    dem_simulation_destroy(&sim);
    dem_parallel_finalize();
    return DEM_EXIT_HOST_LOST;
  }
  if (rc == DEM_SIM_FAILED_ALL) {
    /* every rank stopped together: report once, end MPI cleanly */
    if (dem_parallel_rank() == 0) fprintf(stderr, "demsim: %s\n", err);
    dem_simulation_destroy(&sim);
    dem_remote_release(&sc);
    dem_parallel_finalize();
    return 1;
  }
  if (rc) {
    fprintf(stderr, "demsim: rank %d: %s\n", dem_parallel_rank(), err);
    fflush(stderr);
    dem_parallel_abort(1);
  }
  dem_simulation_destroy(&sim);
  dem_remote_release(&sc);
  dem_parallel_finalize();
  return 0;
}
