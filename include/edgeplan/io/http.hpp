// Files on a web server, read without downloading them: HTTP range requests through libcurl (Debian package
// libcurl4), loaded when the first URL is read, so a call that reads none does not pay for mapping libcurl and
// its 30 libraries (docs/performance.md, "Start-up"). Proxies come from the environment as libcurl reads them
// (https_proxy, no_proxy, ...); HF_TOKEN is sent to the Hugging Face endpoint only (hub_endpoint()). Every wait
// is bounded by EDGEPLAN_HTTP_TIMEOUT seconds (default 30). What was read of a file is kept in a header cache
// (EDGEPLAN_CACHE_DIR, else $XDG_CACHE_HOME/edgeplan, else ~/.cache/edgeplan), checked against the server's
// ETag or Last-Modified and the file's size on the next read. docs/profiles.md, "Remote models".
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "edgeplan/util/result.hpp"

namespace edgeplan::io {

// Whether `s` is an http:// or https:// URL.
bool is_url(std::string_view s);

// The Hugging Face endpoint: HF_ENDPOINT, else https://huggingface.co, without a trailing '/'.
std::string hub_endpoint();

// A remote file, read piece by piece with range requests; a server that ignores Range, answers short or changes
// the file between two reads is an error, as is a read past kMaxRemoteBytes in all. Errors say what went wrong,
// not which URL: the caller names it.
class RemoteFile {
 public:
  static constexpr std::uint64_t kMaxRemoteBytes = 256ull << 20;

  // Asks the server for the file's size (one request for its first byte) and takes what the cache holds of it.
  static Result<RemoteFile> open(const std::string& url);
  RemoteFile(RemoteFile&&) noexcept;
  RemoteFile& operator=(RemoteFile&&) noexcept;
  ~RemoteFile();

  std::uint64_t size() const;
  // Copies n bytes at offset to out (offset + n <= size()), from the cache or the server.
  Result<bool> read(std::uint64_t offset, std::size_t n, std::byte* out);
  // Bytes the server sent for this file so far.
  std::uint64_t fetched() const;
  // Writes what was read from the start of the file to the cache, for the next call that reads it.
  void save_cache() const;

 private:
  struct State;
  explicit RemoteFile(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

// The whole body of a GET of `url` (a Hub listing, a config.json), at most max_bytes; `what` names it in errors.
Result<std::string> http_get(const std::string& url, std::uint64_t max_bytes, const std::string& what);

}  // namespace edgeplan::io
