#include "edgeplan/io/http.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <vector>

#include <curl/curl.h>
#include <fmt/format.h>

#include "edgeplan/util/names.hpp"

namespace edgeplan::io {
namespace {

namespace fs = std::filesystem;

// libcurl's functions, looked up in libcurl.so.4 at the first request.
struct Curl {
  CURLcode (*global_init)(long);
  CURL* (*easy_init)();
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_perform)(CURL*);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  void (*easy_cleanup)(CURL*);
  const char* (*easy_strerror)(CURLcode);
  curl_slist* (*slist_append)(curl_slist*, const char*);
  void (*slist_free_all)(curl_slist*);
};

Result<const Curl*> curl() {
  static const Result<Curl> loaded = []() -> Result<Curl> {
#ifdef __APPLE__
    void* lib = dlopen("libcurl.4.dylib", RTLD_NOW | RTLD_LOCAL);  // macOS ships it
#else
    void* lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
#endif
    if (!lib) {
      return Error{"reading a remote model needs libcurl, which is not installed (Debian: apt-get install libcurl4)"};
    }
    Curl c{};
    bool ok = true;
    auto get = [&](auto& fn, const char* name) {
      void* sym = dlsym(lib, name);
      ok = ok && sym;
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(sym);
    };
    get(c.global_init, "curl_global_init");
    get(c.easy_init, "curl_easy_init");
    get(c.easy_setopt, "curl_easy_setopt");
    get(c.easy_perform, "curl_easy_perform");
    get(c.easy_getinfo, "curl_easy_getinfo");
    get(c.easy_cleanup, "curl_easy_cleanup");
    get(c.easy_strerror, "curl_easy_strerror");
    get(c.slist_append, "curl_slist_append");
    get(c.slist_free_all, "curl_slist_free_all");
    if (!ok) return Error{"the libcurl found lacks a function edgeplan calls: reinstall it (Debian: libcurl4)"};
    if (c.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return Error{"libcurl failed to initialise"};
    return c;
  }();
  if (!loaded) return loaded.error();
  return &*loaded;
}

Result<long> timeout_seconds() {
  const char* text = std::getenv("EDGEPLAN_HTTP_TIMEOUT");
  if (!text || !*text) return 30L;
  long v = 0;
  const char* end = text + std::strlen(text);
  const auto [ptr, ec] = std::from_chars(text, end, v);
  if (ec != std::errc() || ptr != end || v < 1 || v > 3600) {
    return Error{fmt::format("EDGEPLAN_HTTP_TIMEOUT '{}': expected whole seconds from 1 to 3600", text)};
  }
  return v;
}

// The URL as messages show it: without a query string, which may hold a signature.
std::string shown(const std::string& url) { return url.substr(0, url.find('?')); }

std::string host_of(const std::string& url) {
  const auto start = url.find("://");
  if (start == std::string::npos) return url;
  const auto end = url.find_first_of("/?", start + 3);
  return url.substr(start + 3, end == std::string::npos ? std::string::npos : end - start - 3);
}

// One answer to a GET: status, the headers that matter (of the last response, after redirects), the body.
struct Answer {
  long status = 0;
  std::string content_range, etag, last_modified;
  std::vector<std::byte> body;
  bool overflow = false;  // the body ran past the bytes asked for
  long header_status = 0;  // the status line of the response being received
};

struct Transfer {
  Answer* answer;
  std::uint64_t limit;
};

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t bytes = size * n;
  if (t->answer->header_status >= 300) return bytes;  // an error page: its status says what went wrong
  if (t->answer->body.size() + bytes > t->limit) {
    t->answer->overflow = true;
    return 0;  // aborts the transfer
  }
  const auto* p = reinterpret_cast<const std::byte*>(data);
  t->answer->body.insert(t->answer->body.end(), p, p + bytes);
  return bytes;
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto* a = static_cast<Answer*>(user);
  const std::string_view line(data, size * n);
  if (line.starts_with("HTTP/")) {  // a new response (after a redirect): forget the last one's headers
    const auto space = line.find(' ');
    a->header_status = space == std::string_view::npos ? 0 : std::atol(std::string(line.substr(space + 1, 3)).c_str());
    a->content_range.clear();
    a->etag.clear();
    a->last_modified.clear();
  }
  const auto colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name(line.substr(0, colon));
    std::ranges::transform(name, name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) value.remove_suffix(1);
    if (name == "content-range") a->content_range = value;
    if (name == "etag") a->etag = value;
    if (name == "last-modified") a->last_modified = value;
  }
  return size * n;
}

