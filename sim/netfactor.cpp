/* SMPI's latency factor without the wide-area links (see netfactor.h).
 *
 * SMPI multiplies every message's route latency by a factor that depends on the message size
 * (`smpi/lat-factor`, default fitted on one cluster's MPI ping-pongs: 2.59 for small messages).
 * That factor stands for the MPI software stack and the LAN's switching, measured against a LAN
 * link's few microseconds; applied to a wide-area link's propagation delay (milliseconds of
 * light in fibre) it would turn a 10 ms WAN into 26 ms. With a callback (SimGrid's
 * NetworkModelIntf::set_lat_factor_cb, the one way to make the factor depend on the route) the
 * factor applies to the route's other links only: a route's latency becomes
 * f(size) x L_lan + L_wan, the links with the property wide_area = 1 forming L_wan. Routes
 * without such a link get exactly SMPI's factor (same table, same rule as
 * NetworkSmpiModel::get_latency_factor), so results on LAN-only platforms do not change.
 * A platform whose MPI stack was measured (validation/study/mpistack.py) may also carry the
 * stack's time for the messages SMPI charges no overhead (from Open MPI's eager limit, where
 * SMPI's send is not detached): the root zone's property stack_time, added to the route's latency
 * as (f L + t(size)) / L, L the route's latency (a route of latency 0 gets none).
 * C++ (with noise_sg.cpp): SimGrid has no C interface for the callback. */
#include "netfactor.h"

#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <xbt/config.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

/* (size threshold in bytes, factor), sorted by threshold */
std::vector<std::pair<double, double>> table;

int parse(const std::string& text, char* err, size_t errlen)
{
  std::stringstream chunks(text);
  std::string chunk;
  table.clear();
  while (std::getline(chunks, chunk, ';')) {
    size_t colon = chunk.find(':');
    char* end1 = nullptr;
    char* end2 = nullptr;
    double size = colon == std::string::npos ? 0 : std::strtod(chunk.c_str(), &end1);
    double factor = colon == std::string::npos ? 0 : std::strtod(chunk.c_str() + colon + 1, &end2);
    if (colon == std::string::npos || end1 != chunk.c_str() + colon || !end2 || *end2 != '\0') {
      std::snprintf(err, errlen, "latency factor (lat_factor or smpi/lat-factor) = \"%s\": cannot read \"%s\" as SIZE:FACTOR", text.c_str(),
                    chunk.c_str());
      return -1;
    }
    table.emplace_back(size, factor);
  }
  std::sort(table.begin(), table.end());
  return 0;
}

/* The MPI stack's time beyond SMPI's overheads, by size: (size threshold, base s, s per byte),
 * sorted; from the root zone's property stack_time ("SIZE:BASE:PER_BYTE;..."), empty without it. */
std::vector<std::array<double, 3>> stack;
bool stack_read = false;

int parse_stack(const char* text, char* err, size_t errlen)
{
  stack.clear();
  stack_read = true;
  if (!text) return 0;
  std::stringstream chunks(text);
  std::string chunk;
  while (std::getline(chunks, chunk, ';')) {
    std::array<double, 3> band{};
    const char* p = chunk.c_str();
    char* end = nullptr;
    for (int k = 0; k < 3; ++k, p = end + 1) {
      band[k] = std::strtod(p, &end);
      if (end == p || *end != (k < 2 ? ':' : '\0')) {
        std::snprintf(err, errlen, "stack_time = \"%s\": cannot read \"%s\" as SIZE:BASE:PER_BYTE", text, chunk.c_str());
        stack.clear();
        return -1;
      }
    }
    stack.push_back(band);
  }
  std::sort(stack.begin(), stack.end());
  return 0;
}

const char* stack_text()
{
  return simgrid::s4u::Engine::get_instance()->get_netzone_root()->get_property("stack_time");
}

/* the answer per link, looked up once */
std::unordered_map<const simgrid::s4u::Link*, bool> wide;

bool wide_area(const simgrid::s4u::Link* l)
{
  auto it = wide.find(l);
  if (it != wide.end()) return it->second;
  const char* v = l->get_property("wide_area");
  /* a full-duplex link's two directions (NAME_UP, NAME_DOWN) carry no properties of their own:
   * the platform file gave them to the full-duplex link NAME */
  const std::string& name = l->get_name();
  for (const char* dir : {"_UP", "_DOWN"}) {
    size_t n = std::string(dir).size();
    if (!v && name.size() > n && name.compare(name.size() - n, n, dir) == 0) {
      try {
        v = simgrid::s4u::SplitDuplexLink::by_name(name.substr(0, name.size() - n))->get_property("wide_area");
      } catch (const std::exception&) {
        v = nullptr;
      }
    }
  }
  bool w = v && std::string(v) == "1";
  wide.emplace(l, w);
  return w;
}

/* The factor table's text: the root zone's property lat_factor where the platform has one (SMPI
 * refuses an explicit smpi/lat-factor beside a callback: NetworkSmpiModel::check_lat_factor_cb),
 * else smpi/lat-factor, SMPI's default. */
std::string table_text()
{
  const char* own = simgrid::s4u::Engine::get_instance()->get_netzone_root()->get_property("lat_factor");
  return own ? std::string(own) : simgrid::config::get_value<std::string>("smpi/lat-factor");
}

double factor(double size, const simgrid::s4u::Host*, const simgrid::s4u::Host*,
              const std::vector<simgrid::s4u::Link*>& links, const std::unordered_set<simgrid::s4u::NetZone*>&)
{
  /* under SMPI each rank has its own copy of this file's data, and the simulation may call this
   * while a rank that has not installed it yet is current: read the table then */
  char err[256];
  if (table.empty() && parse(table_text(), err, sizeof err))
    table.emplace_back(0.0, 1.0);
  if (!stack_read)
    parse_stack(stack_text(), err, sizeof err);
  double lan = 0.0;
  double wan = 0.0;
  for (const auto* l : links)
    (wide_area(l) ? wan : lan) += l->get_latency();
  double f = sim_netfactor_route(size, lan, wan);
  double extra = sim_netfactor_stack(size);
  return extra > 0.0 && lan + wan > 0.0 ? f + extra / (lan + wan) : f;
}

bool installed = false;

} // namespace

extern "C" double sim_netfactor_smpi(double size)
{
  double current = 1.0;
  for (const auto& t : table) {
    if (size <= t.first) return current;
    current = t.second;
  }
  return current;
}

extern "C" double sim_netfactor_stack(double size)
{
  double t = 0.0;
  for (const auto& b : stack) {
    if (size <= b[0]) break;
    t = b[1] + b[2] * size;
  }
  return t;
}

extern "C" double sim_netfactor_route(double size, double lan_latency, double wan_latency)
{
  double f = sim_netfactor_smpi(size);
  if (wan_latency <= 0.0) return f;
  return (f * lan_latency + wan_latency) / (lan_latency + wan_latency);
}

extern "C" int sim_netfactor_install(char* err, size_t errlen)
{
  if (installed) return 0;
  if (parse(table_text(), err, errlen) || parse_stack(stack_text(), err, errlen)) return -1;
  simgrid::s4u::Engine::get_instance()->get_netzone_root()->get_network_model()->set_lat_factor_cb(factor);
  installed = true;
  return 0;
}
