#include "edgeplan/io/gguf.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <numeric>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "edgeplan/io/http.hpp"
#include "edgeplan/io/input_file.hpp"
#include "edgeplan/io/text.hpp"

namespace edgeplan::io {
namespace {

constexpr std::uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr int kMaxArrayDepth = 4;             // arrays of arrays of ... deeper than this are rejected

// The first tensor (in order) whose name an earlier one has, or nullopt: by the names' order, 8 bytes a tensor
// where a set would copy every name.
std::optional<std::size_t> first_repeated_name(const std::vector<GgufTensor>& tensors) {
  std::vector<std::size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::ranges::stable_sort(order, {}, [&](std::size_t i) -> std::string_view { return tensors[i].name; });
  std::optional<std::size_t> first;
  for (std::size_t k = 1; k < order.size(); ++k) {
    if (tensors[order[k]].name == tensors[order[k - 1]].name) first = std::min(first.value_or(order[k]), order[k]);
  }
  return first;
}

// Where the bytes come from: memory (tests, fuzzers) or a file read on demand.
class Source {
 public:
  virtual ~Source() = default;
  virtual std::uint64_t size() const = 0;
  // Copies n bytes at offset to out; offset + n <= size(). False on an I/O error, which error() then describes.
  virtual bool read(std::uint64_t offset, std::size_t n, std::byte* out) = 0;
  virtual std::string error() const { return "read error"; }
};

class MemorySource final : public Source {
 public:
  explicit MemorySource(std::span<const std::byte> bytes) : bytes_(bytes) {}
  std::uint64_t size() const override { return bytes_.size(); }
  bool read(std::uint64_t offset, std::size_t n, std::byte* out) override {
    if (n > 0) std::memcpy(out, bytes_.data() + offset, n);  // an empty array's out is null: memcpy may not see it
    return true;
  }

 private:
  std::span<const std::byte> bytes_;
};

// Reads the file through a window of kChunk bytes: the header is read front to back, so each byte is read
// from disk once, and the tensor data after the header never is.
class FileSource final : public Source {
 public:
  FileSource(std::ifstream& in, std::uint64_t size) : in_(in), size_(size) {}
  std::uint64_t size() const override { return size_; }
  bool read(std::uint64_t offset, std::size_t n, std::byte* out) override {
    while (n > 0) {
      if (offset < start_ || offset >= start_ + buffer_.size()) {
        const std::uint64_t len = std::min<std::uint64_t>(kChunk, size_ - offset);
        buffer_.resize(static_cast<std::size_t>(len));
        in_.seekg(static_cast<std::streamoff>(offset));
        if (!in_.read(reinterpret_cast<char*>(buffer_.data()), static_cast<std::streamsize>(len))) return false;
        start_ = offset;
      }
      const auto at = static_cast<std::size_t>(offset - start_);
      const std::size_t take = std::min(n, buffer_.size() - at);
      std::memcpy(out, buffer_.data() + at, take);
      out += take;
      offset += take;
      n -= take;
    }
    return true;
  }

 private:
  static constexpr std::uint64_t kChunk = 1 << 16;
  std::ifstream& in_;
  std::uint64_t size_;
  std::uint64_t start_ = 0;
  std::vector<std::byte> buffer_;
};

// A file on a web server, read by range requests (RemoteFile: only the header's bytes cross the network).
class RemoteSource final : public Source {
 public:
  explicit RemoteSource(RemoteFile& file) : file_(file) {}
  std::uint64_t size() const override { return file_.size(); }
  bool read(std::uint64_t offset, std::size_t n, std::byte* out) override {
    auto r = file_.read(offset, n, out);
    if (!r) error_ = r.error().message;
    return r.ok();
  }
  std::string error() const override { return error_; }

