// GpuCatalog: the shipped catalog, its sources, and errors in catalog files.
#include "sim/cluster/gpu_catalog.h"

#include <doctest/doctest.h>

#include <string>

#include "sim/io/config_node.h"
#include "sim/io/input_error.h"
#include "tests/fixtures.h"

namespace dynamix {
namespace {

using testing::error_of;

const char* kOneGpu = R"(gpus:
  - name: X1
    peak_tflops: 100
    memory_gb: 16
    max_efficiency: 0.2
    half_efficiency_batch: 8
    fixed_overhead_ms: 2
    sources:
      peak_tflops: "datasheet"
      memory_gb: "datasheet"
      max_efficiency: "calibrated"
      half_efficiency_batch: "assumed"
      fixed_overhead_ms: "assumed"
)";

TEST_CASE("The built-in catalog has the data-center and consumer GPUs with sourced numbers") {
  const GpuCatalog catalog = GpuCatalog::builtin();
  for (const char* name : {"V100", "A100", "H100", "T4", "RTX3090"}) {
    CAPTURE(name);
    const GpuSpec* gpu = catalog.find(name);
    REQUIRE(gpu != nullptr);
    CHECK(gpu->name == name);
    CHECK(gpu->sources.size() == 5);
    for (const auto& [field, citation] : gpu->sources) CHECK(citation.size() > 8);
  }
  CHECK(catalog.find("v100") == nullptr);
  CHECK(catalog.find("B200") == nullptr);
  CHECK(catalog.names().front() == "V100");
  CHECK(catalog.find("T4")->peak_tflops < catalog.find("V100")->peak_tflops);
  CHECK(catalog.find("V100")->peak_tflops < catalog.find("A100")->peak_tflops);
  CHECK(catalog.find("A100")->peak_tflops < catalog.find("H100")->peak_tflops);
  CHECK(catalog.find("A100")->fixed_overhead == std::chrono::milliseconds(3));
}

TEST_CASE("A catalog file reads every field") {
  const GpuCatalog catalog = GpuCatalog::load(ConfigNode::parse(kOneGpu, "g.yaml"));
  REQUIRE(catalog.names() == std::vector<std::string>{"X1"});
  const GpuSpec& gpu = *catalog.find("X1");
  CHECK(gpu.peak_tflops == 100);
  CHECK(gpu.memory_gb == 16);
  CHECK(gpu.max_efficiency == doctest::Approx(0.2));
  CHECK(gpu.half_efficiency_batch == 8);
  CHECK(gpu.fixed_overhead == std::chrono::milliseconds(2));
  CHECK(gpu.sources.at("max_efficiency") == "calibrated");
}

TEST_CASE("Catalog errors name the file, line and key") {
  auto load_error = [](const std::string& text) {
    return error_of([&] { GpuCatalog::load(ConfigNode::parse(text, "g.yaml")); });
  };
  std::string text = kOneGpu;
  SUBCASE("a number without its source") {
    text.replace(text.find("      memory_gb: \"datasheet\"\n"), 29, "");
    CHECK(load_error(text) ==
          "g.yaml:9: gpus.0.sources.memory_gb: expected a value for required key 'memory_gb', "
          "found none");
  }
  SUBCASE("an efficiency above one") {
    text.replace(text.find("0.2"), 3, "1.5");
    CHECK(load_error(text) ==
          "g.yaml:5: gpus.0.max_efficiency: expected a fraction in (0, 1], found '1.5'");
  }
  SUBCASE("an unknown key") {
    text.replace(text.find("    sources:"), 0, "    tdp_w: 300\n");
    CHECK(load_error(text).starts_with(
        "g.yaml:8: gpus.0.tdp_w: expected one of the known keys (name, peak_tflops"));
  }
  SUBCASE("a duplicate name") {
    CHECK(load_error(text + text.substr(text.find("  - name"))) ==
          "g.yaml:14: gpus.1.name: expected a GPU name not already in the catalog, found 'X1'");
  }
  SUBCASE("a missing file") {
    CHECK(error_of([] {
            GpuCatalog::load(std::string("/nonexistent/gpus.yaml"));
          }).starts_with("/nonexistent/gpus.yaml: expected a readable file"));
  }
}

}  // namespace
}  // namespace dynamix