std::string ignores_range(std::uint64_t first, std::uint64_t last) {
  return fmt::format("the server ignores range requests (it answered a request for bytes {}-{} with the whole file); "
                     "edgeplan reads only the header of a remote file: download it and give its path", first, last);
}

// A GET of url, of bytes [first, last] when `range`; at most `limit` bytes of body.
Result<Answer> get(const std::string& url, bool range, std::uint64_t first, std::uint64_t last, std::uint64_t limit) {
  const auto c = curl();
  if (!c) return c.error();
  const auto timeout = timeout_seconds();
  if (!timeout) return timeout.error();
  const Curl& f = **c;
  CURL* h = f.easy_init();
  if (!h) return Error{"libcurl failed to start a transfer"};
  Answer a;
  Transfer t{&a, limit};
  curl_slist* headers = nullptr;
  const std::string user_agent = fmt::format("edgeplan/{}", EDGEPLAN_VERSION);
  const std::string range_text = fmt::format("{}-{}", first, last);
  const std::string endpoint = hub_endpoint();
  if (const char* token = std::getenv("HF_TOKEN");
      token && *token && (url == endpoint || url.starts_with(endpoint + "/"))) {
    headers = f.slist_append(headers, fmt::format("Authorization: Bearer {}", token).c_str());
  }
  f.easy_setopt(h, CURLOPT_URL, url.c_str());
  f.easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
  f.easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
  f.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  f.easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  f.easy_setopt(h, CURLOPT_USERAGENT, user_agent.c_str());
  f.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  f.easy_setopt(h, CURLOPT_CONNECTTIMEOUT, *timeout);
  // A transfer that stalls (under a byte a second) for the timeout is abandoned; a slow but moving one is not.
  f.easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
  f.easy_setopt(h, CURLOPT_LOW_SPEED_TIME, *timeout);
  if (range) f.easy_setopt(h, CURLOPT_RANGE, range_text.c_str());
  if (headers) f.easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  f.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  f.easy_setopt(h, CURLOPT_WRITEDATA, &t);
  f.easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  f.easy_setopt(h, CURLOPT_HEADERDATA, &a);
  const CURLcode rc = f.easy_perform(h);
  f.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a.status);
  f.easy_cleanup(h);
  f.slist_free_all(headers);
  if (rc == CURLE_WRITE_ERROR && a.overflow) {
    if (range && a.status == 200) {
      return Error{ignores_range(first, last)};
    }
    return Error{fmt::format("the answer is larger than the {} bytes allowed", limit)};
  }
  if (rc == CURLE_OPERATION_TIMEDOUT) {
    return Error{fmt::format("no answer from {} within {} s (EDGEPLAN_HTTP_TIMEOUT sets the wait)", host_of(url),
                             *timeout)};
  }
  if (rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_RESOLVE_PROXY || rc == CURLE_COULDNT_CONNECT) {
    return Error{fmt::format("cannot reach {} ({}): offline? A proxy is taken from https_proxy / http_proxy",
                             host_of(url), f.easy_strerror(rc))};
  }
  if (rc == CURLE_PARTIAL_FILE || rc == CURLE_RECV_ERROR || rc == CURLE_GOT_NOTHING) {
    return Error{fmt::format("the server's answer ended early, after {} bytes ({})", a.body.size(),
                             f.easy_strerror(rc))};
  }
  if (rc != CURLE_OK) return Error{f.easy_strerror(rc)};
  if (a.status == 401 || a.status == 403) {
    return Error{fmt::format("HTTP {}: not authorised (a gated or private Hugging Face repository needs HF_TOKEN set "
                             "to a token whose account has access)", a.status)};
  }
  if (a.status == 404) return Error{"no such file on the server (HTTP 404)"};
  if (a.status != 200 && a.status != 206) return Error{fmt::format("HTTP {}", a.status)};
  if (range && a.status == 200) {
    return Error{ignores_range(first, last)};
  }
  return a;
}

