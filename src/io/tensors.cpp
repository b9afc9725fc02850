#include "edgeplan/io/tensors.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "edgeplan/core/float16.hpp"
#include "edgeplan/io/gguf.hpp"
#include "edgeplan/io/input_file.hpp"
#include "edgeplan/util/names.hpp"
#include "edgeplan/io/text.hpp"

namespace edgeplan::io {
namespace {

std::uint64_t read_le(std::span<const std::uint8_t> bytes, std::size_t at, std::size_t width) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < width; ++i) v |= static_cast<std::uint64_t>(bytes[at + i]) << (8 * i);
  return v;
}

// Where a tensor file's bytes come from: memory (the test seam) or a file on disk, of which only the header
// and the one tensor's bytes are read.
class Input {
 public:
  Input(std::span<const std::uint8_t> bytes, const std::string& display)
      : memory_(bytes), size_(bytes.size()), display_(display) {}
  Input(std::ifstream& file, std::uint64_t size, const std::string& display)
      : file_(&file), size_(size), display_(display) {}

  std::uint64_t size() const { return size_; }
  // The n bytes at `at`; at + n <= size().
  Result<std::vector<std::uint8_t>> read(std::uint64_t at, std::uint64_t n) const {
    if (!file_) {
      const auto from = memory_.begin() + static_cast<std::ptrdiff_t>(at);
      return std::vector<std::uint8_t>(from, from + static_cast<std::ptrdiff_t>(n));
    }
    std::vector<std::uint8_t> out(static_cast<std::size_t>(n));
    file_->seekg(static_cast<std::streamoff>(at));
    if (!file_->read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(n))) {
      return Error{fmt::format("{}: byte {}: cannot read {} bytes", display_, at, n)};
    }
    return out;
  }

 private:
  std::span<const std::uint8_t> memory_;
  std::ifstream* file_ = nullptr;
  std::uint64_t size_;
  const std::string& display_;
};

enum class Element { f32, f16, bf16 };

// The safetensors format's bound on its JSON header (huggingface/safetensors, "Format").
constexpr std::uint64_t kMaxSafetensorsHeader = 100'000'000;

std::size_t element_bytes(Element e) { return e == Element::f32 ? 4 : 2; }

// Converts count little-endian elements starting at `at` (bounds already checked).
std::vector<float> convert(std::span<const std::uint8_t> bytes, std::size_t at, std::uint64_t count, Element e) {
  std::vector<float> out(count);
  const std::size_t width = element_bytes(e);
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t raw = read_le(bytes, at + i * width, width);
    switch (e) {
      case Element::f32: {
        const auto bits = static_cast<std::uint32_t>(raw);
        std::memcpy(&out[i], &bits, sizeof bits);
        break;
      }
      case Element::f16: out[i] = f16_to_f32(static_cast<std::uint16_t>(raw)); break;
      case Element::bf16: out[i] = bf16_to_f32(static_cast<std::uint16_t>(raw)); break;
    }
  }
  return out;
}

// rows x cols from a shape; nullopt when the element count overflows or is zero.
std::optional<std::pair<std::uint64_t, std::uint64_t>> matrix_shape(const std::vector<std::uint64_t>& shape) {
  std::uint64_t rows = 1;
  if (shape.empty()) return std::nullopt;
  for (std::size_t i = 0; i + 1 < shape.size(); ++i) {
    if (shape[i] != 0 && rows > std::numeric_limits<std::uint64_t>::max() / shape[i]) return std::nullopt;
    rows *= shape[i];
  }
  const std::uint64_t cols = shape.back();
  if (rows == 0 || cols == 0 || rows > std::numeric_limits<std::uint64_t>::max() / cols / 4) return std::nullopt;
  return std::pair{rows, cols};
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

// The value after 'key': in a .npy header dict; empty when absent.
std::string_view dict_value(std::string_view header, std::string_view key) {
  const std::string quoted = fmt::format("'{}':", key);
  const auto at = header.find(quoted);
  if (at == std::string_view::npos) return {};
  std::string_view rest = header.substr(at + quoted.size());
  rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
  return rest;
}

// The tensor `name` of a GGUF file (or its only tensor), which must be F32, F16 or BF16.
struct GgufPick {
  const GgufTensor* tensor = nullptr;
  Element element = Element::f32;
  std::uint64_t rows = 0, cols = 0;
};

Result<GgufPick> pick_gguf(const GgufFile& f, const std::string& display, const std::string& name) {
  std::vector<std::string> names;
  for (const GgufTensor& t : f.tensors) names.push_back(t.name);
  const GgufTensor* t = nullptr;
  if (name.empty()) {
    if (f.tensors.size() != 1) {
      return Error{fmt::format("{}: holds {} tensors; pick one with --tensor ({}{})", display, names.size(),
                               fmt::join(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(names.size(), 8)), ", "),
                               names.size() > 8 ? ", ..." : "")};
    }
    t = &f.tensors.front();
  }
  for (const GgufTensor& candidate : f.tensors) {
    if (!t && candidate.name == name) t = &candidate;
  }
  if (!t) return Error{fmt::format("{}: no tensor named '{}'{}", display, clipped(name), util::did_you_mean(name, names))};
  GgufPick p{t};
  if (t->type->name == "F32") {
    p.element = Element::f32;
  } else if (t->type->name == "F16") {
    p.element = Element::f16;
  } else if (t->type->name == "BF16") {
    p.element = Element::bf16;
  } else {
    return Error{fmt::format("{}: tensor '{}' is {} (expected F32, F16 or BF16: quantize from the unquantized weights)",
                             display, clipped(t->name), t->type->name)};
  }
  std::vector<std::uint64_t> shape(t->dims.begin(), t->dims.end());
  std::ranges::reverse(shape);  // outermost first: dims[0], the row length, last
  const auto dims = matrix_shape(shape);
  if (!dims) return Error{fmt::format("{}: tensor '{}' holds no matrix", display, clipped(t->name))};
  p.rows = dims->first;
  p.cols = dims->second;
  return p;
}

