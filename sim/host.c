/* Reads a container's hardware from the platform file: the host's speed and core count, its
 * properties, and the speed of its node's memory-bus host. Every missing or malformed figure is
 * an error that names the host and the property, so a platform file is checked on start-up
 * rather than producing silently wrong times. */
#include "host.h"

#include <simgrid/host.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t errlen, const char *host, const char *what)
{
  if (err && errlen) snprintf(err, errlen, "platform: host '%s': %s", host, what);
  return -1;
}

/* The value of a non-empty property, or NULL with an error naming the host and the property. */
static const char *get_prop(sg_host_t host, const char *prop, char *err, size_t errlen)
{
  const char *v = sg_host_get_property_value(host, prop);
  if (!v || !*v) {
    char msg[160];
    snprintf(msg, sizeof msg, "missing property '%s'", prop);
    fail(err, errlen, sg_host_get_name(host), msg);
    return NULL;
  }
  return v;
}

static int copy_prop(sg_host_t host, const char *prop, char *dst, size_t len, char *err,
                     size_t errlen)
{
  const char *v = get_prop(host, prop, err, errlen);
  if (!v) return -1;
  if (strlen(v) >= len) {
    char msg[160];
    snprintf(msg, sizeof msg, "property '%s' longer than %zu characters", prop, len - 1);
    return fail(err, errlen, sg_host_get_name(host), msg);
  }
  memcpy(dst, v, strlen(v) + 1);
  return 0;
}

/* A positive (or, with allow_zero, non-negative) number in SI units: B/s, flop/s, s. */
static int number_prop(sg_host_t host, const char *prop, int allow_zero, double *out, char *err,
                       size_t errlen)
{
  const char *v = get_prop(host, prop, err, errlen);
  if (!v) return -1;
  char *end = NULL;
  errno = 0;
  double x = strtod(v, &end);
  if (errno || end == v || *end != '\0' || !(allow_zero ? x >= 0.0 : x > 0.0)) {
    char msg[200];
    snprintf(msg, sizeof msg, "property '%s' = '%s': expected a %s number in SI units", prop, v,
             allow_zero ? "non-negative" : "positive");
    return fail(err, errlen, sg_host_get_name(host), msg);
  }
  *out = x;
  return 0;
}

/* "u0:f0,u1:f1,...": utilisations rising from 0 to 1, factors >= 1 and not falling. */
static int latency_curve(sg_host_t bus, sim_host_t *h, char *err, size_t errlen)
{
  const char *v = get_prop(bus, "loaded_latency", err, errlen);
  if (!v) return -1;
  const char *p = v;
  int n = 0;
  while (*p) {
    char *end = NULL;
    double u = strtod(p, &end);
    if (end == p || *end != ':') break;
    p = end + 1;
    double f = strtod(p, &end);
    if (end == p || n == 8 || !(u >= 0.0 && u <= 1.0 && f >= 1.0) ||
        (n > 0 && (u <= h->lat_u[n - 1] || f < h->lat_f[n - 1])))
      break;
    h->lat_u[n] = u;
    h->lat_f[n] = f;
    n++;
    p = end;
    if (*p == ',') p++;
    else if (*p) break;
  }
  if (*p || n == 0) {
    char msg[200];
    snprintf(msg, sizeof msg,
             "property 'loaded_latency' = '%s': expected 'u:factor,...' with u rising in [0, 1], "
             "factors >= 1 and not falling (at most 8 points)", v);
    return fail(err, errlen, sg_host_get_name(bus), msg);
  }
  h->lat_points = n;
  return 0;
}

