// A reward band's file (`dynamix band make` writes it, `check` reads it) and what it holds a
// run to: each bin's range of mean return, the rise, the departures and the varied features.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dynamix {

struct Bin {
  int first_update = 0;
  int last_update = 0;
  double low = 0;
  double high = 0;
};

/// What `make` stores and `check` holds a run against.
struct Band {
  std::string train_options;
  /// hex_fingerprint of the resolved scenario the band's runs trained on: a band checks only
  /// against the scenario it was made on (a band file without one is checked with a warning).
  std::string scenario_fingerprint;
  std::vector<int> seeds;
  int bin_updates = 20;
  /// Each bin is widened by this fraction of its mean's magnitude (and by a quarter of the
  /// seeds' spread): relative, so that a flat curve of any scale does not fit by an absolute
  /// allowance.
  double margin = 0.05;
  /// A checked run must rise by this fraction of the smallest rise among the band's seeds, and
  /// depart by this fraction of their smallest departure share.
  double guard = 0.2;
  int eval_seeds = 3;
  /// The smallest (last bin - first bin) of mean return over the seeds; absent when one did not
  /// rise, and then only departures guard learning.
  std::optional<double> min_rise;
  double min_departure_share = 0;
  /// The observation features that varied in every seed's training: one that stays constant in
  /// a checked run (zeroed, or never filled) is a lost input.
  std::vector<std::string> varied_features;
  std::vector<Bin> bins;
};

/// One seeded training run, binned, and its greedy policy's share of departing decisions.
struct SeedRun {
  std::map<int, double> bin_means;
  double departure_share = 0;
  /// The names of the features that varied over training.
  std::vector<std::string> varied_features;
  double rise() const {
    return bin_means.empty() ? 0 : bin_means.rbegin()->second - bin_means.begin()->second;
  }
};

/// The train options as given, less a leading "train"; those the band sets itself refused.
std::vector<std::string> train_arguments(const std::string& options);

/// The band over the seeds' runs: bins every run reached, each the seeds' range widened.
void fill_band(Band& band, const std::vector<SeedRun>& runs);

/// The band file's text: kBandHeader's line, then the band as YAML.
std::string band_yaml(const Band& band);

/// The band in `path`; an InputError naming the file and key for anything else.
Band read_band(const std::string& path);

/// Refuses to replace a file that is not a band file (dynamix replaces only what it wrote).
void require_replaceable(const std::filesystem::path& out);

/// Prints each failed condition; true when the run passes.
bool judge(const Band& band, const SeedRun& run);

}  // namespace dynamix
