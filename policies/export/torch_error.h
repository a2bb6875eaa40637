// LibTorch errors as one short line for the messages of dynamix's own errors.
#pragma once

#include <c10/util/Exception.h>

#include <exception>
#include <string>

namespace dynamix {

/// LibTorch's message, first line only and cut short: some quote the file's bytes.
inline std::string torch_error_line(const std::exception& error) {
  constexpr std::size_t kLongest = 160;
  const auto* c10_error = dynamic_cast<const c10::Error*>(&error);
  std::string text = c10_error ? c10_error->what_without_backtrace() : error.what();
  text = text.substr(0, text.find('\n'));
  if (text.size() > kLongest) text = text.substr(0, kLongest) + "...";
  return text;
}

}  // namespace dynamix