int sim_host_read(sim_host_t *h, const char *name, char *err, size_t errlen)
{
  memset(h, 0, sizeof *h);
  sg_host_t host = name ? sg_host_by_name(name) : sg_host_self();
  if (!host) return fail(err, errlen, name, "no such host in the platform");
  const char *hname = sg_host_get_name(host);
  if (strlen(hname) >= sizeof h->name) return fail(err, errlen, hname, "host name too long");
  memcpy(h->name, hname, strlen(hname) + 1);

  if (copy_prop(host, "container", h->container, sizeof h->container, err, errlen) ||
      copy_prop(host, "node", h->node, sizeof h->node, err, errlen) ||
      copy_prop(host, "node_type", h->node_type, sizeof h->node_type, err, errlen) ||
      copy_prop(host, "membus", h->membus, sizeof h->membus, err, errlen) ||
      number_prop(host, "core_bw", 0, &h->core_bw, err, errlen) ||
      number_prop(host, "core_gather_bw", 0, &h->core_gather_bw, err, errlen) ||
      number_prop(host, "cache_line", 0, &h->cache_line, err, errlen) ||
      number_prop(host, "llc_bytes", 0, &h->llc_bytes, err, errlen) ||
      number_prop(host, "launch_latency", 1, &h->launch_latency, err, errlen))
    return -1;

  if (sg_host_get_property_value(host, "storage_bw") && number_prop(host, "storage_bw", 0, &h->storage_bw, err, errlen))
    return -1;
  if (sg_host_get_property_value(host, "divider_rate") &&
      number_prop(host, "divider_rate", 0, &h->divider_rate, err, errlen))
    return -1;
  if (sg_host_get_property_value(host, "first_touch_bw") &&
      number_prop(host, "first_touch_bw", 0, &h->first_touch_bw, err, errlen))
    return -1;
  if (sg_host_get_property_value(host, "partition_rate") &&
      number_prop(host, "partition_rate", 0, &h->partition_rate, err, errlen))
    return -1;
  if (sg_host_get_property_value(host, "binning_rate") &&
      number_prop(host, "binning_rate", 0, &h->binning_rate, err, errlen))
    return -1;
  if (sg_host_get_property_value(host, "permute_bw") && number_prop(host, "permute_bw", 0, &h->permute_bw, err, errlen))
    return -1;
  if ((sg_host_get_property_value(host, "search_rate") || sg_host_get_property_value(host, "search_slot_rate")) &&
      (number_prop(host, "search_rate", 0, &h->search_rate, err, errlen) ||
       number_prop(host, "search_slot_rate", 0, &h->search_slot_rate, err, errlen)))
    return -1;
  h->cpu_share = 1.0;
  if (sg_host_get_property_value(host, "cpu_share") && number_prop(host, "cpu_share", 0, &h->cpu_share, err, errlen))
    return -1;
  if (h->cpu_share > 1.0) return fail(err, errlen, hname, "'cpu_share' must be in (0, 1]");
  h->cpu_period = SIM_CFS_PERIOD;
  if (sg_host_get_property_value(host, "cpu_period") &&
      number_prop(host, "cpu_period", 0, &h->cpu_period, err, errlen))
    return -1;
  h->cpu_tick = 0.0;
  if (sg_host_get_property_value(host, "cpu_tick") && number_prop(host, "cpu_tick", 0, &h->cpu_tick, err, errlen))
    return -1;
  h->cpu_quota_efficiency = 1.0;
  if (sg_host_get_property_value(host, "cpu_quota_efficiency") &&
      number_prop(host, "cpu_quota_efficiency", 0, &h->cpu_quota_efficiency, err, errlen))
    return -1;
  if (h->cpu_quota_efficiency > 1.0) return fail(err, errlen, hname, "'cpu_quota_efficiency' must be in (0, 1]");
  h->quota = NULL;
  h->simd_lanes = 1.0;
  if (sg_host_get_property_value(host, "simd_lanes") &&
      number_prop(host, "simd_lanes", 0, &h->simd_lanes, err, errlen))
    return -1;
  if (h->simd_lanes < 1.0) return fail(err, errlen, hname, "'simd_lanes' must be at least 1");
  char device[8];
  if (copy_prop(host, "device", device, sizeof device, err, errlen)) return -1;
  if (strcmp(device, "cpu") == 0) {
    h->device = SIM_DEVICE_CPU;
  } else if (strcmp(device, "gpu") == 0) {
    h->device = SIM_DEVICE_GPU;
    if (number_prop(host, "gpu_flops", 0, &h->gpu_flops, err, errlen) ||
        number_prop(host, "gpu_bw", 0, &h->gpu_bw, err, errlen) ||
        number_prop(host, "gpu_gather_bw", 0, &h->gpu_gather_bw, err, errlen) ||
        number_prop(host, "pcie_bw", 0, &h->pcie_bw, err, errlen))
      return -1;
  } else {
    char msg[96];
    snprintf(msg, sizeof msg, "property 'device' = '%s': expected 'cpu' or 'gpu'", device);
    return fail(err, errlen, hname, msg);
  }

  h->cores = sg_host_core_count(host);
  h->core_flops = sg_host_get_speed(host);
  if (h->cores < 1 || !(h->core_flops > 0.0))
    return fail(err, errlen, hname, "needs a positive speed and core count");

  sg_host_t bus = sg_host_by_name(h->membus);
  if (!bus) {
    char msg[160];
    snprintf(msg, sizeof msg, "property 'membus' = '%s' names no host of the platform", h->membus);
    return fail(err, errlen, hname, msg);
  }
  h->node_bw = sg_host_get_speed(bus);
  if (!(h->node_bw > 0.0) || sg_host_core_count(bus) != 1)
    return fail(err, errlen, h->membus,
                "a memory-bus host needs one core whose speed is the node's bandwidth in B/s");
  return latency_curve(bus, h, err, errlen);
}

double sim_host_latency_factor(const sim_host_t *h, double u)
{
  int n = h->lat_points;
  if (n == 0 || u <= h->lat_u[0]) return n ? h->lat_f[0] : 1.0;
  for (int i = 1; i < n; i++)
    if (u <= h->lat_u[i])
      return h->lat_f[i - 1] + (h->lat_f[i] - h->lat_f[i - 1]) * (u - h->lat_u[i - 1]) / (h->lat_u[i] - h->lat_u[i - 1]);
  return h->lat_f[n - 1];
}

double sim_host_kernel_bw(const sim_host_t *h)
{
  double bw = h->cores * h->core_bw;
  return bw < h->node_bw ? bw : h->node_bw;
}

void sim_host_describe(const sim_host_t *h, char *buf, size_t len)
{
  snprintf(buf, len, "%s (%s on node %s, %s, %d core%s, %s)", h->name, h->container, h->node,
           h->node_type, h->cores, h->cores == 1 ? "" : "s",
           h->device == SIM_DEVICE_GPU ? "gpu" : "cpu");
}
