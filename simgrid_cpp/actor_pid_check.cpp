/*
 * actor_pid_check.cpp - the test program of topolab's SimGrid patch 0031
 * (scripts/simgrid-patches/0031-engine-actor-by-pid-in-constant-time.patch):
 * the engine finds an actor by its pid in an array indexed by pid instead of
 * a search tree, and must answer as the tree did.
 *
 * On one host, an actor starts ACTORS children; child k sleeps (k * 7 mod
 * ACTORS) + 1 seconds, so they end in an order unlike that of their pids. At
 * every end, and again at the start and after the last one, every child's pid
 * is looked up: a living child must be found (the same pid), an ended one not;
 * so must pids that were never an actor's (negative ones, and ones beyond the
 * highest handed out, where the array ends). It prints one JSON object per
 * failed lookup as it happens, then {"lookups": N, "failures": F}, and exits 1
 * if any failed. tests/test_actor_pid.py runs it and checks that.
 */
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

constexpr int ACTORS = 200;

std::vector<aid_t> pids;
std::vector<bool> living;
long lookups  = 0;
long failures = 0;

void expect(bool holds, const char* what, aid_t pid)
{
  lookups++;
  if (not holds) {
    failures++;
    std::printf("{\"failed\":\"%s\",\"pid\":%ld}\n", what, static_cast<long>(pid));
  }
}

void check_every_lookup()
{
  for (size_t k = 0; k < pids.size(); k++) {
    simgrid::s4u::ActorPtr found = simgrid::s4u::Actor::by_pid(pids[k]);
    if (living[k])
      expect(found != nullptr && found->get_pid() == pids[k], "a living actor is found by its pid", pids[k]);
    else
      expect(found == nullptr, "an ended actor is not found", pids[k]);
  }
  aid_t highest = simgrid::s4u::this_actor::get_pid();
  for (aid_t pid : pids)
    highest = std::max(highest, pid);
  for (aid_t pid : {static_cast<aid_t>(-1), static_cast<aid_t>(-1000), highest + 1, highest + 1000})
    expect(simgrid::s4u::Actor::by_pid(pid) == nullptr, "a pid no actor has is not found", pid);
}

void child(int k)
{
  simgrid::s4u::this_actor::sleep_for((k * 7 % ACTORS) + 1);
  living[k] = false;
}

void parent()
{
  simgrid::s4u::Host* host = simgrid::s4u::this_actor::get_host();
  for (int k = 0; k < ACTORS; k++) {
    living.push_back(true);
    pids.push_back(host->add_actor("child", [k] { child(k); })->get_pid());
  }
  check_every_lookup();
  for (int second = 1; second <= ACTORS + 1; second++) { // an end every second, checked half a second after
    simgrid::s4u::this_actor::sleep_until(second + 0.5);
    check_every_lookup();
  }
  expect(simgrid::s4u::Actor::by_pid(simgrid::s4u::this_actor::get_pid()) == simgrid::s4u::Actor::self(),
         "the running actor finds itself", simgrid::s4u::this_actor::get_pid());
}

} // namespace

int main(int argc, char** argv)
{
  simgrid::s4u::Engine engine(&argc, argv);
  simgrid::s4u::NetZone* zone = engine.get_netzone_root();
  zone->add_host("host", 1e9)->seal();
  zone->seal();
  simgrid::s4u::Host::by_name("host")->add_actor("parent", parent);
  engine.run();
  std::printf("{\"lookups\":%ld,\"failures\":%ld}\n", lookups, failures);
  return failures == 0 ? 0 : 1;
}