// "bytes FIRST-LAST/TOTAL" of a 206 answer.
struct ContentRange {
  std::uint64_t first = 0, last = 0, total = 0;
};

std::optional<ContentRange> parse_content_range(std::string_view s) {
  if (!s.starts_with("bytes ")) return std::nullopt;
  s.remove_prefix(6);
  ContentRange r;
  auto number = [&](std::uint64_t& v, char stop) {
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr == s.data()) return false;
    s.remove_prefix(static_cast<std::size_t>(ptr - s.data()));
    if (stop == 0) return s.empty();
    if (s.empty() || s.front() != stop) return false;
    s.remove_prefix(1);
    return true;
  };
  if (!number(r.first, '-') || !number(r.last, '/') || !number(r.total, 0)) return std::nullopt;
  if (r.first > r.last || r.last >= r.total) return std::nullopt;
  return r;
}

fs::path cache_dir() {
  if (const char* d = std::getenv("EDGEPLAN_CACHE_DIR"); d && *d) return fs::path(d) / "headers";
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return fs::path(d) / "edgeplan" / "headers";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : ".") / ".cache" / "edgeplan" / "headers";
}

// The cache file of a URL: its hash.
fs::path cache_file(const std::string& url) { return cache_dir() / fmt::format("{:016x}.bin", util::name_hash(url)); }

constexpr std::string_view kCacheMagic = "edgeplan header cache 1";

}  // namespace

bool is_url(std::string_view s) { return s.starts_with("https://") || s.starts_with("http://"); }

std::string hub_endpoint() {
  std::string e = "https://huggingface.co";
  if (const char* v = std::getenv("HF_ENDPOINT"); v && *v) e = v;
  while (e.ends_with('/')) e.pop_back();
  return e;
}

struct RemoteFile::State {
  std::string url;
  std::uint64_t size = 0;
  std::string validator;        // ETag, else Last-Modified; empty: the file is not cached
  std::vector<std::byte> head;  // bytes [0, head.size()) of the file
  std::uint64_t fetched = 0;
  bool cache_dirty = false;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  bool progress_shown = false;
};

RemoteFile::RemoteFile(std::unique_ptr<State> s) : s_(std::move(s)) {}
RemoteFile::RemoteFile(RemoteFile&&) noexcept = default;
RemoteFile& RemoteFile::operator=(RemoteFile&&) noexcept = default;
RemoteFile::~RemoteFile() {
  if (s_ && s_->progress_shown) std::fputs("\r\033[K", stderr);
}

Result<RemoteFile> RemoteFile::open(const std::string& url) {
  auto a = get(url, true, 0, 0, 1);
  if (!a) return a.error();
  const auto range = parse_content_range(a->content_range);
  if (!range || range->first != 0 || a->body.size() != 1) {
    return Error{fmt::format("the server's answer to a range request has no valid Content-Range ('{}')",
                             a->content_range)};
  }
  auto s = std::make_unique<State>();
  s->url = url;
  s->size = range->total;
  s->fetched = a->body.size();
  s->head = std::move(a->body);
  s->validator = !a->etag.empty() ? "etag " + a->etag : !a->last_modified.empty() ? "modified " + a->last_modified : "";
  // The cache: magic, URL, size and validator on a line each, then the bytes from the start of the file.
  if (!s->validator.empty()) {
    std::ifstream in(cache_file(url), std::ios::binary);
    std::string magic, cached_url, cached_size, validator;
    if (std::getline(in, magic) && magic == kCacheMagic && std::getline(in, cached_url) && cached_url == url &&
        std::getline(in, cached_size) && cached_size == std::to_string(s->size) && std::getline(in, validator) &&
        validator == s->validator) {
      std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (bytes.size() > s->head.size() && bytes.size() <= s->size) {
        s->head.resize(bytes.size());
        std::memcpy(s->head.data(), bytes.data(), bytes.size());
      }
    }
  }
  return RemoteFile(std::move(s));
}

