/* The arithmetic of an emulated wire (run/wire.c, demsim-wire): how many bytes a packet puts on
 * an Ethernet wire, and when it has crossed a wire of a rate and a latency. Plain C, no system
 * call, so that tests/test_wireline.c checks it against hand-counted frames. */
#ifndef DEMSIM_RUN_WIRELINE_H
#define DEMSIM_RUN_WIRELINE_H

#define DEM_WIRE_MTU 1500    /* the containers' eth0 (a veth's default) */
#define DEM_WIRE_FRAMING 38  /* bytes an Ethernet frame adds on the wire: header 14, FCS 4, preamble 8, gap 12 */

/* Bytes that the packet whose first n bytes are p (IPv4) puts on the wire: a TCP send of several
 * segments (one GSO packet) as that many frames of at most DEM_WIRE_MTU bytes, each with the
 * packet's IPv4 and TCP headers and the framing; a packet that is not IPv4 as its n bytes and
 * one frame's framing. */
double dem_wire_bytes(const unsigned char *p, int n);

typedef struct dem_wire_line {
  double rate;    /* B/s on the wire; 0: no serialization */
  double latency; /* s, one way */
  double free_at; /* when the wire has sent what it holds (s) */
} dem_wire_line_t;

/* A packet of `bytes` reaches the wire at t: it enters when the packets before it have been
 * sent, crosses it at the rate and arrives the latency later. When it arrives (s). */
double dem_wire_due(dem_wire_line_t *w, double t, double bytes);

#endif
