// A range-capable HTTP/1.1 server on 127.0.0.1, started by a test and stopped when it ends: the remote-model tests
// read GGUF headers from it, never from the internet. Each file is its bytes followed by zeros up to a size of the
// test's choosing (a multi-GB file costs no memory); each answer closes its connection. Modes stand for the
// servers users meet: one that ignores Range (200 with the whole file), one whose answers end early, one that
// waits before answering.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace edgeplan::testing_http {

class RangeServer {
 public:
  enum class Mode { normal, ignore_range, truncate, slow };

  RangeServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) throw std::runtime_error("socket");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 16) != 0) {
      throw std::runtime_error("bind");
    }
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { loop(); });
  }
  ~RangeServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  RangeServer(const RangeServer&) = delete;
  RangeServer& operator=(const RangeServer&) = delete;

  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }

  // Serves `path` as `bytes` followed by zeros up to `size` bytes (at least the bytes).
  void file(const std::string& path, std::vector<std::byte> bytes, std::uint64_t size = 0) {
    std::lock_guard lock(m_);
    const std::uint64_t n = std::max<std::uint64_t>(size, bytes.size());
    files_[path] = File{std::move(bytes), n};
  }
  void text(const std::string& path, const std::string& body) {
    std::vector<std::byte> b(body.size());
    std::memcpy(b.data(), body.data(), body.size());
    file(path, std::move(b));
  }
  // Answers `from` with a 302 to `to`.
  void redirect(const std::string& from, const std::string& to) {
    std::lock_guard lock(m_);
    redirects_[from] = to;
  }
  void mode(Mode m) { mode_ = m; }
  // Body bytes sent in all, and requests answered.
  std::uint64_t body_bytes() const { return body_bytes_; }
  int requests() const { return requests_; }
  // The last request as it came: request line and headers.
  std::string last_request() {
    std::lock_guard lock(m_);
    return last_request_;
  }

 private:
  struct File {
    std::vector<std::byte> bytes;
    std::uint64_t size = 0;
  };

  void loop() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      serve(c);
      ::close(c);
    }
  }

  void send_all(int c, const void* data, std::size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t sent = ::send(c, p, n, MSG_NOSIGNAL);
      if (sent <= 0) return;
      p += sent;
      n -= static_cast<std::size_t>(sent);
    }
  }

  void answer(int c, const std::string& status, const std::string& headers, const std::string& body = "") {
    const std::string head = "HTTP/1.1 " + status + "\r\n" + headers + "Connection: close\r\n\r\n";
    send_all(c, head.data(), head.size());
    send_all(c, body.data(), body.size());
  }

  void serve(int c) {
    std::string request;
    char buf[4096];
    while (request.find("\r\n\r\n") == std::string::npos) {
      pollfd p{c, POLLIN, 0};
      if (::poll(&p, 1, 2000) <= 0) return;
      const ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0) return;
      request.append(buf, static_cast<std::size_t>(n));
    }
    ++requests_;
    {
      std::lock_guard lock(m_);
      last_request_ = request;
    }
    const auto sp1 = request.find(' '), sp2 = request.find(' ', sp1 + 1);
    std::string path = request.substr(sp1 + 1, sp2 - sp1 - 1);
    std::string lower = request;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    bool ranged = false;
    std::uint64_t first = 0, last = 0;
    if (const auto r = lower.find("\r\nrange: bytes="); r != std::string::npos) {
      ranged = std::sscanf(lower.c_str() + r + 15, "%lu-%lu", &first, &last) == 2;
    }
    if (mode_ == Mode::slow) {
      for (int i = 0; i < 60 && !stop_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::lock_guard lock(m_);
    if (const auto it = redirects_.find(path); it != redirects_.end()) {
      answer(c, "302 Found", "Location: " + it->second + "\r\nContent-Length: 0\r\n");
      return;
    }
    const auto it = files_.find(path.substr(0, path.find('?')));  // a query (?recursive=true) names the same file
    if (it == files_.end()) {
      answer(c, "404 Not Found", "Content-Length: 9\r\n", "not found");
      return;
    }
    const File& f = it->second;
    const std::string etag = "ETag: \"" + std::to_string(f.size) + "-" + std::to_string(f.bytes.size()) + "\"\r\n";
    if (!ranged || mode_ == Mode::ignore_range) {
      first = 0;
      last = f.size - 1;
    }
    if (first >= f.size) {
      answer(c, "416 Range Not Satisfiable", "Content-Range: bytes */" + std::to_string(f.size) + "\r\nContent-Length: 0\r\n");
      return;
    }
    last = std::min(last, f.size - 1);
    const std::uint64_t n = last - first + 1;
    std::string headers = etag + "Content-Length: " + std::to_string(n) + "\r\n";
    if (ranged && mode_ != Mode::ignore_range) {
      headers += "Content-Range: bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" +
                 std::to_string(f.size) + "\r\n";
    }
    answer(c, ranged && mode_ != Mode::ignore_range ? "206 Partial Content" : "200 OK", headers);
    // The body: the file's bytes, then zeros; half of it when answers end early.
    const std::uint64_t send = mode_ == Mode::truncate ? n / 2 : n;
    std::vector<char> chunk;
    for (std::uint64_t at = first; at < first + send;) {
      const std::uint64_t take = std::min<std::uint64_t>(first + send - at, 1 << 16);
      chunk.assign(static_cast<std::size_t>(take), 0);
      if (at < f.bytes.size()) {
        const std::uint64_t from_bytes = std::min<std::uint64_t>(take, f.bytes.size() - at);
        std::memcpy(chunk.data(), f.bytes.data() + at, static_cast<std::size_t>(from_bytes));
      }
      const ssize_t sent = ::send(c, chunk.data(), chunk.size(), MSG_NOSIGNAL);
      if (sent <= 0) return;  // the client hung up (it asked for less than a whole file it was sent)
      body_bytes_ += static_cast<std::uint64_t>(sent);
      at += static_cast<std::uint64_t>(sent);
    }
  }

  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<Mode> mode_{Mode::normal};
  std::atomic<std::uint64_t> body_bytes_{0};
  std::atomic<int> requests_{0};
  std::mutex m_;
  std::map<std::string, File> files_;
  std::map<std::string, std::string> redirects_;
  std::string last_request_;
};

}  // namespace edgeplan::testing_http