std::uint64_t RemoteFile::size() const { return s_->size; }
std::uint64_t RemoteFile::fetched() const { return s_->fetched; }

Result<bool> RemoteFile::read(std::uint64_t offset, std::size_t n, std::byte* out) {
  State& s = *s_;
  const std::uint64_t end = offset + n;
  if (end > s.head.size()) {
    // Reads run front to back through a header: extend the bytes held from the start, by at least as much as is
    // held already (so a header of H bytes takes about log2(H / 256 KiB) requests), at most 16 MiB at a time.
    const std::uint64_t have = s.head.size();
    const std::uint64_t step = std::clamp<std::uint64_t>(have, 256u << 10, 16u << 20);
    const std::uint64_t want = std::min(s.size, std::max(end, have + step));
    if (want > kMaxRemoteBytes) {
      return Error{fmt::format("reading the header would take more than {} MiB; download the file and give its path",
                               kMaxRemoteBytes >> 20)};
    }
    if (isatty(STDERR_FILENO) && std::chrono::steady_clock::now() - s.start > std::chrono::seconds(1)) {
      std::fprintf(stderr, "\r\033[Kedgeplan: reading the header of %s: %.1f MiB so far", shown(s.url).c_str(),
                   static_cast<double>(s.fetched) / (1 << 20));
      s.progress_shown = true;
    }
    auto a = get(s.url, true, have, want - 1, want - have);
    if (!a) return a.error();
    s.fetched += a->body.size();
    const auto range = parse_content_range(a->content_range);
    if (!range || range->first != have || range->last != want - 1 || range->total != s.size) {
      return Error{fmt::format("asked for bytes {}-{} of {} and the server answered '{}' (has the file changed?)", have,
                               want - 1, s.size, a->content_range)};
    }
    if (a->body.size() != want - have) {
      return Error{fmt::format("the server's answer ended early: {} of the {} bytes asked for", a->body.size(),
                               want - have)};
    }
    s.head.insert(s.head.end(), a->body.begin(), a->body.end());
    s.cache_dirty = true;
  }
  if (n > 0) std::memcpy(out, s.head.data() + offset, n);
  return true;
}

void RemoteFile::save_cache() const {
  const State& s = *s_;
  if (!s.cache_dirty || s.validator.empty()) return;
  // A cache that cannot be written costs the next call its requests, nothing else: no error.
  std::error_code ec;
  fs::create_directories(cache_dir(), ec);
  const fs::path file = cache_file(s.url);
  const fs::path tmp = file.string() + fmt::format(".{}.tmp", getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << kCacheMagic << '\n' << s.url << '\n' << s.size << '\n' << s.validator << '\n';
    out.write(reinterpret_cast<const char*>(s.head.data()), static_cast<std::streamsize>(s.head.size()));
    if (!out) {
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, file, ec);
}

Result<std::string> http_get(const std::string& url, std::uint64_t max_bytes, const std::string& what) {
  auto a = get(url, false, 0, 0, max_bytes);
  if (!a) {
    return Error{fmt::format("cannot read {} ({}): {}", what, shown(url), a.error().message)};
  }
  return std::string(reinterpret_cast<const char*>(a->body.data()), a->body.size());
}

}  // namespace edgeplan::io
