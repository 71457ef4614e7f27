/* demsim-pingpong: MPI message times between ranks 0 and 1, 8 B to 8 MiB, the same program on a
 * real or emulated network (native build) and on a simulated one (SMPI build: MPI_Wtime is
 * simulated time), so that the two compare size for size. Run it on a scenario's cloud with
 *
 *     demsim exec SCENARIO [--emulate] -- build/native/demsim-pingpong --out FILE.json
 *     demsim exec SCENARIO -- build/smpi/demsim-pingpong --out FILE.json      (SMPI build)
 *
 * Two patterns, each size in turn, the sizes interleaved over --rounds rounds (a slow second of
 * the host then spreads over every size):
 *   pingpong  rank 0 sends, rank 1 sends back; one-way time = round trip / 2;
 *   exchange  both ranks send and receive at once (MPI_Sendrecv), as the ghost exchange does:
 *             the time of one exchange, as rank 0 sees it.
 * FILE.json: {"rows": [{"pattern", "bytes", "reps", "median_s", "min_s", "max_s"}, ...]}, the
 * times over every repetition of every round. Ranks other than 0 and 1 wait at the end.
 * In the SMPI build it installs the DEM application's latency factor (sim/netfactor.h: the
 * platform's own lat_factor where it has one), so that both see the same network model.
 * Exit status: 0, 2 on bad arguments, 1 when the file cannot be written. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DEMSIM_NETFACTOR
#include "netfactor.h"
#endif

#define N_SIZES 21 /* 8 B << 0..20: 8 B to 8 MiB */
#define MAX_REPS 400

static int reps_for(long bytes)
{
  long r = 40000000L / (bytes + 20000L); /* about 0.1 s a round per size on 1 Gbit/s */
  return r < 3 ? 3 : (r > MAX_REPS ? MAX_REPS : (int)r);
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One repetition of a pattern between ranks 0 and 1, as rank me; rank 0's time. */
static double once(int exchange, int me, char *out, char *in, int bytes)
{
  int peer = 1 - me;
  double t0 = MPI_Wtime();
  if (exchange)
    MPI_Sendrecv(out, bytes, MPI_BYTE, peer, 7, in, bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  else if (me == 0) {
    MPI_Send(out, bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD);
    MPI_Recv(in, bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(in, bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(out, bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD);
  }
  double t = MPI_Wtime() - t0;
  return exchange ? t : 0.5 * t;
}

static int write_rows(const char *path, double *t[2][N_SIZES], int rounds)
{
  FILE *f = fopen(path, "w");
  if (!f) return 1;
  fprintf(f, "{\"program\": \"demsim-pingpong\", \"rounds\": %d, \"rows\": [", rounds);
  const char *names[2] = {"pingpong", "exchange"};
  for (int p = 0, first = 1; p < 2; p++)
    for (int s = 0; s < N_SIZES; s++, first = 0) {
      long bytes = 8L << s;
      int n = reps_for(bytes) * rounds;
      qsort(t[p][s], (size_t)n, sizeof(double), cmp_double);
      double med = n % 2 ? t[p][s][n / 2] : 0.5 * (t[p][s][n / 2 - 1] + t[p][s][n / 2]);
      fprintf(f, "%s\n  {\"pattern\": \"%s\", \"bytes\": %ld, \"reps\": %d, \"median_s\": %.9g, \"min_s\": %.9g, "
              "\"max_s\": %.9g}", first ? "" : ",", names[p], bytes, n, med, t[p][s][0], t[p][s][n - 1]);
    }
  fprintf(f, "\n]}\n");
  return fclose(f) ? 1 : 0;
}

static int usage(int me, const char *msg)
{
  if (me == 0)
    fprintf(stderr, "demsim-pingpong: %s\nusage: demsim-pingpong --out FILE.json [--rounds R (default 3)]\n", msg);
  return 2;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
#ifdef DEMSIM_NETFACTOR
  char err[256];
  if (sim_netfactor_install(err, sizeof err)) {
    fprintf(stderr, "demsim-pingpong: %s\n", err);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
#endif
  int me = 0, size = 0, rounds = 3, rc = 0;
  const char *out = NULL;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) out = argv[++i];
    else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc && (rounds = atoi(argv[++i])) > 0) continue;
    else rc = usage(me, "unknown or incomplete argument");
  }
  if (!rc && !out) rc = usage(me, "--out FILE.json is needed");
  if (!rc && size < 2) rc = usage(me, "needs at least 2 ranks (run.ranks = 2)");
  double *t[2][N_SIZES];
  char *a = malloc(8L << (N_SIZES - 1)), *b = malloc(8L << (N_SIZES - 1));
  for (int p = 0; p < 2; p++)
    for (int s = 0; s < N_SIZES; s++) t[p][s] = malloc(sizeof(double) * (size_t)(reps_for(8L << s) * rounds));
  if (!rc && (!a || !b)) rc = 1;
  if (!rc && me < 2) {
    memset(a, 1, 8L << (N_SIZES - 1));
    memset(b, 0, 8L << (N_SIZES - 1));
    for (int r = 0; r < rounds; r++)
      for (int p = 0; p < 2; p++)
        for (int s = 0; s < N_SIZES; s++) {
          int reps = reps_for(8L << s);
          once(p, me, a, b, (int)(8L << s)); /* warm: connection, buffers */
          for (int i = 0; i < reps; i++) t[p][s][r * reps + i] = once(p, me, a, b, (int)(8L << s));
        }
    if (me == 0 && write_rows(out, t, rounds)) {
      fprintf(stderr, "demsim-pingpong: cannot write %s\n", out);
      rc = 1;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}
