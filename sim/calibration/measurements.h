// Measurements of a real cluster (from scripts/measure_cluster.py or a user's own): all-reduce
// times, per-iteration compute / communication / total times of data-parallel training, and a
// single-rank compute sweep. The CSV schema is in docs/calibration.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dynamix {

enum class MeasurementKind {
  /// One all-reduce of message_bytes over `ranks` ranks.
  kAllReduce,
  /// One data-parallel iteration at batch_per_rank on `ranks` ranks.
  kIteration,
  /// Forward + backward (+ optimizer step) of one rank alone at batch_per_rank.
  kCompute,
};

/// "allreduce", "iteration" or "compute".
const char* kind_name(MeasurementKind kind);

/// One configuration and its median times (seconds).
struct Measurement {
  MeasurementKind kind = MeasurementKind::kAllReduce;
  int ranks = 1;
  /// All-reduce rows: bytes reduced.
  double message_bytes = 0;
  /// Iteration and compute rows: each rank's batch.
  int batch_per_rank = 0;
  /// Iteration rows of a window log whose ranks ran different batches: one per rank (empty
  /// when every rank ran batch_per_rank).
  std::vector<int> batches;
  std::optional<double> compute_s;
  std::optional<double> comm_s;
  /// Whether comm_s counts the wait for the last rank to reach the all-reduce, as a DDP
  /// communication hook times it (measurement CSVs); a serve log's workers subtract that wait.
  bool comm_includes_wait = false;
  double total_s = 0;
  /// 1-based line in its file, for messages.
  int line = 0;
};

/// A short name of a configuration for tables: "allreduce p=2 64KiB", "iteration p=4 b=32".
std::string configuration_label(const Measurement& measurement);

struct MeasurementFile {
  std::string path;
  /// The '#' lines before the header (where, when and how it was measured), without the '#'.
  std::vector<std::string> provenance;
  std::vector<Measurement> rows;
};

/// Reads a measurement CSV, or a `dynamix serve` log (a path ending in ".jsonl": each answered
/// window report is an iteration row: its workers' batches, mean compute and communication time,
/// and the window's mean iteration time; refused reports are skipped). A CSV has '#' provenance
/// lines, a header naming at least kind, ranks and
/// total_s (message_bytes for all-reduce rows, batch_per_rank for the others; compute_s and
/// comm_s optional; other columns ignored), then rows. Bad input (a missing column or cell, a
/// number that is not finite and positive, an unknown kind, no rows) is an InputError naming
/// the file, line and column.
MeasurementFile read_measurements(const std::string& path);

}  // namespace dynamix
