/* Reading the hardware from the platform (platforms/test-sim.xml), and the cost model's
 * arithmetic. One rank, on c-2. */
#include "membus.h"
#include "sim_testing.h"
#include "testing.h"

static void test_reads_container(void)
{
  char err[256] = "";
  CU_ASSERT_EQUAL_FATAL(dem_clock_init(err, sizeof err), 0);
  CU_ASSERT_STRING_EQUAL(dem_clock_host(), "c-2");
  CU_ASSERT_STRING_EQUAL(dem_clock_where(), "c-2 (T-2 on node c, test, 2 cores, cpu)");
  sim_host_t h = sim_test_self();
  CU_ASSERT_EQUAL(h.cores, 2);
  CU_ASSERT_STRING_EQUAL(h.membus, "c-membus");
  CU_ASSERT_DOUBLE_EQUAL(h.node_bw, 10e9, 1.0);
  CU_ASSERT_DOUBLE_EQUAL(h.core_bw, 4e9, 1.0);
  CU_ASSERT_DOUBLE_EQUAL(sim_host_kernel_bw(&h), 8e9, 1.0);
}

/* A host that is not a container, or a malformed figure: the error names the host and the
 * property. */
static void test_missing_property_is_named(void)
{
  sim_host_t h;
  char err[256] = "";
  CU_ASSERT_EQUAL(sim_host_read(&h, "c-membus", err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "'c-membus'"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "missing property 'container'"));
  CU_ASSERT_EQUAL(sim_host_read(&h, "no-such-host", err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "no-such-host"));
  CU_ASSERT_EQUAL(sim_host_read(&h, "x-bad", err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "'x-bad'"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "'core_bw' = '10GBps': expected a positive number"));
  dem_stress_t s = {.host = "c-membus", .vm = 1, .workers = 1, .bytes = 1e9};
  CU_ASSERT_EQUAL(dem_clock_start_stress(&s, 1, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "c-membus"));
}

/* The cost model is linear in its counts, rejects nonsense, and charges partitioning per
 * particle share and bisection level. */
