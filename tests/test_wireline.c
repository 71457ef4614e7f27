/* The emulated wire's arithmetic (solver/run/wireline.c, demsim-wire's) against hand-counted
 * frames and a hand-computed schedule:
 *  - a TCP packet of 8 B of data: one frame, 20 + 32 + 8 bytes and 38 of framing;
 *  - 1448 B of data (one MSS at an MTU of 1500 with TCP's timestamps) fill one 1500-byte frame,
 *    1449 B take two, each with its own 52 bytes of headers;
 *  - a GSO packet of 65000 B of data: 45 frames;
 *  - a UDP packet counts its IPv4 header only; what is not IPv4 counts as it is, plus framing;
 *  - on a 125 MB/s, 70 us wire a packet that comes while another is being sent waits for it,
 *    one that comes to an idle wire does not; without a rate only the latency is added. */
#include "run/wireline.h"

#include <CUnit/Basic.h>
#include <math.h>
#include <string.h>

/* The first bytes of an IPv4 packet: total length `total`, protocol `proto`, and for TCP a
 * 32-byte header (data offset 8). */
static void packet(unsigned char *p, int total, int proto)
{
  memset(p, 0, 80);
  p[0] = 0x45; /* version 4, 20-byte header */
  p[2] = (unsigned char)(total >> 8), p[3] = (unsigned char)(total & 255);
  p[9] = (unsigned char)proto;
  p[20 + 12] = 8 << 4;
}

static void test_frames(void)
{
  unsigned char p[80];
  packet(p, 52 + 8, 6);
  CU_ASSERT_DOUBLE_EQUAL(dem_wire_bytes(p, 80), 60 + 38, 1e-9);
  packet(p, 52 + 1448, 6);
  CU_ASSERT_DOUBLE_EQUAL(dem_wire_bytes(p, 80), 1500 + 38, 1e-9);
  packet(p, 52 + 1449, 6);
  CU_ASSERT_DOUBLE_EQUAL(dem_wire_bytes(p, 80), 1501 + 52 + 2 * 38, 1e-9);
  packet(p, 52 + 65000, 6); /* 44 x 1448 = 63712 < 65000 <= 45 x 1448 */
  CU_ASSERT_DOUBLE_EQUAL(dem_wire_bytes(p, 80), 65052 + 44 * 52 + 45 * 38, 1e-9);
  packet(p, 20 + 1008, 17);
  CU_ASSERT_DOUBLE_EQUAL(dem_wire_bytes(p, 80), 1028 + 38, 1e-9);
  p[0] = 0x60; /* IPv6: as it is */
  CU_ASSERT_DOUBLE_EQUAL(dem_wire_bytes(p, 40), 40 + 38, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(dem_wire_bytes(p, 0), 38, 1e-9);
}

static void test_schedule(void)
{
  dem_wire_line_t w = {125e6, 70e-6, 0.0};
  double frame = 1538 / 125e6; /* 12.304 us */
  CU_ASSERT_DOUBLE_EQUAL(dem_wire_due(&w, 0.0, 1538), frame + 70e-6, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(dem_wire_due(&w, 1e-6, 1538), 2 * frame + 70e-6, 1e-12); /* waits for the first */
  CU_ASSERT_DOUBLE_EQUAL(dem_wire_due(&w, 1e-3, 1538), 1e-3 + frame + 70e-6, 1e-12); /* idle wire */
  dem_wire_line_t d = {0.0, 25e-6, 0.0};
  CU_ASSERT_DOUBLE_EQUAL(dem_wire_due(&d, 2e-3, 65000), 2e-3 + 25e-6, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(dem_wire_due(&d, 2e-3, 65000), 2e-3 + 25e-6, 1e-12);
}

int main(void)
{
  if (CU_initialize_registry() != CUE_SUCCESS) return 1;
  CU_pSuite s = CU_add_suite("emulated wire", NULL, NULL);
  CU_add_test(s, "a packet's bytes on an Ethernet wire: frames, headers, framing", test_frames);
  CU_add_test(s, "when a packet has crossed: queued behind the one before, then the latency", test_schedule);
  CU_basic_set_mode(CU_BRM_VERBOSE);
  CU_basic_run_tests();
  unsigned failed = CU_get_number_of_failures();
  CU_cleanup_registry();
  return failed ? 1 : 0;
}
