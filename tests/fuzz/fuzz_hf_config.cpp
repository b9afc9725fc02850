// Fuzz harness: bytes read as a Hugging Face config.json and turned into a model.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "edgeplan/io/model_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)edgeplan::io::model_from_hf_config(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz",
                                           "fuzz/config.json");
  return 0;
}