Result<Tensor> npy_from(const Input& in, const std::string& display) {
  auto fail = [&](std::uint64_t offset, const std::string& what) {
    return Error{fmt::format("{}: byte {}: {}", display, offset, what)};
  };
  static constexpr std::uint8_t kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  const std::uint64_t size = in.size();
  if (size < 10) return fail(0, "not a .npy file (it does not start with \\x93NUMPY)");
  const auto lead = in.read(0, std::min<std::uint64_t>(size, 12));
  if (!lead) return lead.error();
  const std::span<const std::uint8_t> bytes = *lead;
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    return fail(0, "not a .npy file (it does not start with \\x93NUMPY)");
  }
  const std::uint8_t major = bytes[6];
  if (major < 1 || major > 3) return fail(6, fmt::format("unsupported .npy format version {} (expected 1, 2 or 3)", major));
  const std::size_t len_width = major == 1 ? 2 : 4;
  if (size < 8 + len_width) return fail(8, "the file ends inside the header length");
  const std::uint64_t header_len = read_le(bytes, 8, len_width);
  const std::size_t header_at = 8 + len_width;
  if (header_len > size - header_at) {
    return fail(8, fmt::format("header length {} runs past the end of the file ({} bytes)", header_len, size));
  }
  const auto header_bytes = in.read(header_at, header_len);
  if (!header_bytes) return header_bytes.error();
  const std::string_view header(reinterpret_cast<const char*>(header_bytes->data()), header_len);

  const std::string_view descr = dict_value(header, "descr");
  Element element{};
  if (descr.starts_with("'<f4'")) {
    element = Element::f32;
  } else if (descr.starts_with("'<f2'")) {
    element = Element::f16;
  } else {
    const auto end = descr.find(',');
    return fail(header_at, fmt::format("dtype {} is not supported (expected '<f4' or '<f2')",
                                       descr.empty() ? "(missing)" : clipped(descr.substr(0, end))));
  }
  const std::string_view order = dict_value(header, "fortran_order");
  if (order.starts_with("True")) return fail(header_at, "Fortran-order arrays are not supported (save in C order)");
  if (!order.starts_with("False")) return fail(header_at, "the header has no fortran_order");

  std::string_view shape_src = dict_value(header, "shape");
  if (!shape_src.starts_with('(') || shape_src.find(')') == std::string_view::npos) {
    return fail(header_at, "the header has no shape tuple");
  }
  shape_src = shape_src.substr(1, shape_src.find(')') - 1);
  std::vector<std::uint64_t> shape;
  while (true) {
    shape_src.remove_prefix(std::min(shape_src.find_first_not_of(" ,"), shape_src.size()));
    if (shape_src.empty()) break;
    std::uint64_t dim = 0;
    std::size_t digits = 0;
    while (digits < shape_src.size() && shape_src[digits] >= '0' && shape_src[digits] <= '9') {
      if (dim > (std::numeric_limits<std::uint64_t>::max() - 9) / 10) return fail(header_at, "a shape dimension is too large");
      dim = dim * 10 + static_cast<std::uint64_t>(shape_src[digits] - '0');
      ++digits;
    }
    if (digits == 0) return fail(header_at, "the shape is not a tuple of whole numbers");
    shape.push_back(dim);
    shape_src.remove_prefix(digits);
  }
  const auto dims = matrix_shape(shape);
  if (!dims) return fail(header_at, fmt::format("shape {} holds no matrix (a dimension is 0 or too large)", shape_text(shape)));

  const std::uint64_t data_at = header_at + header_len;
  const std::uint64_t need = dims->first * dims->second * element_bytes(element);
  if (need > size - data_at) {
    return fail(data_at, fmt::format("shape {} needs {} bytes of data but the file has {}", shape_text(shape), need,
                                     size - data_at));
  }
  const auto data = in.read(data_at, need);
  if (!data) return data.error();
  return Tensor{"", std::string(descr.substr(1, 3)), dims->first, dims->second,
                convert(*data, 0, dims->first * dims->second, element)};
}

