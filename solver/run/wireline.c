/* The arithmetic of an emulated wire (see run/wireline.h). */
#include "run/wireline.h"

double dem_wire_bytes(const unsigned char *p, int n)
{
  if (n < 20 || (p[0] >> 4) != 4) return (n > 0 ? n : 0) + DEM_WIRE_FRAMING;
  int ihl = (p[0] & 15) * 4, total = (p[2] << 8) | p[3], hdr = ihl;
  if (p[9] == 6 && n >= ihl + 13) hdr += (p[ihl + 12] >> 4) * 4; /* TCP's data offset */
  int payload = total - hdr, room = DEM_WIRE_MTU - hdr;
  int frames = payload > room && room > 0 ? (payload + room - 1) / room : 1;
  return (double)total + (double)(frames - 1) * hdr + (double)frames * DEM_WIRE_FRAMING;
}

double dem_wire_due(dem_wire_line_t *w, double t, double bytes)
{
  double start = w->free_at > t ? w->free_at : t;
  w->free_at = start + (w->rate > 0 ? bytes / w->rate : 0);
  return w->free_at + w->latency;
}
