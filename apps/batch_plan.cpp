// BatchPlan parsing.
#include "apps/batch_plan.h"

#include <charconv>
#include <sstream>

#include "sim/io/input_error.h"

namespace dynamix {
namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator)) parts.push_back(part);
  if (!text.empty() && text.back() == separator) parts.emplace_back();
  return parts;
}

template <class T>
bool parse_number(const std::string& text, T& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc{} && end == text.data() + text.size();
}

int parse_batch(const std::string& option, const std::string& text) {
  int value = 0;
  if (!parse_number(text, value) || value < 1) {
    throw InputError(option, 0, "", "a batch size that is an integer >= 1", "'" + text + "'");
  }
  return value;
}

}  // namespace

BatchPlan BatchPlan::parse(const std::string& batch_size, const std::string& batch_sizes,
                           const std::string& schedule, std::size_t workers, int default_batch) {
  const int given = !batch_size.empty() + !batch_sizes.empty() + !schedule.empty();
  if (given > 1) {
    throw InputError("--batch-size/--batch-sizes/--schedule", 0, "", "at most one of them",
                     std::to_string(given));
  }
  BatchPlan plan;
  if (!batch_sizes.empty()) {
    std::vector<int> batches;
    for (const std::string& part : split(batch_sizes, ',')) {
      batches.push_back(parse_batch("--batch-sizes", part));
    }
    if (batches.size() != workers) {
      throw InputError("--batch-sizes", 0, "",
                       std::to_string(workers) + " batch sizes, one per worker",
                       std::to_string(batches.size()));
    }
    plan.phases_.push_back({0, batches});
    plan.description_ = "static:" + batch_sizes;
  } else if (!schedule.empty()) {
    double previous = -1;
    for (const std::string& part : split(schedule, ',')) {
      const auto colon = part.find(':');
      double epoch = 0;
      if (colon == std::string::npos || !parse_number(part.substr(0, colon), epoch) || epoch < 0) {
        throw InputError("--schedule", 0, "", "EPOCH:BATCH pairs like 0:64,10:128",
                         "'" + part + "'");
      }
      if (epoch <= previous) {
        throw InputError("--schedule", 0, "", "strictly increasing epochs",
                         "'" + part + "' after epoch " + std::to_string(previous));
      }
      if (previous < 0 && epoch != 0) {
        throw InputError("--schedule", 0, "", "a first phase starting at epoch 0",
                         "'" + part + "'");
      }
      previous = epoch;
      const int batch = parse_batch("--schedule", part.substr(colon + 1));
      plan.phases_.push_back({epoch, std::vector<int>(workers, batch)});
    }
    if (plan.phases_.empty()) throw InputError("--schedule", 0, "", "EPOCH:BATCH pairs", "nothing");
    plan.description_ = "schedule:" + schedule;
  } else {
    const int batch = batch_size.empty() ? default_batch : parse_batch("--batch-size", batch_size);
    plan.phases_.push_back({0, std::vector<int>(workers, batch)});
    plan.description_ = "static:" + std::to_string(batch);
  }
  return plan;
}

const std::vector<int>& BatchPlan::at_epoch(double epochs) const {
  const Phase* current = &phases_.front();
  for (const Phase& phase : phases_) {
    if (phase.from_epoch <= epochs) current = &phase;
  }
  return current->batches;
}

}  // namespace dynamix
