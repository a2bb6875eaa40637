// The environment dynamix starts dynamix-torch with: the pinned kernel variables, the opt-out.
#include "apps/portable_kernels.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "sim/io/input_error.h"

namespace dynamix {
namespace {

std::string value_in(const std::vector<std::string>& environment, const std::string& name) {
  const auto found = std::find_if(environment.begin(), environment.end(),
                                  [&](const auto& entry) { return entry.starts_with(name + "="); });
  return found == environment.end() ? "(unset)" : found->substr(name.size() + 1);
}

TEST_CASE("dynamix-torch runs the kernels every x86-64 CPU has, whatever the environment asked") {
  const std::vector<std::string> asked = {"PATH=/usr/bin", "OPENBLAS_CORETYPE=SkylakeX",
                                          "ATEN_CPU_CAPABILITY=avx512"};
  CHECK_FALSE(kernels_pinned(asked));
  const std::vector<std::string> started = with_pinned_kernels(asked);
  CHECK(value_in(started, "PATH") == "/usr/bin");
  CHECK(value_in(started, "OPENBLAS_CORETYPE") == "Prescott");
  CHECK(value_in(started, "ATEN_CPU_CAPABILITY") == "default");
  CHECK(value_in(started, "GLIBC_TUNABLES") == "glibc.cpu.hwcaps=-AVX2,-FMA,-FMA4");
  CHECK(started.size() == asked.size() + 1);
  CHECK(kernels_pinned(started));
  CHECK(with_pinned_kernels(started) == started);
}

TEST_CASE("The user's other glibc tunables stay, before the pinned one") {
  const std::vector<std::string> started =
      with_pinned_kernels({"GLIBC_TUNABLES=glibc.malloc.check=3"});
  CHECK(value_in(started, "GLIBC_TUNABLES") ==
        "glibc.malloc.check=3:glibc.cpu.hwcaps=-AVX2,-FMA,-FMA4");
  CHECK(kernels_pinned(started));
}

TEST_CASE("DYNAMIX_KERNELS=native leaves the libraries to choose by the CPU") {
  const std::vector<std::string> native = {"DYNAMIX_KERNELS=native", "OPENBLAS_CORETYPE=Haswell"};
  CHECK(with_pinned_kernels(native) == native);
  CHECK_FALSE(kernels_pinned(native));
  CHECK(kernels_pinned(with_pinned_kernels({"DYNAMIX_KERNELS=portable"})));
}

TEST_CASE("Another DYNAMIX_KERNELS value is an input error that names the variable") {
  try {
    with_pinned_kernels({"DYNAMIX_KERNELS=fast"});
    FAIL("no error");
  } catch (const InputError& error) {
    CHECK(error.source() == "DYNAMIX_KERNELS");
    CHECK(error.found() == "'fast'");
  }
}

TEST_CASE("Each pinned variable says which library reads it and why") {
  REQUIRE(pinned_kernel_variables().size() == 3);
  for (const PinnedVariable& pinned : pinned_kernel_variables()) {
    CAPTURE(pinned.name);
    CHECK_FALSE(pinned.value.empty());
    CHECK(pinned.why.size() > 40);
  }
}

}  // namespace
}  // namespace dynamix
