// The band file and the judgement of a run against it.
#include "apps/band_file.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>

#include "apps/child_process.h"
#include "sim/io/config_node.h"
#include "sim/io/input_error.h"
#include "sim/io/json_writer.h"
#include "sim/io/sources.h"

namespace dynamix {
namespace {

/// The first line of every band file: what `make` may replace, and what `check` expects.
constexpr const char* kBandHeader = "# dynamix reward band: written by dynamix band make";

}  // namespace

std::vector<std::string> train_arguments(const std::string& options) {
  std::vector<std::string> words = split_words(options);
  if (!words.empty() && words.front() == "train") words.erase(words.begin());
  for (const std::string& word : words) {
    for (const char* own : {"--out", "--seed", "--resume", "--help"}) {
      if (word == own || word.starts_with(std::string(own) + "=")) {
        throw InputError("--train-options", 0, "",
                         "options of dynamix train other than --out, --seed, --resume and --help "
                         "(the band sets them)",
                         excerpt(word));
      }
    }
  }
  return words;
}

void fill_band(Band& band, const std::vector<SeedRun>& runs) {
  for (const auto& [bin, ignored] : runs.front().bin_means) {
    std::vector<double> values;
    for (const SeedRun& run : runs) {
      if (run.bin_means.count(bin)) values.push_back(run.bin_means.at(bin));
    }
    if (values.size() != runs.size()) continue;
    const auto [low, high] = std::minmax_element(values.begin(), values.end());
    double mean = 0;
    for (const double value : values) mean += value / static_cast<double>(values.size());
    const double widen = std::max(0.25 * (*high - *low), band.margin * std::abs(mean));
    band.bins.push_back(
        {bin * band.bin_updates + 1, (bin + 1) * band.bin_updates, *low - widen, *high + widen});
  }
  band.min_departure_share = INFINITY;
  double min_rise = INFINITY;
  for (const SeedRun& run : runs) {
    band.min_departure_share = std::min(band.min_departure_share, run.departure_share);
    min_rise = std::min(min_rise, run.rise());
  }
  if (min_rise > 0) band.min_rise = min_rise;
  band.varied_features = runs.front().varied_features;
  for (const SeedRun& run : runs) {
    std::erase_if(band.varied_features, [&](const std::string& name) {
      return std::find(run.varied_features.begin(), run.varied_features.end(), name) ==
             run.varied_features.end();
    });
  }
}

std::string band_yaml(const Band& band) {
  std::ostringstream out;
  out << kBandHeader
      << "\n# dynamix band check --band FILE trains once more and holds the run "
         "against it.\ntrain_options: \""
      << band.train_options << "\"\nscenario_fingerprint: \"" << band.scenario_fingerprint
      << "\"\nseeds: [";
  for (std::size_t i = 0; i < band.seeds.size(); ++i) out << (i ? ", " : "") << band.seeds[i];
  out << "]\nbin_updates: " << band.bin_updates << "\nmargin: " << format_number(band.margin)
      << "\nguard: " << format_number(band.guard) << "\neval_seeds: " << band.eval_seeds << '\n';
  if (band.min_rise) out << "min_rise: " << format_number(*band.min_rise) << '\n';
  out << "min_departure_share: " << format_number(band.min_departure_share)
      << "\nvaried_features: [";
  for (std::size_t i = 0; i < band.varied_features.size(); ++i)
    out << (i ? ", " : "") << band.varied_features[i];
  out << "]\nbins:\n";
  for (const Bin& bin : band.bins) {
    out << "  - {first_update: " << bin.first_update << ", last_update: " << bin.last_update
        << ", low: " << format_number(bin.low) << ", high: " << format_number(bin.high) << "}\n";
  }
  return out.str();
}

Band read_band(const std::string& path) {
  const std::string text = read_text(path);
  if (!text.starts_with(kBandHeader))
    throw InputError(path, 1, "", "a band file written by dynamix band make", "another file");
  const ConfigNode root = ConfigNode::parse(text, path);
  root.reject_unknown({"train_options", "scenario_fingerprint", "seeds", "bin_updates", "margin",
                       "guard", "eval_seeds", "min_rise", "min_departure_share", "varied_features",
                       "bins"});
  Band band;
  band.train_options = root.text("train_options");
  if (root.has("scenario_fingerprint")) {
    band.scenario_fingerprint = root.text("scenario_fingerprint");
  }
  for (const ConfigNode& seed : root.at("seeds").items())
    band.seeds.push_back(static_cast<int>(seed.as_integer()));
  band.bin_updates = root.int_or("bin_updates", 1, 1 << 20, band.bin_updates);
  band.margin = root.at_least_or("margin", 0, band.margin);
  band.guard = root.fraction_or("guard", band.guard);
  band.eval_seeds = root.int_or("eval_seeds", 1, 1000, band.eval_seeds);
  if (root.has("min_rise")) band.min_rise = root.positive("min_rise");
  band.min_departure_share = root.at_least_or("min_departure_share", 0, 0);
  if (const auto features = root.find("varied_features")) {
    for (const ConfigNode& name : features->items()) band.varied_features.push_back(name.as_text());
  }
  for (const ConfigNode& row : root.at("bins").items()) {
    row.reject_unknown({"first_update", "last_update", "low", "high"});
    band.bins.push_back({row.int_or("first_update", 1, INT32_MAX, 1),
                         row.int_or("last_update", 1, INT32_MAX, 1), row.number("low"),
                         row.number("high")});
  }
  if (band.seeds.empty() || band.bins.empty())
    throw InputError(path, 0, band.seeds.empty() ? "seeds" : "bins", "at least one", "none");
  train_arguments(band.train_options);
  return band;
}

void require_replaceable(const std::filesystem::path& out) {
  std::error_code error;
  if (!std::filesystem::exists(out, error)) return;
  const bool ours = std::filesystem::is_regular_file(out, error) &&
                    read_text(out.string()).starts_with(kBandHeader);
  if (!ours)
    throw InputError("--out", 0, "", "a new path or a band file dynamix wrote", out.string());
}

bool judge(const Band& band, const SeedRun& run) {
  bool passed = true;
  for (const Bin& bin : band.bins) {
    const int index = (bin.first_update - 1) / band.bin_updates;
    const auto found = run.bin_means.find(index);
    if (found != run.bin_means.end() && found->second >= bin.low && found->second <= bin.high)
      continue;
    passed = false;
    std::cout << "updates " << bin.first_update << "-" << bin.last_update << ": mean return "
              << (found == run.bin_means.end() ? std::string("missing")
                                               : format_rounded(found->second))
              << " outside [" << format_rounded(bin.low) << ", " << format_rounded(bin.high)
              << "]\n";
  }
  if (band.min_rise && run.rise() < band.guard * *band.min_rise) {
    passed = false;
    std::cout << "flat curve: rise " << format_rounded(run.rise()) << " < "
              << format_rounded(band.guard * *band.min_rise) << '\n';
  }
  if (run.departure_share < band.guard * band.min_departure_share) {
    passed = false;
    std::cout << "no learning: departure share " << format_rounded(run.departure_share) << " < "
              << format_rounded(band.guard * band.min_departure_share)
              << " (an untrained policy departs 0)\n";
  }
  for (const std::string& name : band.varied_features) {
    if (std::find(run.varied_features.begin(), run.varied_features.end(), name) !=
        run.varied_features.end())
      continue;
    passed = false;
    std::cout << "lost input: observation feature " << name
              << " never varied in training (it did in every seed of the band)\n";
  }
  return passed;
}

}  // namespace dynamix
