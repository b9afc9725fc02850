// A value of the output document (io/report.hpp): the inputs echo and the scalar results a command fills, in the
// shape JSON prints them: null, yes/no, a whole number, a number, text, a list, or an object whose members keep
// the order they were added in. It is edgeplan's own small type, so a command file that fills a report does not
// compile a JSON library; the JSON renderer alone turns it into JSON text (io/json.hpp).
#pragma once

#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace edgeplan::io {

// Whether a computed count can be written as a whole number: finite and within an int64 (|v| <= 9e18).
// Inline, as nearest_count: a sweep's CSV asks both of a few cells of every row.
inline bool countable(double v) { return std::isfinite(v) && std::abs(v) <= 9e18; }
// The whole number nearest a count the model computes as a fraction (a KV budget of memory - reserved - weights
// is 2546941132.8 bytes: 2546941133), rounded once, where the value is declared a count (Node::count,
// Column::count); v must be countable. Halves round away from zero, as std::llround does, without its call: the
// whole part is exact as an int64 and as a double, and so is the fraction v - whole part.
inline std::int64_t nearest_count(double v) {
  const auto whole = static_cast<std::int64_t>(v);
  const double fraction = v - static_cast<double>(whole);
  return whole + (fraction >= 0.5 ? 1 : 0) - (fraction <= -0.5 ? 1 : 0);
}

class Node {
 public:
  using Member = std::pair<std::string, Node>;
  using Array = std::vector<Node>;
  using Object = std::vector<Member>;

  Node() = default;
  // Out of line (node.cpp), as are the value constructors below: the files that fill a report call them instead of
  // each compiling the copies and moves of the variant behind a node.
  Node(const Node& other);
  Node(Node&& other) noexcept;
  Node& operator=(const Node& other);
  Node& operator=(Node&& other) noexcept;
  ~Node();

  Node(std::nullptr_t) {}  // NOLINT: null, as JSON writes it
  Node(bool b);            // NOLINT: values convert, as the JSON they print as
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  Node(T v) : Node(std::is_signed_v<T> ? Whole{static_cast<std::int64_t>(v), 0, true}  // NOLINT
                                       : Whole{0, static_cast<std::uint64_t>(v), false}) {}
  template <std::floating_point T>
  Node(T v) : Node(Number{static_cast<double>(v)}) {}  // NOLINT
  Node(std::string s);                                  // NOLINT
  Node(const char* s);                                  // NOLINT
  Node(std::string_view s);                             // NOLINT
  Node(const std::vector<std::string>& items);          // NOLINT: a list of text
  Node(std::initializer_list<Member> members);          // an object: {{"name", x}, {"source", y}}

  static Node object();
  static Node array();
  // A value that counts whole things (bytes, parameters, tokens): a whole number, as JSON writes it (docs/json.md),
  // a computed fraction rounded to the nearest (nearest_count); a value that is not countable stays a number.
  // JSON writes a count as an integer because it is declared one here, whatever its key.
  static Node count(double v);
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  static Node count(T v) { return Node(v); }

  bool is_null() const { return std::holds_alternative<std::monostate>(v_); }
  bool is_boolean() const { return std::holds_alternative<bool>(v_); }
  // A whole number (signed or not) or a number.
  bool is_number() const { return is_number_integer() || is_number_float(); }
  bool is_number_integer() const {
    return std::holds_alternative<std::int64_t>(v_) || std::holds_alternative<std::uint64_t>(v_);
  }
  bool is_number_unsigned() const { return std::holds_alternative<std::uint64_t>(v_); }
  bool is_number_float() const { return std::holds_alternative<double>(v_); }
  bool is_string() const { return std::holds_alternative<std::string>(v_); }
  bool is_array() const { return std::holds_alternative<Array>(v_); }
  bool is_object() const { return std::holds_alternative<Object>(v_); }

  // The value; std::bad_variant_access when the node holds another kind (a number converts between its kinds).
  bool boolean() const { return std::get<bool>(v_); }
  double number() const;
  std::int64_t integer() const;
  std::uint64_t whole() const;
  const std::string& string() const { return std::get<std::string>(v_); }
  template <class T>
  T get() const {
    if constexpr (std::same_as<T, bool>) {
      return boolean();
    } else if constexpr (std::same_as<T, std::string>) {
      return string();
    } else if constexpr (std::floating_point<T>) {
      return static_cast<T>(number());
    } else if constexpr (std::is_signed_v<T>) {
      return static_cast<T>(integer());
    } else {
      return static_cast<T>(whole());
    }
  }

  // An object's member by key, added (as null) when missing; a null node becomes an empty object first.
  Node& operator[](std::string_view key);
  // An object's member by key; a null node when there is none.
  const Node& operator[](std::string_view key) const;
  bool contains(std::string_view key) const;
  // Sets every member of `other` (an object) on this object, in other's order.
  void update(const Node& other);
  // The members of an object; the elements of an array.
  const Object& items() const { return std::get<Object>(v_); }
  Object& items() { return std::get<Object>(v_); }
  const Array& elements() const { return std::get<Array>(v_); }
  Array& elements() { return std::get<Array>(v_); }

  // Appends to an array; a null node becomes an empty array first.
  void push_back(Node v);
  const Node& operator[](std::size_t i) const { return elements()[i]; }
  // The elements of an array, or the members of an object: 0 for anything else.
  std::size_t size() const;
  bool empty() const { return size() == 0; }
  const Node& front() const { return elements().front(); }
  Array::const_iterator begin() const { return elements().begin(); }
  Array::const_iterator end() const { return elements().end(); }

  bool operator==(const Node& other) const;

 private:
  struct Whole {
    std::int64_t i;
    std::uint64_t u;
    bool is_signed;
  };
  struct Number {
    double v;
  };
  explicit Node(Whole w);
  explicit Node(Number n);
  explicit Node(Object o);
  explicit Node(Array a);

  std::variant<std::monostate, bool, std::int64_t, std::uint64_t, double, std::string, Array, Object> v_;
};

}  // namespace edgeplan::io
