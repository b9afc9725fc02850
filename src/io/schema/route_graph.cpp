// The schemas of a cloud profile, of one [[request]] of a requests profile and of one [[ops]] entry of an
// operator graph (docs/profiles.md, "Cloud", "Requests", "Graph").
#include "edgeplan/io/schema/kinds.hpp"
#include "edgeplan/util/names.hpp"

namespace edgeplan::io::schema {
namespace {

// A required number stored as is in `member`.
template <class Spec, double Spec::*member>
Row<Spec> plain(std::string_view key, Range range) {
  return Row<Spec>{.key = key, .required = true, .range = range,
                   .set = [](Spec& s, const Value& v) { s.*member = number(v); },
                   .get = [](const Spec& s) -> std::optional<Value> { return s.*member; }};
}

// A required count stored as a double in `member`.
template <class Spec, double Spec::*member>
Row<Spec> whole(std::string_view key, CountRange range) {
  return Row<Spec>{.key = key, .type = Type::count, .required = true, .counts = range,
                   .set = [](Spec& s, const Value& v) { s.*member = count(v); },
                   .get = [](const Spec& s) -> std::optional<Value> { return static_cast<std::int64_t>(s.*member); }};
}

Schema<CloudSpec> make_cloud() {
  using C = CloudSpec;
  Schema<C> s{"cloud", {}};
  s.sections.push_back({.name = "", .rows = {
      Row<C>{.key = "description", .type = Type::string, .set = ignore<C>, .get = none<C>, .echo = false},
  }, .echo_custom = [](const C& c, Node& j) { j["kind"] = cloud_kind(c); }});
  s.sections.push_back({"", {
      plain<C, &C::rtt_s>("rtt_s", Range::non_negative),
      plain<C, &C::ttft_s>("ttft_s", Range::non_negative),
      plain<C, &C::decode_tok_per_s>("decode_tok_per_s", Range::positive),
      Row<C>{.key = "accepts", .type = Type::choice, .required = true,
             .choices = [] { return std::vector<std::string>{"internal", "public"}; },
             .set = [](C& c, const Value& v) { c.accepts = *parse_privacy(text(v)); },
             .get = [](const C& c) -> std::optional<Value> { return std::string(to_string(c.accepts)); }},
      plain<C, &C::usd_per_m_input_tok>("usd_per_m_input_tok", Range::non_negative),
      plain<C, &C::usd_per_m_output_tok>("usd_per_m_output_tok", Range::non_negative),
  }});
  return s;
}

Schema<RouteRequest> make_request() {
  using Q = RouteRequest;
  Schema<Q> s{"requests", {}};
  s.sections.push_back({"", {
      Row<Q>{.key = "name", .type = Type::string, .required = true,
             .set = [](Q& r, const Value& v) { r.name = text(v); },
             .get = [](const Q& r) -> std::optional<Value> { return r.name; }},
      Row<Q>{.key = "privacy", .type = Type::choice, .required = true, .choices = [] { return privacy_names(); },
             .set = [](Q& r, const Value& v) { r.privacy = *parse_privacy(text(v)); },
             .get = [](const Q& r) -> std::optional<Value> { return std::string(to_string(r.privacy)); }},
      whole<Q, &Q::input_tok>("input_tok", {0, limits::kRequestTokens}),
      whole<Q, &Q::output_tok>("output_tok", {1, limits::kRequestTokens}),
      plain<Q, &Q::slo_s>("slo_s", Range::positive),
  }});
  return s;
}

// The keys of an op, in four groups that load_graph reads in this order: name and kind; then by its kind either
// those of a matmul (precision, flops, bytes) or of any other op (bytes); then handoff_bytes. All at the top of
// the [[ops]] entry.
Schema<Op> make_op() {
  Schema<Op> s{"graph", {}};
  s.sections.push_back({"", {
      Row<Op>{.key = "name", .type = Type::string, .required = true,
              .set = [](Op& o, const Value& v) { o.name = text(v); },
              .get = [](const Op& o) -> std::optional<Value> { return o.name; }},
      Row<Op>{.key = "kind", .type = Type::choice, .required = true, .choices = [] { return names_of(op_kinds()); },
              .set = [](Op& o, const Value& v) { o.kind = *find_op_kind(text(v)); },
              .get = [](const Op& o) -> std::optional<Value> { return std::string(to_string(o.kind)); }},
  }});
  s.sections.push_back({"", {
      Row<Op>{.key = "precision", .type = Type::choice, .required = true,
              .choices = [] { return std::vector<std::string>{"int8", "fp16"}; },
              .set = [](Op& o, const Value& v) { o.precision = *find_precision(text(v)); },
              .get = [](const Op& o) -> std::optional<Value> { return std::string(to_string(o.precision)); }},
      plain<Op, &Op::flops>("flops", Range::positive),
      Row<Op>{.key = "bytes", .range = Range::non_negative, .set = [](Op& o, const Value& v) { o.bytes = number(v); },
              .get = [](const Op& o) -> std::optional<Value> { return o.bytes; }},
  }});
  s.sections.push_back({"", {plain<Op, &Op::bytes>("bytes", Range::positive)}});
  s.sections.push_back({"", {plain<Op, &Op::handoff_bytes>("handoff_bytes", Range::non_negative)}});
  return s;
}

}  // namespace

const Schema<CloudSpec>& cloud_schema() {
  static const Schema<CloudSpec> s = make_cloud();
  return s;
}

const Schema<RouteRequest>& request_schema() {
  static const Schema<RouteRequest> s = make_request();
  return s;
}

const Schema<Op>& op_schema() {
  static const Schema<Op> s = make_op();
  return s;
}

}  // namespace edgeplan::io::schema
