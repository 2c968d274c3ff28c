/*
 * jobs_replay.cpp - several MPI jobs sharing one machine: each job's recorded
 * time-independent (TI) trace replayed by SMPI as an MPI application of its own
 * (its own MPI_COMM_WORLD), all of them in one simulation on one platform, so
 * that they contend for its links as jobs of a shared machine do.
 *
 *   jobs_replay PLATFORM JOBS [--cfg=NAME:VALUE]... [--log=...]...
 *
 * JOBS has one line per rank, the ranks of a job in rank order:
 *   JOB START_S HOST TRACE
 * JOB names the job (one word), START_S is when its ranks start (simulated
 * seconds), HOST the host of the rank and TRACE the rank's TI trace file (one
 * of the files an SMPI recording lists in its index). A job's lines need not be
 * adjacent; every line of a job gives the same START_S.
 *
 * Output, once the simulation is over: one JSON object per job, in the order of
 * their first line,
 *   {"job":JOB,"ranks":N,"start_s":START,"end_s":END,"time_s":END - START}
 * END is when the last rank of the job finished its trace. Exit codes: 0 ok,
 * 2 bad command line or jobs file (one "jobs_replay: error:" line on stderr).
 *
 * What SimGrid's smpirun -replay does for one trace (smpireplaymain), this does
 * for several (the idea of SimGrid's examples/smpi/replay_multiple, with the
 * ranks placed and started from the jobs file instead of a deployment file).
 */
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <smpi/smpi.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Rank {
  std::string host;
  std::string trace;
};

struct Job {
  std::string name;
  double start = 0;
  std::vector<Rank> ranks;
  double end = 0;
};

[[noreturn]] void fail(const std::string& message)
{
  std::fprintf(stderr, "jobs_replay: error: %s\n", message.c_str());
  std::exit(2);
}

/* The jobs of the file, in the order of their first line. */
std::vector<Job> read_jobs(const std::string& path)
{
  std::ifstream file(path);
  if (not file)
    fail("cannot read the jobs file '" + path + "'");
  std::vector<Job> jobs;
  std::map<std::string, size_t> index;
  std::string line;
  for (int number = 1; std::getline(file, line); number++) {
    std::istringstream words(line);
    std::string name;
    double start;
    Rank rank;
    if (not(words >> name))
      continue; /* a blank line */
    std::string rest;
    if (not(words >> start >> rank.host >> rank.trace) || (words >> rest) || start < 0)
      fail(path + ":" + std::to_string(number) + ": expected 'JOB START_S HOST TRACE', got '" + line + "'");
    auto plain = [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_' || c == '.'; };
    if (not std::all_of(name.begin(), name.end(), plain))
      fail(path + ":" + std::to_string(number) + ": a job's name is letters, digits, '-', '_', '.': '" + name + "'");
    auto [at, added] = index.try_emplace(name, jobs.size());
    if (added)
      jobs.push_back(Job{name, start, {}, 0});
    else if (jobs[at->second].start != start)
      fail(path + ":" + std::to_string(number) + ": job " + name + " starts at two times");
    jobs[at->second].ranks.push_back(rank);
  }
  if (jobs.empty())
    fail("the jobs file '" + path + "' names no job");
  return jobs;
}

/* Start every rank of `job` on its host; each replays its trace from the job's start and records when it ends. */
void start_job(simgrid::s4u::Engine& engine, Job& job)
{
  SMPI_app_instance_register(job.name.c_str(), nullptr, static_cast<int>(job.ranks.size()));
  for (size_t rank = 0; rank < job.ranks.size(); rank++) {
    simgrid::s4u::Host* host = engine.host_by_name_or_null(job.ranks[rank].host);
    if (host == nullptr)
      fail("job " + job.name + ": the platform has no host '" + job.ranks[rank].host + "'");
    std::string trace = job.ranks[rank].trace;
    simgrid::s4u::ActorPtr actor = simgrid::s4u::Actor::init(job.name + "#" + std::to_string(rank), host);
    actor->set_property("instance_id", job.name);
    actor->set_property("rank", std::to_string(rank));
    actor->start([&job, rank, trace] {
      simgrid::s4u::this_actor::sleep_until(job.start);
      smpi_replay_run(job.name.c_str(), static_cast<int>(rank), 0, trace.c_str());
      job.end = std::max(job.end, simgrid::s4u::Engine::get_clock());
    });
  }
}

} // namespace

int main(int argc, char* argv[])
{
  simgrid::s4u::Engine engine(&argc, argv); /* takes the --cfg= and --log= words */
  if (argc != 3)
    fail("usage: jobs_replay PLATFORM JOBS [--cfg=NAME:VALUE]...");
  std::vector<Job> jobs = read_jobs(argv[2]);
  engine.load_platform(argv[1]);
  SMPI_init();
  for (Job& job : jobs)
    start_job(engine, job);
  engine.run();
  SMPI_finalize();
  for (const Job& job : jobs)
    std::printf("{\"job\":\"%s\",\"ranks\":%zu,\"start_s\":%.17g,\"end_s\":%.17g,\"time_s\":%.17g}\n",
                job.name.c_str(), job.ranks.size(), job.start, job.end, job.end - job.start);
  return 0;
}
