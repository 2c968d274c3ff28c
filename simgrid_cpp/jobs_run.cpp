/*
 * jobs_run.cpp - several MPI jobs sharing one machine, in one simulation on one
 * platform, each an MPI application of its own (its own MPI_COMM_WORLD), so
 * that they contend for its links as the jobs of a shared machine do. A job is
 * replayed (its recorded time-independent trace, one file per rank) or online
 * (its app binary, built by smpicc, run with its arguments).
 *
 *   jobs_run PLATFORM JOBS [--online [TMPDIR]] [--cfg=NAME:VALUE]... [--log=...]...
 *
 * TMPDIR (online) is where SMPI copies each rank's binary (smpi/tmpdir), set
 * here because a --cfg value cannot hold a blank or a comma (SimGrid splits
 * --cfg values there); without it, the environment's TMPDIR as smpirun takes
 * it (its -tmpdir's default), else SimGrid's /tmp.
 *
 * JOBS has one line per rank, the ranks of a job in rank order:
 *   JOB START_S HOST TRACE                  (replayed)
 *   JOB START_S HOST BINARY [ARG]...        (--online)
 * JOB names the job (one word), START_S is when its ranks start (simulated
 * seconds), HOST the host of the rank; TRACE the rank's TI trace file (one of
 * the files an SMPI recording lists in its index), or BINARY and ARGs the app
 * and its arguments, the same on every line of the job. In TRACE, BINARY and
 * ARG, %XX is the byte XX (how a blank or a '%' is written) and a lone '%' is
 * the empty word, so that paths and arguments with blanks pass.
 * A job's lines need not be adjacent; every line of a job gives the same START_S.
 *
 * Output, once the simulation is over: one JSON object per job on stderr, each
 * on a line of its own after "jobs_run: ", in the order of their first line,
 *   {"job":JOB,"ranks":N,"start_s":START,"end_s":END,"time_s":END - START}
 * END is when the last rank of the job ended. What the apps print goes to stdout
 * as it is. Exit codes: 0 ok, 2 bad command line or jobs file (one
 * "jobs_run: error:" line on stderr), else the status of the first failure of
 * an app (SimGrid patch 0018: SMPI_exit_status), as smpirun would exit.
 *
 * What SimGrid's smpirun -replay does for one trace (smpireplaymain), this does
 * for several (the idea of SimGrid's examples/smpi/replay_multiple, with the
 * ranks placed and started from the jobs file instead of a deployment file);
 * online, what smpirun does for one binary (SMPI_executable_start, patch 0018).
 */
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <smpi/smpi.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Job {
  std::string name;
  double start = 0;
  std::vector<std::string> hosts;
  std::vector<std::string> traces;  /* replayed: one per rank */
  std::vector<std::string> command; /* online: the binary and its arguments */
  double end = 0;
};

[[noreturn]] void fail(const std::string& message)
{
  std::fprintf(stderr, "jobs_run: error: %s\n", message.c_str());
  std::exit(2);
}

/* A word of the jobs file's TRACE, BINARY or ARG: %XX the byte XX, a lone '%' the empty word. */
std::string decoded(const std::string& word, const std::string& where)
{
  if (word == "%")
    return "";
  std::string bytes;
  for (size_t i = 0; i < word.size(); i++) {
    if (word[i] != '%') {
      bytes += word[i];
      continue;
    }
    if (i + 2 >= word.size() || not std::isxdigit(static_cast<unsigned char>(word[i + 1])) ||
        not std::isxdigit(static_cast<unsigned char>(word[i + 2])))
      fail(where + ": '%' is followed by two hexadecimal digits in '" + word + "'");
    bytes += static_cast<char>(std::stoi(word.substr(i + 1, 2), nullptr, 16));
    i += 2;
  }
  return bytes;
}

