// The band commands' options tables.
#include "apps/band_options.h"

#include "sim/io/shared_options.h"

namespace dynamix {

namespace {

constexpr int kMaxBins = 100000;

template <typename Member>
auto field(Member member) {
  return [member](auto& options) -> auto& { return options.*member; };
}

KnobTable<BandMakeOptions> make_band_make_knobs() {
  using Rows = KnobRows<BandMakeOptions, ExactNumbers>;
  using Shared = SharedRows<BandMakeOptions>;
  return Rows::table(
      "",
      "dynamix band make: train over seeds 1..N (--seeds N) and store the band their reward "
      "curves span, and how much they learned",
      {Rows::text({.key = "train-options",
                   .meaning = "options of dynamix train, space-separated (no --out, --seed, "
                              "--resume)",
                   .default_value = "required"},
                  field(&BandMakeOptions::train_options)),
       Shared::seeds(field(&BandMakeOptions::seeds)),
       Rows::quantity({.key = "bin-updates", .meaning = "updates per bin of the curve"},
                      field(&BandMakeOptions::bin_updates), integers(1, kMaxBins)),
       Rows::quantity({.key = "margin",
                       .meaning = "widen each bin by this fraction of its mean's magnitude (or a "
                                  "quarter of the seeds' spread, when wider)"},
                      field(&BandMakeOptions::margin), Range{.low = 0, .finite = true}),
       Rows::quantity({.key = "guard",
                       .meaning = "a check must rise, and depart, by this fraction of the seeds' "
                                  "smallest"},
                      field(&BandMakeOptions::guard), Range{.low = 0, .high = 1}),
       Shared::eval_seeds(field(&BandMakeOptions::eval_seeds)),
       Shared::out(field(&BandMakeOptions::out))});
}

KnobTable<BandCheckOptions> make_band_check_knobs() {
  using Rows = KnobRows<BandCheckOptions, ExactNumbers>;
  return Rows::table(
      "",
      "dynamix band check: train once more and fail (status 1) when the curve leaves the band, "
      "stays flat, or the policy departs as rarely as an untrained one",
      {Rows::text(
           {.key = "band", .meaning = "band file to check against", .default_value = "required"},
           field(&BandCheckOptions::band)),
       SharedRows<BandCheckOptions>::seed(field(&BandCheckOptions::seed), "the band's first"),
       Rows::text({.key = "keep", .meaning = "keep the training run in this new folder"},
                  field(&BandCheckOptions::keep))});
}

}  // namespace

const KnobTable<BandMakeOptions>& band_make_knobs() {
  // Built once: the rows are immutable and hold no state.
  static const KnobTable<BandMakeOptions> table = make_band_make_knobs();
  return table;
}

const KnobTable<BandCheckOptions>& band_check_knobs() {
  static const KnobTable<BandCheckOptions> table = make_band_check_knobs();
  return table;
}

}  // namespace dynamix