// A safetensors file's JSON header, checked against the file's size, and where its data starts.
struct SafetensorsHeader {
  nlohmann::json json;
  std::uint64_t data_at = 0;
};

Result<SafetensorsHeader> safetensors_header(const Input& in, const std::string& display) {
  auto fail = [&](std::uint64_t offset, const std::string& what) {
    return Error{fmt::format("{}: byte {}: {}", display, offset, what)};
  };
  const std::uint64_t size = in.size();
  if (size < 8) return fail(0, "not a .safetensors file (shorter than its 8-byte header length)");
  const auto lead = in.read(0, 8);
  if (!lead) return lead.error();
  const std::uint64_t header_len = read_le(*lead, 0, 8);
  if (header_len > size - 8) {
    return fail(0, fmt::format("header length {} runs past the end of the file ({} bytes)", header_len, size));
  }
  if (header_len > kMaxSafetensorsHeader) {
    return fail(0, fmt::format("header length {} is above the format's limit of {} bytes", header_len,
                               kMaxSafetensorsHeader));
  }
  const auto header_bytes = in.read(8, header_len);
  if (!header_bytes) return header_bytes.error();
  SafetensorsHeader h;
  try {
    h.json = nlohmann::json::parse(header_bytes->begin(), header_bytes->end());
  } catch (const nlohmann::json::parse_error& e) {
    return fail(8 + e.byte, "the header is not valid JSON");
  } catch (const nlohmann::json::out_of_range&) {  // a number past the double range: 1e999
    return fail(8, "the header is not valid JSON: a number is out of range");
  }
  if (!h.json.is_object()) return fail(8, "the header is not a JSON object");
  h.data_at = 8 + header_len;
  return h;
}

// A tensor's entry in a safetensors header: its dtype, shape and data bytes, checked against the data section.
Result<SafetensorsEntry> safetensors_entry(const nlohmann::json& info, const std::string& name, std::uint64_t data_at,
                                           std::uint64_t size, const std::string& display) {
  auto fail = [&](std::uint64_t offset, const std::string& what) {
    return Error{fmt::format("{}: byte {}: {}", display, offset, what)};
  };
  const std::string where = fmt::format("tensor '{}'", clipped(name));
  if (!info.is_object() || !info.contains("dtype") || !info.contains("shape") || !info.contains("data_offsets")) {
    return fail(8, where + " needs dtype, shape and data_offsets");
  }
  if (!info["dtype"].is_string()) return fail(8, where + ": dtype is not a string");
  SafetensorsEntry e{name, info["dtype"].get<std::string>(), {}, 0, 0};
  if (!info["shape"].is_array()) return fail(8, where + ": shape is not an array");
  for (const auto& d : info["shape"]) {
    if (!d.is_number_unsigned()) return fail(8, where + ": shape holds a value that is not a whole number");
    e.shape.push_back(d.get<std::uint64_t>());
  }
  const auto& offsets = info["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned()) {
    return fail(8, where + ": data_offsets must be two whole numbers [begin, end]");
  }
  const auto begin = offsets[0].get<std::uint64_t>(), end = offsets[1].get<std::uint64_t>();
  const std::uint64_t data_size = size - data_at;
  if (begin > end || end > data_size) {
    return fail(data_at, fmt::format("{} has data_offsets [{}, {}] outside the {} data bytes", where, begin, end, data_size));
  }
  e.offset = begin;
  e.bytes = end - begin;
  return e;
}

