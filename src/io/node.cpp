#include "edgeplan/io/node.hpp"

#include <cmath>

namespace edgeplan::io {

Node::Node(const Node& other) = default;
Node::Node(Node&& other) noexcept = default;
Node& Node::operator=(const Node& other) = default;
Node& Node::operator=(Node&& other) noexcept = default;
Node::~Node() = default;
bool Node::operator==(const Node& other) const { return v_ == other.v_; }

Node::Node(bool b) : v_(b) {}
Node::Node(Whole w) {
  if (w.is_signed) {
    v_ = w.i;
  } else {
    v_ = w.u;
  }
}
Node::Node(Number n) : v_(n.v) {}
Node::Node(std::string s) : v_(std::move(s)) {}
Node::Node(const char* s) : v_(std::string(s)) {}
Node::Node(std::string_view s) : v_(std::string(s)) {}
Node::Node(const std::vector<std::string>& items) : v_(Array(items.begin(), items.end())) {}
Node::Node(std::initializer_list<Member> members) : v_(Object(members)) {}
Node::Node(Object o) : v_(std::move(o)) {}
Node::Node(Array a) : v_(std::move(a)) {}
Node Node::object() { return Node(Object{}); }
Node Node::array() { return Node(Array{}); }

Node Node::count(double v) { return countable(v) ? Node(nearest_count(v)) : Node(v); }

double Node::number() const {
  if (const auto* i = std::get_if<std::int64_t>(&v_)) return static_cast<double>(*i);
  if (const auto* u = std::get_if<std::uint64_t>(&v_)) return static_cast<double>(*u);
  return std::get<double>(v_);
}

std::int64_t Node::integer() const {
  if (const auto* u = std::get_if<std::uint64_t>(&v_)) return static_cast<std::int64_t>(*u);
  if (const auto* d = std::get_if<double>(&v_)) return static_cast<std::int64_t>(*d);
  return std::get<std::int64_t>(v_);
}

std::uint64_t Node::whole() const {
  if (const auto* i = std::get_if<std::int64_t>(&v_)) return static_cast<std::uint64_t>(*i);
  if (const auto* d = std::get_if<double>(&v_)) return static_cast<std::uint64_t>(*d);
  return std::get<std::uint64_t>(v_);
}

Node& Node::operator[](std::string_view key) {
  if (is_null()) v_ = Object{};
  Object& members = std::get<Object>(v_);
  for (Member& m : members) {
    if (m.first == key) return m.second;
  }
  return members.emplace_back(std::string(key), Node()).second;
}

const Node& Node::operator[](std::string_view key) const {
  static const Node null;
  if (const auto* members = std::get_if<Object>(&v_)) {
    for (const Member& m : *members) {
      if (m.first == key) return m.second;
    }
  }
  return null;
}

bool Node::contains(std::string_view key) const {
  if (const auto* members = std::get_if<Object>(&v_)) {
    for (const Member& m : *members) {
      if (m.first == key) return true;
    }
  }
  return false;
}

void Node::update(const Node& other) {
  for (const Member& m : other.items()) (*this)[m.first] = m.second;
}

void Node::push_back(Node v) {
  if (is_null()) v_ = Array{};
  std::get<Array>(v_).push_back(std::move(v));
}

std::size_t Node::size() const {
  if (const auto* a = std::get_if<Array>(&v_)) return a->size();
  if (const auto* o = std::get_if<Object>(&v_)) return o->size();
  return 0;
}

}  // namespace edgeplan::io
