/*
 * platform_check.cpp - proves that a SimGrid platform file loads, and reports
 * what SimGrid made of it as one JSON object on stdout.
 *
 *   platform_check PLATFORM_FILE [--route SRC DST]... [--all-routes]
 *                  [--list-hosts] [--list-cores] [--cfg=NAME:VALUE]... [-h|--help]
 *
 * Output (one line):
 *   {"platform":FILE,"hosts":N,"links":M,
 *    "host_names":[...],                      (only with --list-hosts)
 *    "host_cores":{"NAME":CORES,...},         (only with --list-cores)
 *    "routes":[{"src":..,"dst":..,"links":[..],"latency":SECONDS},...]}
 * A route that spreads a message over several paths (SimGrid patch 0008) also
 * gives "shares":[..], the share of the message that crosses each link.
 * Routes are the --route pairs in command-line order, then (--all-routes)
 * every ordered pair of distinct hosts, hosts sorted by name. A --route may
 * name one host twice: SimGrid's route from a host to itself (its loopback, or
 * the platform's own route for it). host_cores: each host's core count, hosts
 * sorted by name.
 *
 * Exit codes: 0 ok, 1 platform missing/unreadable/rejected by SimGrid,
 * 2 bad command line or unknown host name. SimGrid's own log lines go to
 * stderr, so stdout is pure JSON.
 */
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace {

constexpr int EXIT_LOAD_ERROR = 1;
constexpr int EXIT_USAGE = 2;

constexpr const char* USAGE =
    "usage: platform_check PLATFORM_FILE [--route SRC DST]... [--all-routes] [--list-hosts] [--list-cores]\n"
    "                      [--cfg=NAME:VALUE]... [-h|--help]\n"
    "Loads and seals a SimGrid platform and prints one JSON object on stdout:\n"
    "  {\"platform\", \"hosts\", \"links\", \"host_names\" (with --list-hosts),\n"
    "   \"host_cores\" (with --list-cores), \"routes\"}\n"
    "  --route SRC DST  report the route from host SRC to host DST (repeatable)\n"
    "  --all-routes     report the route of every ordered pair of distinct hosts\n"
    "  --list-hosts     list the host names, sorted\n"
    "  --list-cores     give each host's core count\n"
    "  --cfg=NAME:VALUE SimGrid configuration (e.g. --cfg=network/model:CM02)\n";

struct Options {
  std::string platform;
  std::vector<std::pair<std::string, std::string>> routes;
  bool all_routes = false;
  bool list_hosts = false;
  bool list_cores = false;
};

/* A command-line problem (exit code 2). */
class UsageError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

int fail(int code, const std::string& message)
{
  std::cerr << "platform_check: error: " << message << std::endl;
  return code;
}

/* Parses what the Engine left of the command line (it removes --cfg=/--log=). */
Options parse_args(int argc, char** argv)
{
  Options opt;
  bool have_platform = false;
  for (int i = 1; i < argc; i++) {
    std::string arg = argv[i];
    if (arg == "--route") {
      if (i + 2 >= argc)
        throw UsageError("--route needs two host names: --route SRC DST");
      opt.routes.emplace_back(argv[i + 1], argv[i + 2]);
      i += 2;
    } else if (arg == "--all-routes") {
      opt.all_routes = true;
    } else if (arg == "--list-hosts") {
      opt.list_hosts = true;
    } else if (arg == "--list-cores") {
      opt.list_cores = true;
    } else if (!arg.empty() && arg[0] == '-') {
      throw UsageError("unknown option '" + arg + "' (see --help)");
    } else if (have_platform) {
      throw UsageError("more than one platform file given ('" + opt.platform + "', '" + arg + "')");
    } else {
      opt.platform = arg;
      have_platform = true;
    }
  }
  if (!have_platform)
    throw UsageError("no platform file given (see --help)");
  return opt;
}

/* Returns an empty string if the file can be read, else the reason why not. */
std::string unreadable_reason(const std::string& path)
{
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status))
    return "platform file '" + path + "' does not exist";
  if (fs::is_directory(status))
    return "platform file '" + path + "' is a directory";
  std::ifstream probe(path);
  if (!probe)
    return "platform file '" + path + "' is not readable: " + std::strerror(errno);
  return "";
}

