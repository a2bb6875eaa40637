// "Did you mean": the known name closest to a misspelt one, offered only when it is close.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dynamix {

/// The candidate nearest to `name` (case-insensitive edits, a swap of neighbours counting one;
/// ties to the first given) when it is within 2 edits, and within a third of the longer name's
/// length (at least 1), or when one of the two is a prefix of the other; none otherwise, since
/// a far suggestion misleads more than none.
std::optional<std::string> closest_name(std::string_view name,
                                        const std::vector<std::string>& candidates);

/// "; did you mean 'NAME'?" for the closest candidate, or "" when none is close: appended to a
/// message's found part, which stays as it was before the suggestion.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace dynamix
