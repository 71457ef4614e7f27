/* The noise model on the platform (noise_sg.h): SimGrid speed profiles for hosts, a daemon for
 * links. A profile holds horizon / dt steps and repeats with that period (ProfileBuilder's
 * periodicity: the date of the next round's first value, steps x dt); its dates
 * are simulated time from 0, so the factor of step k holds over [k dt, (k + 1) dt) on every
 * resource, whenever the profile was set. */
#include "noise_sg.h"

#include "base/clock.h"
#include "noise.h"

#include <simgrid/kernel/ProfileBuilder.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::vector<double> factors(const dem_noise_t* n, const std::string& name, double cv, double tau)
{
  std::vector<double> f(sim_noise_steps(n->dt, n->horizon));
  sim_noise_factors(static_cast<uint64_t>(n->seed), name.c_str(), cv, n->dt, tau, f.data(), f.size());
  return f;
}

void host_profile(const dem_noise_t* n, simgrid::s4u::Host* h, const char* kind, double cv, double tau)
{
  std::string name = std::string(kind) + h->get_name();
  std::vector<double> f = factors(n, name, cv, tau);
  std::ostringstream text;
  text.precision(17);
  for (size_t k = 0; k < f.size(); k++)
    text << static_cast<double>(k) * n->dt << ' ' << f[k] << '\n';
  h->set_speed_profile(simgrid::kernel::profile::ProfileBuilder::from_string("noise-" + name, text.str(),
                                                                                 static_cast<double>(f.size()) * n->dt));
}

struct link_noise {
  simgrid::s4u::Link* link;
  double nominal;
  std::vector<double> f;
};

/* sets every noisy link's bandwidth at the start of each step, forever (a daemon) */
void drive_links(std::vector<link_noise> links, double dt)
{
  simgrid::s4u::Actor::self()->daemonize();
  size_t steps = links.front().f.size();
  auto k = static_cast<size_t>(std::floor(simgrid::s4u::Engine::get_clock() / dt));
  for (;; k++) {
    simgrid::s4u::this_actor::sleep_until(static_cast<double>(k) * dt);
    for (const auto& l : links)
      l.link->set_bandwidth(l.nominal * l.f[k % steps]);
  }
}

} // namespace

extern "C" size_t sim_noise_steps(double dt, double horizon)
{
  double steps = std::floor(horizon / dt + 0.5);
  return steps < 1.0 ? 1 : static_cast<size_t>(steps);
}

extern "C" int sim_noise_apply(const dem_noise_t* n, char* err, size_t errlen)
{
  if (!(n->dt > 0.0 && n->horizon > 0.0)) {
    if (err && errlen) std::snprintf(err, errlen, "noise: dt and horizon must be > 0 s");
    return -1;
  }
  auto* e = simgrid::s4u::Engine::get_instance();
  std::set<std::string> buses;
  for (auto* h : e->get_all_hosts()) {
    const char* bus = h->get_property("membus");
    if (!bus) continue;
    if (n->cpu_cv > 0.0) host_profile(n, h, "cpu:", n->cpu_cv, n->cpu_tau);
    /* read by sim/membus.c: a property is the platform's, seen by every rank */
    if (n->cpu_cv > 0.0 && n->cpu_memory) h->set_property(SIM_NOISE_MEMORY, "1");
    buses.insert(bus);
  }
  for (const auto& b : buses) {
    auto* h = simgrid::s4u::Host::by_name_or_null(b);
    if (h && n->mem_cv > 0.0) host_profile(n, h, "mem:", n->mem_cv, n->mem_tau);
  }
  if (!(n->net_cv > 0.0)) return 0;
  std::vector<link_noise> links;
  for (auto* l : e->get_all_links())
    links.push_back({l, l->get_bandwidth(), factors(n, "net:" + l->get_name(), n->net_cv, n->net_tau)});
  if (links.empty()) return 0;
  simgrid::s4u::Actor::create("noise-links", simgrid::s4u::this_actor::get_host(), drive_links, std::move(links), n->dt);
  return 0;
}