Result<Tensor> safetensors_from(const Input& in, const std::string& display, const std::string& name) {
  auto fail = [&](std::uint64_t offset, const std::string& what) {
    return Error{fmt::format("{}: byte {}: {}", display, offset, what)};
  };
  auto h = safetensors_header(in, display);
  if (!h) return h.error();
  const nlohmann::json& header = h->json;
  std::vector<std::string> names;
  for (const auto& [key, value] : header.items()) {
    if (key != "__metadata__") names.push_back(key);
  }
  std::string wanted = name;
  if (wanted.empty()) {
    if (names.size() != 1) {
      return Error{fmt::format("{}: holds {} tensors; pick one with --tensor ({})", display, names.size(),
                               fmt::join(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(names.size(), 8)), ", "))};
    }
    wanted = names.front();
  }
  if (!header.contains(wanted) || wanted == "__metadata__") {
    return Error{fmt::format("{}: no tensor named '{}'{}", display, clipped(wanted), util::did_you_mean(wanted, names))};
  }
  auto entry = safetensors_entry(header[wanted], wanted, h->data_at, in.size(), display);
  if (!entry) return entry.error();
  const std::string where = fmt::format("tensor '{}'", clipped(wanted));
  Element element{};
  if (entry->dtype == "F32") {
    element = Element::f32;
  } else if (entry->dtype == "F16") {
    element = Element::f16;
  } else if (entry->dtype == "BF16") {
    element = Element::bf16;
  } else {
    return fail(8, fmt::format("{} has dtype {} (expected F32, F16 or BF16)", where, clipped(entry->dtype)));
  }
  const auto dims = matrix_shape(entry->shape);
  if (!dims) return fail(8, fmt::format("{} has shape {}, which holds no matrix", where, shape_text(entry->shape)));
  const std::uint64_t need = dims->first * dims->second * element_bytes(element);
  if (entry->bytes != need) {
    return fail(h->data_at + entry->offset, fmt::format("{} has {} data bytes but shape {} of {} needs {}", where,
                                                       entry->bytes, shape_text(entry->shape), entry->dtype, need));
  }
  const auto data = in.read(h->data_at + entry->offset, need);
  if (!data) return data.error();
  return Tensor{wanted, entry->dtype, dims->first, dims->second, convert(*data, 0, dims->first * dims->second, element)};
}

// The tensor `name` of a GGUF file whose header is f: only its bytes are read.
Result<Tensor> gguf_from(const Input& in, const GgufFile& f, const std::string& display, const std::string& name) {
  auto p = pick_gguf(f, display, name);
  if (!p) return p.error();
  // read_gguf has checked that every tensor's data lies inside the file.
  const auto data = in.read(f.data_offset + p->tensor->offset, p->tensor->bytes);
  if (!data) return data.error();
  return Tensor{p->tensor->name, std::string(p->tensor->type->name), p->rows, p->cols,
                convert(*data, 0, p->rows * p->cols, p->element)};
}

}  // namespace

Result<std::vector<SafetensorsEntry>> read_safetensors_entries(const std::string& path) {
  auto in = open_input(path);
  if (!in) return Error{fmt::format("cannot read safetensors file '{}': {}", path, in.error().message)};
  const Input input(in->stream, in->size, path);
  auto h = safetensors_header(input, path);
  if (!h) return h.error();
  std::vector<SafetensorsEntry> out;
  for (const auto& [key, value] : h->json.items()) {
    if (key == "__metadata__") continue;
    auto e = safetensors_entry(value, key, h->data_at, in->size, path);
    if (!e) return e.error();
    out.push_back(std::move(*e));
  }
  return out;
}

Result<Tensor> read_npy(std::span<const std::uint8_t> bytes, const std::string& display) {
  return npy_from(Input(bytes, display), display);
}

Result<Tensor> read_safetensors(std::span<const std::uint8_t> bytes, const std::string& display,
                                const std::string& name) {
  return safetensors_from(Input(bytes, display), display, name);
}

Result<Tensor> read_gguf_tensor(std::span<const std::uint8_t> bytes, const std::string& display,
                                const std::string& name) {
  auto f = read_gguf(std::as_bytes(bytes), display);
  if (!f) return f.error();
  return gguf_from(Input(bytes, display), *f, display, name);
}

Result<Tensor> read_tensor_file(const std::string& path, const std::string& name) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext != ".npy" && ext != ".safetensors" && ext != ".gguf") {
    return Error{fmt::format("{}: unknown tensor file type '{}' (expected .npy, .safetensors or .gguf)", path, ext)};
  }
  // Only the header and the one tensor's bytes are read: weight files are large.
  if (ext == ".gguf") {
    auto f = read_gguf_file(path);
    if (!f) return f.error();
    auto file = open_input(path);
    if (!file) return Error{fmt::format("cannot read tensor file '{}': {}", path, file.error().message)};
    return gguf_from(Input(file->stream, f->file_bytes, path), *f, path, name);
  }
  auto file = open_input(path);
  if (!file) return Error{fmt::format("cannot read tensor file '{}': {}", path, file.error().message)};
  const Input input(file->stream, file->size, path);
  if (ext == ".npy") {
    if (!name.empty()) return Error{fmt::format("{}: a .npy file holds one array; drop --tensor", path)};
    return npy_from(input, path);
  }
  return safetensors_from(input, path, name);
}

}  // namespace edgeplan::io