std::string json_string(const std::string& text)
{
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
          out += escaped;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

/* %.17g so that the value round-trips exactly; JSON has no inf/nan. */
std::string json_double(double value)
{
  if (!std::isfinite(value))
    return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

/* Every link's name by its kernel object: routes with shares come from the kernel's route lookup. */
using LinkNames = std::unordered_map<const simgrid::kernel::resource::StandardLinkImpl*, std::string>;

std::string route_json(const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst, const LinkNames& names)
{
  std::vector<simgrid::kernel::resource::StandardLinkImpl*> links;
  std::vector<double> shares;
  std::unordered_set<simgrid::kernel::routing::NetZoneImpl*> zones;
  double latency = 0.0; // the lookup adds to it
  simgrid::kernel::routing::NetZoneImpl::get_global_route_with_netzones(src->get_netpoint(), dst->get_netpoint(),
                                                                        links, &latency, zones, &shares);

  std::string out = "{\"src\":" + json_string(src->get_name()) + ",\"dst\":" + json_string(dst->get_name()) +
                    ",\"links\":[";
  for (size_t i = 0; i < links.size(); i++)
    out += (i ? "," : "") + json_string(names.at(links[i]));
  out += "],\"latency\":" + json_double(latency);
  if (std::any_of(shares.begin(), shares.end(), [](double share) { return share != 1.0; })) {
    out += ",\"shares\":[";
    for (size_t i = 0; i < shares.size(); i++)
      out += (i ? "," : "") + json_double(shares[i]);
    out += "]";
  }
  return out + "}";
}

} // namespace

int main(int argc, char** argv)
{
  // SimGrid's Engine would answer --help itself (with its own config help).
  for (int i = 1; i < argc; i++) {
    if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) {
      std::cout << USAGE;
      return 0;
    }
  }

  try {
    simgrid::s4u::Engine engine(&argc, argv); // consumes --cfg=... and --log=...

    Options opt;
    try {
      opt = parse_args(argc, argv);
    } catch (const UsageError& e) {
      return fail(EXIT_USAGE, e.what());
    }

    std::string reason = unreadable_reason(opt.platform);
    if (!reason.empty())
      return fail(EXIT_LOAD_ERROR, reason);
    engine.load_platform(opt.platform);
    engine.seal_platform(); // routes are only complete once the platform is sealed

    std::vector<simgrid::s4u::Host*> hosts = engine.get_all_hosts();
    std::sort(hosts.begin(), hosts.end(),
              [](const simgrid::s4u::Host* a, const simgrid::s4u::Host* b) { return a->get_name() < b->get_name(); });

    std::vector<std::pair<const simgrid::s4u::Host*, const simgrid::s4u::Host*>> pairs;
    for (const auto& [src_name, dst_name] : opt.routes) {
      const simgrid::s4u::Host* src = engine.host_by_name_or_null(src_name);
      const simgrid::s4u::Host* dst = engine.host_by_name_or_null(dst_name);
      if (src == nullptr || dst == nullptr)
        return fail(EXIT_USAGE, "unknown host '" + (src == nullptr ? src_name : dst_name) + "' in --route");
      pairs.emplace_back(src, dst);
    }
    if (opt.all_routes)
      for (const simgrid::s4u::Host* src : hosts)
        for (const simgrid::s4u::Host* dst : hosts)
          if (src != dst)
            pairs.emplace_back(src, dst);

    // Build the whole document first: an exception half-way must not leave
    // partial JSON on stdout.
    std::string out = "{\"platform\":" + json_string(opt.platform) +
                      ",\"hosts\":" + std::to_string(engine.get_host_count()) +
                      ",\"links\":" + std::to_string(engine.get_link_count());
    if (opt.list_hosts) {
      out += ",\"host_names\":[";
      for (size_t i = 0; i < hosts.size(); i++)
        out += (i ? "," : "") + json_string(hosts[i]->get_name());
      out += "]";
    }
    if (opt.list_cores) {
      out += ",\"host_cores\":{";
      for (size_t i = 0; i < hosts.size(); i++)
        out += (i ? "," : "") + json_string(hosts[i]->get_name()) + ":" + std::to_string(hosts[i]->get_core_count());
      out += "}";
    }
    LinkNames names;
    for (const simgrid::s4u::Link* link : engine.get_all_links())
      names[link->get_impl()] = link->get_name();
    out += ",\"routes\":[";
    for (size_t i = 0; i < pairs.size(); i++)
      out += (i ? "," : "") + route_json(pairs[i].first, pairs[i].second, names);
    out += "]}\n";
    std::cout << out << std::flush;
    return 0;
  } catch (const std::exception& e) { // SimGrid's exceptions derive from std::exception
    return fail(EXIT_LOAD_ERROR, e.what());
  } catch (...) {
    return fail(EXIT_LOAD_ERROR, "unknown exception while loading the platform");
  }
}