 private:
  RemoteFile& file_;
  std::string error_;
};

struct GgufError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::uint64_t min_value_bytes(GgufType t) {
  switch (t) {
    case GgufType::u8: case GgufType::i8: case GgufType::boolean: return 1;
    case GgufType::u16: case GgufType::i16: return 2;
    case GgufType::u32: case GgufType::i32: case GgufType::f32: return 4;
    case GgufType::u64: case GgufType::i64: case GgufType::f64: case GgufType::string: return 8;
    case GgufType::array: return 12;
  }
  return 1;
}

bool is_integer(GgufType t) {
  switch (t) {
    case GgufType::u8: case GgufType::i8: case GgufType::u16: case GgufType::i16: case GgufType::u32:
    case GgufType::i32: case GgufType::u64: case GgufType::i64: return true;
    default: return false;
  }
}

bool is_signed(GgufType t) {
  return t == GgufType::i8 || t == GgufType::i16 || t == GgufType::i32 || t == GgufType::i64;
}

class Parser {
 public:
  Parser(Source& source, const std::string& display) : src_(source), display_(display) {}

  GgufFile run() {
    GgufFile f;
    f.file_bytes = src_.size();
    if (u32("the magic") != kMagic) fail(0, "not a GGUF file (the first 4 bytes are not \"GGUF\")");
    f.version = u32("the version");
    if ((f.version & 0xFFFF) == 0 && f.version != 0) fail(4, "big-endian GGUF files are not supported");
    if (f.version != 2 && f.version != 3) {
      fail(4, fmt::format("GGUF version {} is not supported (only versions 2 and 3)", f.version));
    }
    const std::uint64_t tensor_count = u64("the tensor count");
    const std::uint64_t kv_count = u64("the metadata count");
    const std::uint64_t left = remaining();
    if (kv_count > left / 13 || tensor_count > (left - kv_count * 13) / 32) {
      fail(8, fmt::format("{} tensors and {} metadata entries cannot fit in the {} bytes that follow",
                          tensor_count, kv_count, left));
    }
    f.metadata.reserve(static_cast<std::size_t>(kv_count));
    std::set<std::string> keys;
    for (std::uint64_t i = 0; i < kv_count; ++i) {
      const std::uint64_t key_at = pos_;
      std::string key = str("a metadata key");
      if (key.empty()) fail(key_at, "empty metadata key");
      if (!keys.insert(key).second) fail(key_at, fmt::format("duplicate metadata key {}", clipped(key)));
      const std::uint64_t type_at = pos_;
      const GgufType type = value_type(u32("a value type"), type_at, key);
      const std::uint64_t value_at = pos_;
      GgufValue v = value(type, key, 0);
      if (key == "general.alignment") {
        const auto a = v.as_uint();
        if (type != GgufType::u32 || !a || *a == 0 || !std::has_single_bit(*a)) {
          fail(value_at, "general.alignment must be a u32 power of 2");
        }
        f.alignment = *a;
      }
      f.metadata.emplace_back(std::move(key), std::move(v));
    }
    f.tensors.reserve(static_cast<std::size_t>(tensor_count));
    std::vector<std::uint64_t> tensor_at;
    for (std::uint64_t i = 0; i < tensor_count; ++i) {
      tensor_at.push_back(pos_);
      f.tensors.push_back(tensor());
    }
    if (const std::optional<std::size_t> i = first_repeated_name(f.tensors)) {
      fail(tensor_at[*i], fmt::format("duplicate tensor {}", clipped(f.tensors[*i].name)));
    }
    f.data_offset = (pos_ + f.alignment - 1) / f.alignment * f.alignment;
    for (std::size_t i = 0; i < f.tensors.size(); ++i) {
      const GgufTensor& t = f.tensors[i];
      if (t.offset % f.alignment != 0) {
        fail(tensor_at[i], fmt::format("tensor {}: data offset {} is not a multiple of the alignment {}", clipped(t.name),
                                       t.offset, f.alignment));
      }
      const std::uint64_t room = f.file_bytes > f.data_offset ? f.file_bytes - f.data_offset : 0;
      if (t.offset > room || t.bytes > room - t.offset) {
        fail(tensor_at[i], fmt::format("tensor {}: its {} bytes of data at offset {} run past the end of the file",
                                       clipped(t.name), t.bytes, t.offset));
      }
    }
    // No two tensors share a byte of data: in order of offset, each starts at or after the end of the one before
    // (which, none overlapping so far, ends last).
    std::vector<std::size_t> order(f.tensors.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::ranges::stable_sort(order, {}, [&](std::size_t i) { return f.tensors[i].offset; });
    const GgufTensor* last = nullptr;
    for (const std::size_t i : order) {
      const GgufTensor& t = f.tensors[i];
      if (t.bytes == 0) continue;
      if (last && t.offset < last->offset + last->bytes) {
        fail(tensor_at[i], fmt::format("tensors '{}' and '{}' overlap at bytes {}-{}", last->name, t.name,
                                       f.data_offset + t.offset,
                                       f.data_offset + std::min(last->offset + last->bytes, t.offset + t.bytes) - 1));
      }
      last = &t;
    }
    return f;
  }

 private:
  [[noreturn]] void fail(std::uint64_t at, const std::string& what) const {
    throw GgufError(fmt::format("{}: byte {}: {}", display_, at, what));
  }

  std::uint64_t remaining() const { return src_.size() - pos_; }

  void take(std::uint64_t n, const char* what, std::byte* out) {
    if (n > remaining()) {
      fail(pos_, fmt::format("{} needs {} bytes but the file ends after {}", what, n, remaining()));
    }
    if (!src_.read(pos_, static_cast<std::size_t>(n), out)) fail(pos_, src_.error());
    pos_ += n;
  }

  template <class T>
  T scalar(const char* what) {
    std::array<std::byte, sizeof(T)> b{};
    take(sizeof(T), what, b.data());
    std::conditional_t<sizeof(T) == 8, std::uint64_t, std::conditional_t<sizeof(T) == 4, std::uint32_t,
                       std::conditional_t<sizeof(T) == 2, std::uint16_t, std::uint8_t>>> u = 0;
    for (std::size_t i = sizeof(T); i-- > 0;) u = static_cast<decltype(u)>((u << 8) | std::to_integer<unsigned>(b[i]));
    return std::bit_cast<T>(u);
  }
  std::uint32_t u32(const char* what) { return scalar<std::uint32_t>(what); }
  std::uint64_t u64(const char* what) { return scalar<std::uint64_t>(what); }

  // The length of a string of at most `max` bytes, checked against what remains.
  std::uint64_t str_length(const char* what, std::uint64_t max) {
    const std::uint64_t at = pos_;
    const std::uint64_t len = u64(what);
    if (len > remaining()) {
      fail(at, fmt::format("{} claims {} bytes but only {} remain", what, len, remaining()));
    }
    if (len > max) fail(at, fmt::format("{} of {} bytes is longer than edgeplan reads ({} at most)", what, len, max));
    return len;
  }

  std::string str(const char* what, std::uint64_t max = kGgufMaxName) {
    const std::uint64_t len = str_length(what, max);
    std::string s(static_cast<std::size_t>(len), '\0');
    take(len, what, reinterpret_cast<std::byte*>(s.data()));
    return s;
  }

  // An array's element type and length, checked against the bounds and what remains.
  GgufArray array_header(const std::string& key, int depth) {
    const std::uint64_t at = pos_;
    if (depth >= kMaxArrayDepth) fail(at, fmt::format("{}: arrays nested more than {} deep", clipped(key), kMaxArrayDepth));
    GgufArray a;
    a.element = value_type(u32("an array type"), at, key);
    a.length = u64("an array length");
    if (a.length > remaining() / min_value_bytes(a.element)) {
      fail(at, fmt::format("{}: an array of {} elements cannot fit in the {} bytes that remain", clipped(key), a.length,
                           remaining()));
    }
    if (a.length > kGgufMaxArray) {
      fail(at, fmt::format("{}: an array of {} elements is longer than edgeplan reads ({} at most)", clipped(key), a.length,
                           kGgufMaxArray));
    }
    return a;
  }

  // Moves past the elements of an array that is not kept: fixed-size ones in one step, strings by their
  // lengths, nested arrays element by element.
  void skip_elements(const GgufArray& a, const std::string& key, int depth) {
    if (a.element == GgufType::string) {
      for (std::uint64_t i = 0; i < a.length; ++i) pos_ += str_length("a string", kGgufMaxString);
    } else if (a.element == GgufType::array) {
      for (std::uint64_t i = 0; i < a.length; ++i) skip_elements(array_header(key, depth + 1), key, depth + 1);
    } else {
      pos_ += a.length * min_value_bytes(a.element);  // array_header checked that these bytes remain
    }
  }

  GgufType value_type(std::uint32_t id, std::uint64_t at, const std::string& key) const {
    if (id > static_cast<std::uint32_t>(GgufType::f64)) fail(at, fmt::format("{}: unknown value type {}", clipped(key), id));
    return static_cast<GgufType>(id);
  }

  GgufValue value(GgufType type, const std::string& key, int depth) {
    GgufValue v;
    v.type = type;
    switch (type) {
      case GgufType::u8: v.value = std::uint64_t{scalar<std::uint8_t>("a u8")}; break;
      case GgufType::i8: v.value = std::int64_t{scalar<std::int8_t>("an i8")}; break;
      case GgufType::u16: v.value = std::uint64_t{scalar<std::uint16_t>("a u16")}; break;
      case GgufType::i16: v.value = std::int64_t{scalar<std::int16_t>("an i16")}; break;
      case GgufType::u32: v.value = std::uint64_t{u32("a u32")}; break;
      case GgufType::i32: v.value = std::int64_t{scalar<std::int32_t>("an i32")}; break;
      case GgufType::f32: v.value = double{scalar<float>("an f32")}; break;
      case GgufType::u64: v.value = u64("a u64"); break;
      case GgufType::i64: v.value = scalar<std::int64_t>("an i64"); break;
      case GgufType::f64: v.value = scalar<double>("an f64"); break;
      case GgufType::string: v.value = str("a string", kGgufMaxString); break;
      case GgufType::boolean: {
        const std::uint64_t at = pos_;
        const std::uint8_t b = scalar<std::uint8_t>("a bool");
        if (b > 1) fail(at, fmt::format("{}: a bool must be 0 or 1 (got {})", clipped(key), b));
        v.value = b == 1;
        break;
      }
      case GgufType::array: {
        GgufArray items = array_header(key, depth);
        if (is_integer(items.element)) {
          items.raw.resize(static_cast<std::size_t>(items.length * min_value_bytes(items.element)));
          take(items.raw.size(), "an array", items.raw.data());
        } else {
          skip_elements(items, key, depth);
        }
        v.value = std::move(items);
        break;
      }
    }
    return v;
  }

  GgufTensor tensor() {
    GgufTensor t;
    t.name = str("a tensor name");
    const std::uint64_t dims_at = pos_;
    const std::uint32_t n_dims = u32("a dimension count");
    if (n_dims == 0 || n_dims > kGgufMaxDims) {
      fail(dims_at, fmt::format("tensor {}: {} dimensions (expected 1 to {})", clipped(t.name), n_dims, kGgufMaxDims));
    }
    std::uint64_t elements = 1;
    for (std::uint32_t d = 0; d < n_dims; ++d) {
      t.dims.push_back(u64("a dimension"));
      if (t.dims.back() != 0 && elements > std::numeric_limits<std::int64_t>::max() / t.dims.back()) {
        fail(dims_at, fmt::format("tensor {}: the element count overflows", clipped(t.name)));
      }
      elements *= t.dims.back();
    }
    const std::uint64_t type_at = pos_;
    const std::uint32_t id = u32("a tensor type");
    t.type = find_ggml_type_id(id);
    if (!t.type) fail(type_at, fmt::format("tensor {}: unknown ggml type id {}", clipped(t.name), id));
    const std::uint64_t row = t.dims[0];
    if (row % t.type->block != 0) {
      fail(type_at, fmt::format("tensor {}: row length {} is not a multiple of the {} block of {}", clipped(t.name), row,
                                t.type->name, t.type->block));
    }
    const std::uint64_t blocks = elements / t.type->block;
    if (blocks > std::numeric_limits<std::uint64_t>::max() / t.type->bytes) {
      fail(type_at, fmt::format("tensor {}: its size overflows", clipped(t.name)));
    }
    t.bytes = blocks * t.type->bytes;
    t.offset = u64("a tensor offset");
    return t;
  }

  Source& src_;
  const std::string& display_;
  std::uint64_t pos_ = 0;
};

Result<GgufFile> parse(Source& source, const std::string& display) {
  try {
    return Parser(source, display).run();
  } catch (const GgufError& e) {
    return Error{e.what()};
  }
}

}  // namespace

std::optional<std::uint64_t> GgufValue::as_uint() const {
  if (const auto* u = std::get_if<std::uint64_t>(&value)) return *u;
  if (const auto* i = std::get_if<std::int64_t>(&value); i && *i >= 0) return static_cast<std::uint64_t>(*i);
  return std::nullopt;
}

TensorDims::TensorDims(std::initializer_list<std::uint64_t> dims) {
  for (const std::uint64_t d : dims) push_back(d);
}

void TensorDims::push_back(std::uint64_t d) {
  if (size_ == kGgufMaxDims) throw std::length_error("a tensor has at most 4 dimensions");
  dims_[size_++] = d;
}

double GgufTensor::rows() const {
  double n = 1;
  for (std::size_t d = 1; d < dims.size(); ++d) n *= static_cast<double>(dims[d]);
  return n;
}

bool GgufArray::holds_integers() const { return is_integer(element); }

std::optional<std::uint64_t> GgufArray::as_uint(std::uint64_t i) const {
  if (!holds_integers() || i >= length) return std::nullopt;
  const std::uint64_t size = min_value_bytes(element);
  std::uint64_t u = 0;
  for (std::uint64_t b = size; b-- > 0;) u = (u << 8) | std::to_integer<std::uint64_t>(raw[i * size + b]);
  if (is_signed(element) && (u >> (8 * size - 1)) != 0) return std::nullopt;  // negative
  return u;
}

const GgufValue* GgufFile::find(std::string_view key) const {
  const auto it = std::ranges::find_if(metadata, [&](const auto& kv) { return kv.first == key; });
  return it == metadata.end() ? nullptr : &it->second;
}

std::optional<std::string> GgufFile::string(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v || !v->as_string()) return std::nullopt;
  return *v->as_string();
}

Result<GgufFile> read_gguf(std::span<const std::byte> bytes, const std::string& display) {
  MemorySource source(bytes);
  return parse(source, display);
}

Result<GgufFile> read_gguf_file(const std::string& path) {
  if (is_url(path)) {
    auto remote = RemoteFile::open(path);
    if (!remote) return Error{fmt::format("cannot read GGUF file '{}': {}", path, remote.error().message)};
    RemoteSource source(*remote);
    auto f = parse(source, path);
    if (f) remote->save_cache();
    return f;
  }
  auto in = open_input(path);
  if (!in) return Error{fmt::format("cannot read GGUF file '{}': {}", path, in.error().message)};
  FileSource source(in->stream, in->size);
  return parse(source, path);
}

std::optional<std::vector<std::string>> gguf_split_paths(const std::string& path) {
  // PREFIX-iiiii-of-nnnnn.gguf: 5 digits each (more when the number needs them, as %05d prints it).
  static constexpr std::string_view kExt = ".gguf", kOf = "-of-";
  if (!path.ends_with(kExt)) return std::nullopt;
  const std::string stem = path.substr(0, path.size() - kExt.size());
  const std::size_t of = stem.rfind(kOf);
  if (of == std::string::npos) return std::nullopt;
  const std::size_t dash = stem.rfind('-', of == 0 ? 0 : of - 1);
  if (dash == std::string::npos || of == 0) return std::nullopt;
  const std::string no = stem.substr(dash + 1, of - dash - 1), count = stem.substr(of + kOf.size());
  auto number = [](const std::string& digits) -> std::optional<std::uint32_t> {
    if (digits.size() < 5 || digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return std::nullopt;
    }
    return static_cast<std::uint32_t>(std::stoul(digits));
  };
  const auto i = number(no), n = number(count);
  if (!i || !n || *i < 1 || *i > *n || *n > 99999) return std::nullopt;
  std::vector<std::string> out;
  for (std::uint32_t k = 1; k <= *n; ++k) out.push_back(fmt::format("{}-{:05}-of-{:05}.gguf", stem.substr(0, dash), k, *n));
  return out;
}

Result<GgufFile> read_gguf_model(const std::string& path) {
  auto first = read_gguf_file(path);
  if (!first) return first;
  const GgufValue* count_key = first->find("split.count");
  if (!count_key) return first;
  const std::optional<std::uint64_t> count = count_key->as_uint();
  if (!count || count_key->type == GgufType::boolean) {
    return Error{fmt::format("{}: split.count must be a whole number (gguf-split writes a u16)", path)};
  }
  if (*count <= 1) return first;
  const auto paths = gguf_split_paths(path);
  if (!paths || paths->size() != *count) {
    return Error{fmt::format("{}: split.count is {} but the name is not llama.cpp's PREFIX-0000i-of-{:05}.gguf, so "
                             "the other shards cannot be found", path, *count, *count)};
  }
  // One model: each shard's split.no its place and split.count the set's, split.tensors.count the same in every
  // shard, the model's architecture the same where a shard states it, and every tensor name once in the set.
  GgufFile whole;
  std::uint64_t tensors_expected = 0;
  std::optional<std::string> arch;
  for (std::size_t i = 0; i < paths->size(); ++i) {
    const std::string& shard = (*paths)[i];
    std::error_code ec;
    if (!is_url(shard) && !std::filesystem::is_regular_file(shard, ec)) {
      return Error{fmt::format("{}: shard {} of {} of this split model is missing: {}", path, i + 1, *count, shard)};
    }
    auto f = shard == path ? std::move(first) : read_gguf_file(shard);
    if (!f) return f.error();
    const GgufValue* no = f->find("split.no");
    const GgufValue* n = f->find("split.count");
    if (!no || no->as_uint() != i || !n || n->as_uint() != *count) {
      return Error{fmt::format("{}: split.no and split.count must be {} and {} in shard {} of {}", shard, i, *count,
                               i + 1, *count)};
    }
    const GgufValue* t = f->find("split.tensors.count");
    const std::optional<std::uint64_t> stated = t ? t->as_uint() : std::nullopt;
    if (!stated) {
      return Error{fmt::format("{}: split.tensors.count (a whole number) is missing in shard {} of {}", shard, i + 1,
                               *count)};
    }
    if (i > 0 && *stated != tensors_expected) {
      return Error{fmt::format("{}: shard {} of {} is of another set: its split.tensors.count is {}, shard 1's {}", shard,
                               i + 1, *count, *stated, tensors_expected)};
    }
    if (const std::optional<std::string> a = f->string("general.architecture")) {
      if (arch && *a != *arch) {
        return Error{fmt::format("{}: shard {} of {} is of another model: its general.architecture is {}, shard 1's {}",
                                 shard, i + 1, *count, clipped(*a), clipped(*arch))};
      }
      arch = a;
    }
    for (GgufTensor& tensor : f->tensors) tensor.shard = static_cast<std::uint32_t>(i);
    if (i == 0) {
      tensors_expected = *stated;
      whole = std::move(*f);
      whole.shards = static_cast<std::uint32_t>(*count);
      continue;
    }
    whole.file_bytes += f->file_bytes;
    for (GgufTensor& tensor : f->tensors) whole.tensors.push_back(std::move(tensor));
  }
  // A shard holds each name once (read_gguf), so a name seen twice is in two shards, the later one named.
  if (const std::optional<std::size_t> i = first_repeated_name(whole.tensors)) {
    const GgufTensor& t = whole.tensors[*i];
    return Error{fmt::format("{}: tensor {} of shard {} of {} is in an earlier shard too", (*paths)[t.shard],
                             clipped(t.name), t.shard + 1, *count)};
  }
  if (whole.tensors.size() != tensors_expected) {
    return Error{fmt::format("{}: the {} shards hold {} tensors but split.tensors.count is {}", path, *count,
                             whole.tensors.size(), tensors_expected)};
  }
  return whole;
}

}  // namespace edgeplan::io
