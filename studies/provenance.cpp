// Provenance of results.
#include "studies/provenance.h"

#include <algorithm>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include "dynamix_commit.h"
#include "dynamix_config.h"
#include "sim/io/durable_file.h"
#include "sim/io/sha256.h"
#include "sim/io/sources.h"
#include "studies/version.h"

namespace dynamix {

namespace {

/// The first "model name" of /proc/cpuinfo; "unknown" where there is none.
std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  for (int lines = 0; lines < 4096 && std::getline(cpuinfo, line); ++lines) {
    if (!line.starts_with("model name")) continue;
    const std::size_t colon = line.find(':');
    if (colon != std::string::npos) return std::string(trim(line.substr(colon + 1)));
  }
  return "unknown";
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

void write_build(JsonWriter& json) {
  json.key("version");
  json.value(kDynamixVersion);
  json.key("commit");
  json.value(build_commit());
  json.key("features");
  json.begin_object();
  for (const auto& [name, built] : build_features()) {
    json.key(name);
    json.value(built);
  }
  json.end_object();
}

}  // namespace

std::string build_commit() { return DYNAMIX_COMMIT; }

std::vector<std::pair<std::string, bool>> build_features() {
#ifdef DYNAMIX_MPI
  constexpr bool kMpi = true;
#else
  constexpr bool kMpi = false;
#endif
#ifdef DYNAMIX_ADAPTER
  constexpr bool kAdapter = true;
#else
  constexpr bool kAdapter = false;
#endif
#ifdef DYNAMIX_PYTHON_MODULE
  constexpr bool kPython = true;
#else
  constexpr bool kPython = false;
#endif
#ifdef DYNAMIX_PPO
  constexpr bool kPpo = true;
#else
  constexpr bool kPpo = false;
#endif
  return {{"mpi", kMpi}, {"adapter", kAdapter}, {"python", kPython}, {"ppo", kPpo}};
}

void write_provenance(JsonWriter& json, const std::vector<std::string>& inputs) {
  json.begin_object();
  write_build(json);
  json.key("inputs");
  json.begin_array();
  std::vector<std::string> seen;
  for (const std::string& path : inputs) {
    if (std::find(seen.begin(), seen.end(), path) != seen.end()) continue;
    seen.push_back(path);
    json.begin_object();
    json.key("path");
    json.value(path);
    json.key("sha256");
    json.value(sha256_of(read_text(path)));
    json.end_object();
  }
  json.end_array();
  json.end_object();
}

void write_host_provenance(const std::filesystem::path& file) {
  std::ostringstream text;
  JsonWriter json(text);
  json.begin_object();
  write_build(json);
  json.key("cpu");
  json.value(cpu_model());
  json.key("logical_cpus");
  json.value(static_cast<std::int64_t>(std::thread::hardware_concurrency()));
  json.key("date");
  json.value(utc_now());
  json.end_object();
  text << '\n';
  write_durably(file, text.str());
}

}  // namespace dynamix