static void test_cost_model(void)
{
  sim_cost_t a, b, c;
  dem_work_t w = {.kind = DEM_WORK_FORCES, .particles = 10, .pairs = 120, .contacts = 60};
  CU_ASSERT_EQUAL_FATAL(sim_cost_of(&w, &a), 0);
  w.particles *= 2, w.pairs *= 2, w.contacts *= 2;
  CU_ASSERT_EQUAL_FATAL(sim_cost_of(&w, &b), 0);
  CU_ASSERT_DOUBLE_EQUAL(b.flops, 2 * a.flops, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(b.bytes, 2 * a.bytes, 1e-9);
  CU_ASSERT_EQUAL(a.place, SIM_ON_DEVICE);
  CU_ASSERT(a.flops > 0 && a.bytes > 0);

  dem_work_t p = {.kind = DEM_WORK_PARTITION, .particles = 8e5, .ranks = 8};
  dem_work_t q = {.kind = DEM_WORK_PARTITION, .particles = 1e5, .ranks = 1};
  CU_ASSERT_EQUAL_FATAL(sim_cost_of(&p, &b), 0);
  CU_ASSERT_EQUAL_FATAL(sim_cost_of(&q, &c), 0);
  CU_ASSERT_DOUBLE_EQUAL(b.flops, 4 * c.flops, 1e-6); /* same share, 3 levels + 1 vs 0 + 1 */
  CU_ASSERT_EQUAL(b.place, SIM_ON_HOST);
  CU_ASSERT_DOUBLE_EQUAL(b.fresh, c.fresh, 1e-6);      /* Zoltan's scratch: once a call, the share's */
  CU_ASSERT(c.fresh > 0.0);
  CU_ASSERT_DOUBLE_EQUAL(b.levels, 1e5 * 4, 1e-6); /* the share x (3 levels + 1) */
  CU_ASSERT_DOUBLE_EQUAL(c.levels, 1e5, 1e-6);
  /* charged on c-2, whose Zoltan was measured (partition_rate 1e7 particle-levels/s): the whole
   * call at that rate, 1e5 / 1e7 = 10 ms, nothing on top (its scratch's faults are in the rate) */
  sim_host_t h = sim_test_self();
  CU_ASSERT_DOUBLE_EQUAL_FATAL(h.partition_rate, 1e7, 1e-3);
  SIM_ASSERT_CLOSE(sim_test_charge(&q), 1e-2, 1e-9);
  SIM_ASSERT_CLOSE(sim_test_charge(&p), 4e-2, 1e-9);

  dem_work_t neg = {.kind = DEM_WORK_PACK, .bytes = -1};
  CU_ASSERT_EQUAL(sim_cost_of(&neg, &a), -1);
  dem_work_t nokind = {.kind = DEM_WORK_KIND_COUNT};
  CU_ASSERT_EQUAL(sim_cost_of(&nokind, &a), -1);
  CU_ASSERT_EQUAL(dem_clock_charge(&nokind), -1);
}

/* The fused pair pass reads and writes each particle's own data once: by hand from
 * sim/cost.c, 10 particles, 120 particle slots of which 60 in contact: FORCES_ALL = 132 x 10 +
 * 60 x 120 + 72 x 60 = 12,840 B, the same as FORCES alone, while FORCES and EXTERNAL apart also
 * move EXTERNAL's 56 x 10. Flops: 12 x 10 + 11 x 120 + 150 x 60 = 10,440 (FORCES 3 per particle
 * + EXTERNAL 9). The wall pass (BOUNDARIES) is charged per particle of the wall list: 3 listed
 * particles with 4 wall slots, 2 in contact: 112 x 3 + 36 x 4 + 72 x 2 = 624 B, 2 x 4 + 120 x 2
 * = 248 flops, nothing for the particles away from the walls. */
static void test_fused_forces(void)
{
  sim_cost_t all, f, b, x, w;
  dem_work_t fused = {.kind = DEM_WORK_FORCES_ALL, .particles = 10, .pairs = 120, .contacts = 60};
  dem_work_t forces = {.kind = DEM_WORK_FORCES, .particles = 10, .pairs = 120, .contacts = 60};
  dem_work_t walls = {.kind = DEM_WORK_BOUNDARIES, .particles = 3, .pairs = 4, .contacts = 2};
  dem_work_t ext = {.kind = DEM_WORK_EXTERNAL, .particles = 10};
  CU_ASSERT_EQUAL_FATAL(sim_cost_of(&fused, &all), 0);
  CU_ASSERT_EQUAL_FATAL(sim_cost_of(&forces, &f), 0);
  CU_ASSERT_EQUAL_FATAL(sim_cost_of(&walls, &b), 0);
  CU_ASSERT_EQUAL_FATAL(sim_cost_of(&ext, &x), 0);
  CU_ASSERT_DOUBLE_EQUAL(all.bytes, 12840.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(all.flops, 10440.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(f.bytes + x.bytes - all.bytes, 56.0 * 10, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(f.flops + x.flops, all.flops, 1e-9);
  CU_ASSERT_EQUAL(all.place, SIM_ON_DEVICE);
  CU_ASSERT_DOUBLE_EQUAL(b.bytes, 624.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(b.flops, 248.0, 1e-9);
  CU_ASSERT_EQUAL(b.place, SIM_ON_DEVICE);
  walls.particles = 0, walls.pairs = 0, walls.contacts = 0;
  CU_ASSERT_EQUAL_FATAL(sim_cost_of(&walls, &w), 0);
  CU_ASSERT_DOUBLE_EQUAL(w.bytes + w.flops, 0.0, 1e-12);
  walls.pairs = -1;
  CU_ASSERT_EQUAL(sim_cost_of(&walls, &w), -1);
}

/* Traffic as the hardware moves it (sim_cost_cpu_traffic), by hand from sim/cost.c for the
 * fused force kernel over 10 particles, 120 slots, 60 contacts: 12,840 B issued, of which the
 * partners' pos and radius (32 B per slot) and vel and omega (48 B per contact) are gathered:
 * 6,720 B in 360 data; force and torque are stored without a load (48 B per particle, read
 * first by write-allocate). In the cache (a small rank) the gathers cost nothing: 12,840 -
 * 6,720 + 480 = 6,600 B. The reuse window of n particles is 2 n^(2/3) x 80 B: 1,000
 * particles give 16,000 B, so with 4,000 B of cache 3/4 of the gathers miss, each a line:
 * 6,600 + 0.75 x 360 x 64 = 23,880 B, and with missed lines weighing 2 streamed ones, 41,160. */
static void test_traffic(void)
{
  sim_cost_t c;
  dem_work_t w = {.kind = DEM_WORK_FORCES_ALL, .particles = 10, .pairs = 120, .contacts = 60};
  CU_ASSERT_EQUAL_FATAL(sim_cost_of(&w, &c), 0);
  CU_ASSERT_DOUBLE_EQUAL(c.gathered, 6720.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(c.gathers, 360.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(c.rfo, 480.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(sim_cost_cpu_traffic(&c, 64.0, 1e6, 1.0), 6600.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(sim_cost_reuse_window(1000.0), 16000.0, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(sim_cost_miss_fraction(1000.0, 4000.0), 0.75, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(sim_cost_miss_fraction(1000.0, 16000.0), 0.0, 1e-12);
  c.window = sim_cost_reuse_window(1000.0);
  CU_ASSERT_DOUBLE_EQUAL(sim_cost_cpu_traffic(&c, 64.0, 4000.0, 1.0), 23880.0, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(sim_cost_cpu_traffic(&c, 64.0, 4000.0, 2.0), 41160.0, 1e-6);
  /* The wall pass reaches every datum of its 3 listed particles through the list: 108 B in 4
   * lines each, 36 B in 3 per wall slot (4), 72 B in 2 per wall contact (2): 612 of its 624 B in
   * 28 lines; the rest (the list, 4 B a particle) streams. Its window is the rank's particles
   * (reach, 1,000) x the pair pass's 132 B each: 132,000 B, so with 33,000 B of cache 3/4 of the
   * lines miss: 12 + 0.75 x 28 x 64 = 1,356 B; without the reach (3 particles' reuse window) none. */
  dem_work_t wp = {.kind = DEM_WORK_BOUNDARIES, .particles = 3, .pairs = 4, .contacts = 2, .reach = 1000};
  CU_ASSERT_EQUAL_FATAL(sim_cost_of(&wp, &c), 0);
  CU_ASSERT_DOUBLE_EQUAL(c.gathered, 612.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(c.gathers, 28.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(c.window, 132000.0, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(sim_cost_cpu_traffic(&c, 64.0, 33000.0, 1.0), 1356.0, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(sim_cost_cpu_traffic(&c, 64.0, 1e6, 1.0), 12.0, 1e-9);
  CU_ASSERT_FALSE(sim_cost_streaming(&c));
  wp.reach = 0;
  CU_ASSERT_EQUAL_FATAL(sim_cost_of(&wp, &c), 0);
  CU_ASSERT_DOUBLE_EQUAL(sim_cost_cpu_traffic(&c, 64.0, 33000.0, 1.0), 12.0, 1e-9);
  /* the integrator streams only: no gathers, its stores follow loads of the same data */
  dem_work_t k = {.kind = DEM_WORK_INTEGRATE, .particles = 1e6};
  CU_ASSERT_EQUAL_FATAL(sim_cost_of(&k, &c), 0);
  CU_ASSERT_DOUBLE_EQUAL(sim_cost_cpu_traffic(&c, 64.0, 1.0, 3.0), c.bytes, 1e-6);
}

/* The divider (sim_cost_cpu_flops), by hand from sim/cost.c: 100 particle contacts have 800
 * divisions and square roots (5 + 3 each) among their 15,000 flops; with the divider at a tenth
 * of the core's flop rate they weigh 10 flops each: 15,000 - 800 + 8,000 = 22,200 flop-equivalents.
 * Without a divider rate (0) every flop costs one. The force kernels are written in lanes: the
 * core's width (4 FP64 lanes) does not change their charge. The integrator has 2 per particle (dt/m,
 * dt/I), the search 3 per particle and 3 per slot, the wall pass 5 per wall contact. */
static void test_divider(void)
{
  sim_cost_t c;
  dem_work_t w = {.kind = DEM_WORK_FORCES, .contacts = 100};
  CU_ASSERT_EQUAL_FATAL(sim_cost_of(&w, &c), 0);
  CU_ASSERT_DOUBLE_EQUAL(c.flops, 15000.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(c.divsqrt, 800.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(sim_cost_cpu_flops(&c, 1e9, 1e8, 4.0), 22200.0, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(sim_cost_cpu_flops(&c, 1e9, 0.0, 1.0), 15000.0, 1e-9);
  dem_work_t k = {.kind = DEM_WORK_INTEGRATE, .particles = 10};
  CU_ASSERT_EQUAL_FATAL(sim_cost_of(&k, &c), 0);
  CU_ASSERT_DOUBLE_EQUAL(c.divsqrt, 20.0, 1e-12);
  dem_work_t s = {.kind = DEM_WORK_SEARCH, .particles = 10, .pairs = 50};
  CU_ASSERT_EQUAL_FATAL(sim_cost_of(&s, &c), 0);
  CU_ASSERT_DOUBLE_EQUAL(c.divsqrt, 180.0, 1e-12);
  /* the search is scalar code: 10 x 307 + 50 x 9 = 3,520 flops, 3,340 of them not the divider's,
   * weigh 4 each on a core of 4 FP64 lanes: 13,360 + 180 x 10 = 15,160; on 1 lane 3,340 + 1,800 */
  CU_ASSERT_DOUBLE_EQUAL(c.scalar, 3340.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(sim_cost_cpu_flops(&c, 1e9, 1e8, 4.0), 15160.0, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(sim_cost_cpu_flops(&c, 1e9, 1e8, 1.0), 5140.0, 1e-6);
  dem_work_t b = {.kind = DEM_WORK_BOUNDARIES, .particles = 4, .pairs = 8, .contacts = 2};
  CU_ASSERT_EQUAL_FATAL(sim_cost_of(&b, &c), 0);
  CU_ASSERT_DOUBLE_EQUAL(c.divsqrt, 10.0, 1e-12);
}

/* device.cost = "measured": a kernel timed here for 10 ms on a device of 4e10 flop/s did 4e8
 * flops, which take 4e8 / (2 cores x 1e12) = 0.2 ms on c-2 (launch latency 0), whatever its
 * counts make the model say; host-side work keeps the model. */
static void test_measured_kernel(void)
{
  dem_work_t w = {.kind = DEM_WORK_FORCES_ALL, .particles = 1e6, .pairs = 12e6, .contacts = 6e6};
  double modelled = sim_test_charge(&w);
  dem_clock_set_measured(4e10);
  w.measured = 1;
  w.measured_s = 0.01;
  SIM_ASSERT_CLOSE(sim_test_charge(&w), 4e8 / 2e12, 1e-12);
  CU_ASSERT(modelled > 10.0 * 4e8 / 2e12);
  dem_work_t pack = {.kind = DEM_WORK_PACK, .bytes = 1e9};
  double pack_model = sim_test_charge(&pack);
  pack.measured = 1; /* only kernels are measured: the flag means nothing elsewhere */
  pack.measured_s = 1.0;
  SIM_ASSERT_CLOSE(sim_test_charge(&pack), pack_model, 1e-12);
  dem_clock_set_measured(0.0);
  w.measured = 0;
  SIM_ASSERT_CLOSE(sim_test_charge(&w), modelled, 1e-12);
}

/* New memory: its bytes at the container's first_touch_bw (the platform's figure: a page fault
 * per 4 KiB), 1 GiB -> 2^30 / first_touch_bw s; a host-side charge that needs no core: with the
 * figure missing it costs nothing. */
static void test_first_touch(void)
{
  sim_host_t h = sim_test_self();
  CU_ASSERT_FATAL(h.first_touch_bw > 1e9 && h.first_touch_bw < 1e10);
  dem_work_t w = {.kind = DEM_WORK_FIRST_TOUCH, .bytes = 1073741824.0};
  sim_cost_t c;
  CU_ASSERT_EQUAL_FATAL(sim_cost_of(&w, &c), 0);
  CU_ASSERT_EQUAL(c.place, SIM_ON_OS);
  CU_ASSERT_DOUBLE_EQUAL(c.fresh, 1073741824.0, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(c.bytes, 0.0, 1e-12); /* no memory traffic */
  SIM_ASSERT_CLOSE(sim_test_charge(&w), 1073741824.0 / h.first_touch_bw, 1e-12);
  CU_ASSERT_STRING_EQUAL(dem_clock_kind_name(DEM_WORK_FIRST_TOUCH), "first_touch");
}

/* The ghost registration's passes (SCAN), by hand from sim/cost.c: 1,000 comparisons (the layer's
 * radii and boxes), 2,000 particle-box tests of 4 flops and 48,000 B streamed: 9,000 flops, all
 * scalar (on a core of 4 FP64 lanes they weigh 36,000), 48,000 B, on the host, nothing gathered. */
static void test_scan(void)
{
  dem_work_t w = {.kind = DEM_WORK_SCAN, .particles = 1000, .pairs = 2000, .bytes = 48000};
  sim_cost_t c;
  CU_ASSERT_EQUAL_FATAL(sim_cost_of(&w, &c), 0);
  CU_ASSERT_EQUAL(c.place, SIM_ON_HOST);
  CU_ASSERT_DOUBLE_EQUAL(c.flops, 9000.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(c.scalar, 9000.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(c.bytes, 48000.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(c.gathers, 0.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(sim_cost_cpu_flops(&c, 1e9, 1e8, 4.0), 36000.0, 1e-6);
  CU_ASSERT_STRING_EQUAL(dem_clock_kind_name(DEM_WORK_SCAN), "scan");
}

/* Binning on c-2, whose binning was measured (binning_rate 1e7 particles/s): 1e5 particles take
 * 1e5 / 1e7 = 10 ms, whatever sim/cost.c counts (which the platforms without the figure charge). */
static void test_binning_rate(void)
{
  sim_host_t h = sim_test_self();
  CU_ASSERT_DOUBLE_EQUAL_FATAL(h.binning_rate, 1e7, 1e-3);
  dem_work_t w = {.kind = DEM_WORK_BINNING, .particles = 1e5};
  SIM_ASSERT_CLOSE(sim_test_charge(&w), 1e-2, 1e-9);
  w.particles = 2e5;
  SIM_ASSERT_CLOSE(sim_test_charge(&w), 2e-2, 1e-9);
}

/* The store's permutation (PERMUTE), by hand from sim/cost.c: 1,000 rows of 300 B moved (11 pieces
 * each) in a store of 100,000 rows: 600,000 B of traffic (each byte read and written), of which
 * the 300,000 read are gathered, 11,000 data; the reads reach the whole store, 30 MB (the rows at
 * the moved rows' width); on the host. On c-2, whose permutation was measured (permute_bw 1e9
 * B/s), the moved bytes at that rate: 0.3 ms, whatever the counts say. */
static void test_permute(void)
{
  dem_work_t w = {.kind = DEM_WORK_PERMUTE, .particles = 1000, .bytes = 300000, .pairs = 11000, .reach = 100000};
  sim_cost_t c;
  CU_ASSERT_EQUAL_FATAL(sim_cost_of(&w, &c), 0);
  CU_ASSERT_EQUAL(c.place, SIM_ON_HOST);
  CU_ASSERT_DOUBLE_EQUAL(c.flops, 0.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(c.bytes, 600000.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(c.gathered, 300000.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(c.gathers, 11000.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(c.window, 3e7, 1e-3);
  /* a cache of 10 MB holds a third of the window: two thirds of the gathers miss, each a 64 B
   * line weighing 4 streamed lines (core_bw / core_gather_bw) */
  double miss = 1.0 - 1e7 / 3e7;
  SIM_ASSERT_CLOSE(sim_cost_cpu_traffic(&c, 64.0, 1e7, 4.0), 300000.0 + miss * 11000.0 * 64.0 * 4.0, 1e-12);
  CU_ASSERT_STRING_EQUAL(dem_clock_kind_name(DEM_WORK_PERMUTE), "permute");
  sim_host_t h = sim_test_self();
  CU_ASSERT_DOUBLE_EQUAL_FATAL(h.permute_bw, 1e9, 1e-3);
  SIM_ASSERT_CLOSE(sim_test_charge(&w), 3e-4, 1e-9);
}

/* The contact search on c-2, whose search was measured (search_rate 1e6 particles/s,
 * search_slot_rate 1e7 slots/s, 2 cores): 1e5 particles and 2e5 slots take one core
 * 1e5 / 1e6 + 2e5 / 1e7 = 0.12 s, 0.06 s on the two, whatever sim/cost.c counts. Of it, the
 * counted traffic's time runs on the bus, the rest as compute: on an idle bus their sum. A code
 * of twice demsim's cost (device.code_cost) takes twice as long. */
static void test_search_rate(void)
{
  sim_host_t h = sim_test_self();
  CU_ASSERT_DOUBLE_EQUAL_FATAL(h.search_rate, 1e6, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL_FATAL(h.search_slot_rate, 1e7, 1e-6);
  dem_work_t w = {.kind = DEM_WORK_SEARCH, .particles = 1e5, .pairs = 2e5, .reach = 1e5};
  sim_cost_t c;
  CU_ASSERT_EQUAL_FATAL(sim_cost_of(&w, &c), 0);
  CU_ASSERT(sim_cost_cpu_traffic(&c, h.cache_line, h.llc_bytes, h.core_bw / h.core_gather_bw) / h.core_bw > 1e-3);
  SIM_ASSERT_CLOSE(sim_test_charge(&w), 0.06, 1e-9);
  dem_clock_set_code_cost(2.0);
  SIM_ASSERT_CLOSE(sim_test_charge(&w), 0.12, 1e-9);
  dem_clock_set_code_cost(1.0);
}

/* device.code_cost: a code that costs f times demsim's kernels. sim_cost_scale multiplies the
 * operations and their traffic and keeps the reuse windows; charged, N particles of the
 * integrator (streaming, no gathers, so no window) at f = 2 take exactly what 2N take at f = 1
 * (the launch latency is per kernel, in both). Host-side work keeps demsim's cost; at f = 1 the
 * charge is the plain model's. */
static void test_code_cost(void)
{
  sim_cost_t a, b;
  dem_work_t w = {.kind = DEM_WORK_FORCES_ALL, .particles = 1e4, .pairs = 12e4, .contacts = 6e4, .reach = 1e4};
  CU_ASSERT_EQUAL_FATAL(sim_cost_of(&w, &a), 0);
  b = a;
  sim_cost_scale(&b, 3.0);
  CU_ASSERT_DOUBLE_EQUAL(b.flops, 3.0 * a.flops, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(b.bytes, 3.0 * a.bytes, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(b.gathers, 3.0 * a.gathers, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(b.scalar, 3.0 * a.scalar, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(b.particles, a.particles, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(b.window, a.window, 0.0);
  dem_work_t k1 = {.kind = DEM_WORK_INTEGRATE, .particles = 1e6}, k2 = {.kind = DEM_WORK_INTEGRATE, .particles = 2e6};
  dem_work_t pack = {.kind = DEM_WORK_PACK, .bytes = 1e8};
  double one = sim_test_charge(&k1), two = sim_test_charge(&k2), pack1 = sim_test_charge(&pack);
  CU_ASSERT(two > 1.5 * one);
  dem_clock_set_code_cost(2.0);
  SIM_ASSERT_CLOSE(sim_test_charge(&k1), two, 1e-12);
  SIM_ASSERT_CLOSE(sim_test_charge(&pack), pack1, 1e-12);
  dem_clock_set_code_cost(1.0);
  SIM_ASSERT_CLOSE(sim_test_charge(&k1), one, 1e-15);
}

static CU_TestInfo tests[] = {
  {"the container's hardware is read from the platform", test_reads_container},
  {"a missing property is named with its host", test_missing_property_is_named},
  {"cost model arithmetic", test_cost_model},
  {"the fused force kernel is charged once", test_fused_forces},
  {"traffic: cache lines, write-allocate and the reuse window", test_traffic},
  {"divisions and square roots at the divider's rate", test_divider},
  {"device.cost = measured: a timed kernel is charged its flops at the container's speed", test_measured_kernel},
  {"new memory is charged at the container's first_touch_bw", test_first_touch},
  {"the ghost registration's passes are scalar host work", test_scan},
  {"binning is charged at the container's measured binning_rate", test_binning_rate},
  {"the store's permutation: gathered reads over the store, or the measured permute_bw", test_permute},
  {"the contact search at the container's measured search_rate and search_slot_rate", test_search_rate},
  {"device.code_cost: another code's kernels at f times demsim's", test_code_cost},
  CU_TEST_INFO_NULL};
static CU_SuiteInfo suites[] = {{"sim_host", NULL, NULL, NULL, NULL, tests}, CU_SUITE_INFO_NULL};
DEM_TEST_MAIN(suites)
