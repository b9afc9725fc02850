// Fuzz harness: one TOML text fed to every profile loader (device, model, cloud, requests, graph), as if
// read from a file. Each must return a value or an Error, never crash or hang.
#include <cstddef>
#include <cstdint>
#include <string>

#include "edgeplan/io/graph.hpp"
#include "edgeplan/io/profiles.hpp"
#include "edgeplan/io/route.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace edgeplan::io;
  const ProfileText text{"fuzz", "fuzz.toml", "fuzz", std::string(reinterpret_cast<const char*>(data), size)};
  (void)load_device(text, {});
  (void)load_model(text, {});
  (void)load_cloud(text, {});
  (void)load_requests(text);
  (void)load_graph(text, {});
  return 0;
}