/* One line of the jobs file into its job (added to jobs when new); false for a blank line. */
bool read_line(const std::string& line, bool online, std::vector<Job>& jobs, std::map<std::string, size_t>& index,
               const std::string& where)
{
  std::istringstream words(line);
  std::string name;
  std::string host;
  double start;
  if (not(words >> name))
    return false;
  std::vector<std::string> rest;
  for (std::string word; words >> word;)
    rest.push_back(word);
  std::istringstream head(line);
  head >> name >> start >> host;
  if (not head || start < 0 || rest.size() < 3 || (not online && rest.size() != 3))
    fail(where + ": expected 'JOB START_S HOST " + (online ? "BINARY [ARG]...'" : "TRACE'") + ", got '" + line + "'");
  auto plain = [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_' || c == '.'; };
  if (not std::all_of(name.begin(), name.end(), plain))
    fail(where + ": a job's name is letters, digits, '-', '_', '.': '" + name + "'");
  std::vector<std::string> command;
  for (auto word = rest.begin() + 2; word != rest.end(); ++word)
    command.push_back(decoded(*word, where));
  auto [at, added] = index.try_emplace(name, jobs.size());
  if (added)
    jobs.push_back(Job{name, start, {}, {}, online ? command : std::vector<std::string>{}, 0});
  Job& job = jobs[at->second];
  if (job.start != start)
    fail(where + ": job " + name + " starts at two times");
  if (online && job.command != command)
    fail(where + ": job " + name + " runs two commands");
  job.hosts.push_back(host);
  if (not online)
    job.traces.push_back(command[0]);
  return true;
}

std::vector<Job> read_jobs(const std::string& path, bool online)
{
  std::ifstream file(path);
  if (not file)
    fail("cannot read the jobs file '" + path + "'");
  std::vector<Job> jobs;
  std::map<std::string, size_t> index;
  std::string line;
  for (int number = 1; std::getline(file, line); number++)
    read_line(line, online, jobs, index, path + ":" + std::to_string(number));
  if (jobs.empty())
    fail("the jobs file '" + path + "' names no job");
  return jobs;
}

std::vector<simgrid::s4u::Host*> hosts_of(const simgrid::s4u::Engine& engine, const Job& job)
{
  std::vector<simgrid::s4u::Host*> hosts;
  for (const std::string& name : job.hosts) {
    simgrid::s4u::Host* host = engine.host_by_name_or_null(name);
    if (host == nullptr)
      fail("job " + job.name + ": the platform has no host '" + name + "'");
    hosts.push_back(host);
  }
  return hosts;
}

/* A replayed job: one actor per rank, each replaying its trace from the job's start. */
void start_replay(const std::vector<simgrid::s4u::Host*>& hosts, Job& job)
{
  SMPI_app_instance_register(job.name.c_str(), nullptr, static_cast<int>(hosts.size()));
  for (size_t rank = 0; rank < hosts.size(); rank++) {
    std::string trace = job.traces[rank];
    simgrid::s4u::ActorPtr actor = simgrid::s4u::Actor::init(job.name + "#" + std::to_string(rank), hosts[rank]);
    actor->set_property("instance_id", job.name);
    actor->set_property("rank", std::to_string(rank));
    actor->start([&job, rank, trace] {
      simgrid::s4u::this_actor::sleep_until(job.start);
      smpi_replay_run(job.name.c_str(), static_cast<int>(rank), 0, trace.c_str());
      job.end = std::max(job.end, simgrid::s4u::Engine::get_clock());
    });
  }
}

/* The online jobs, by one launcher actor in the order of their starts: at its start, each job's binary deployed as an
 * MPI application of its own, and a watcher that waits for its ranks (its end, its last rank's). One actor deploys
 * them all because deploying one registers its binary by a simcall, during which another launcher would see it half
 * done. */
void start_online(simgrid::s4u::Host* host, std::vector<Job>& jobs, std::vector<std::vector<simgrid::s4u::Host*>> hosts)
{
  host->add_actor("jobs#launcher", [&jobs, hosts = std::move(hosts)] {
    std::vector<size_t> order(jobs.size());
    for (size_t i = 0; i < order.size(); i++)
      order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&jobs](size_t a, size_t b) { return jobs[a].start < jobs[b].start; });
    for (size_t i : order) {
      Job& job = jobs[i];
      simgrid::s4u::this_actor::sleep_until(job.start);
      std::vector<std::string> args(job.command.begin() + 1, job.command.end());
      SMPI_executable_start(job.command[0], hosts[i], args, job.name);
      hosts[i][0]->add_actor(job.name + "#watcher", [&job] {
        SMPI_app_instance_join(job.name);
        job.end = simgrid::s4u::Engine::get_clock();
      });
    }
  });
}

} // namespace

int main(int argc, char* argv[])
{
  simgrid::s4u::Engine engine(&argc, argv); /* takes the --cfg= and --log= words */
  bool online = (argc == 4 || argc == 5) && std::strcmp(argv[3], "--online") == 0;
  if (argc != 3 && not online)
    fail("usage: jobs_run PLATFORM JOBS [--online [TMPDIR]] [--cfg=NAME:VALUE]...");
  const char* tmpdir = argc == 5 ? argv[4] : std::getenv("TMPDIR");
  if (online && tmpdir != nullptr && *tmpdir != '\0')
    simgrid::s4u::Engine::set_config("smpi/tmpdir", std::string(tmpdir));
  std::vector<Job> jobs = read_jobs(argv[2], online);
  engine.load_platform(argv[1]);
  SMPI_init();
  std::vector<std::vector<simgrid::s4u::Host*>> hosts;
  for (Job& job : jobs) {
    hosts.push_back(hosts_of(engine, job));
    if (not online)
      start_replay(hosts.back(), job);
  }
  if (online) {
    simgrid::s4u::Host* first = hosts[0][0];
    start_online(first, jobs, std::move(hosts));
  }
  engine.run();
  int status = SMPI_exit_status();
  SMPI_finalize();
  std::fflush(stdout);
  for (const Job& job : jobs)
    std::fprintf(stderr, "jobs_run: {\"job\":\"%s\",\"ranks\":%zu,\"start_s\":%.17g,\"end_s\":%.17g,\"time_s\":%.17g}\n",
                 job.name.c_str(), job.hosts.size(), job.start, job.end, job.end - job.start);
  return status;
}
