#include "result_schema.hpp"

namespace kite::lab {

using json = nlohmann::json;

namespace {

[[noreturn]] void wrong_type(const std::string& key, const char* want, const json& v) {
  throw ResultSchemaError(key + ": must be " + want + ", not " + v.type_name());
}

void require_object(const json& j, const std::string& where) {
  if (!j.is_object()) wrong_type(where, "an object", j);
}

// The key's value; null when it is absent or null (older results lack keys; the writer writes null for "none").
const json* find(const json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

std::string key_of(const std::string& where, const char* key) { return where + "." + key; }

// Parsed files hold non-negative integers as unsigned; json built in memory from an int holds them signed.
bool non_negative_integer(const json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
}

void read(const json& j, const std::string& where, const char* key, std::optional<double>& out) {
  if (const json* v = find(j, key)) {
    if (!v->is_number()) wrong_type(key_of(where, key), "a number", *v);
    out = v->get<double>();
  }
}

void read(const json& j, const std::string& where, const char* key, std::optional<std::int64_t>& out) {
  if (const json* v = find(j, key)) {
    if (!v->is_number()) wrong_type(key_of(where, key), "a number", *v);
    out = v->is_number_float() ? static_cast<std::int64_t>(v->get<double>()) : v->get<std::int64_t>();
  }
}

void read(const json& j, const std::string& where, const char* key, std::optional<int>& out) {
  std::optional<std::int64_t> n;
  read(j, where, key, n);
  if (n) out = static_cast<int>(*n);
}

void read(const json& j, const std::string& where, const char* key, std::optional<std::uint64_t>& out) {
  if (const json* v = find(j, key)) {
    if (!non_negative_integer(*v)) wrong_type(key_of(where, key), "a non-negative integer", *v);
    out = v->get<std::uint64_t>();
  }
}

void read(const json& j, const std::string& where, const char* key, std::optional<std::string>& out) {
  if (const json* v = find(j, key)) {
    if (!v->is_string()) wrong_type(key_of(where, key), "a string", *v);
    out = v->get<std::string>();
  }
}

void read(const json& j, const std::string& where, const char* key, std::optional<bool>& out) {
  if (const json* v = find(j, key)) {
    if (!v->is_boolean()) wrong_type(key_of(where, key), "true or false", *v);
    out = v->get<bool>();
  }
}

// An array whose every element `each` reads; `each` gets the element and its key ("pairing.ratios[2]").
template <typename T, typename Each>
void read_array(const json& j, const std::string& where, const char* key, std::optional<std::vector<T>>& out,
                Each each) {
  const json* v = find(j, key);
  if (!v) return;
  if (!v->is_array()) wrong_type(key_of(where, key), "an array", *v);
  std::vector<T> items;
  for (std::size_t i = 0; i < v->size(); ++i)
    items.push_back(each((*v)[i], key_of(where, key) + "[" + std::to_string(i) + "]"));
  out = std::move(items);
}

std::string text_item(const json& v, const std::string& key) {
  if (!v.is_string()) wrong_type(key, "a string", v);
  return v.get<std::string>();
}

double number_item(const json& v, const std::string& key) {
  if (!v.is_number()) wrong_type(key, "a number", v);
  return v.get<double>();
}

std::optional<double> number_or_null_item(const json& v, const std::string& key) {
  if (v.is_null()) return std::nullopt;
  return number_item(v, key);
}

std::size_t index_item(const json& v, const std::string& key) {
  if (!non_negative_integer(v)) wrong_type(key, "an index", v);
  return v.get<std::size_t>();
}

std::vector<std::size_t> order_item(const json& v, const std::string& key) {
  if (!v.is_array()) wrong_type(key, "an array", v);
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(index_item(v[i], key + "[" + std::to_string(i) + "]"));
  return out;
}

template <typename T>
void write(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

json p50s_json(const std::vector<std::optional<double>>& p50s) {
  json out = json::array();
  for (const auto& p : p50s) out.push_back(p ? json(*p) : json());
  return out;
}

std::optional<LatencyRecord> latency_at(const json& j, const std::string& where, const char* key) {
  const json* v = find(j, key);
  if (!v) return std::nullopt;
  return latency_record_from_json(*v, key_of(where, key));
}

}  // namespace

// ---------------------------------------------------------------- pairing

json to_json(const RatioRecord& r) { return {{"median", r.median}, {"low", r.low}, {"high", r.high}}; }

RatioRecord ratio_record_from_json(const json& j, const std::string& where) {
  require_object(j, where);
  RatioRecord r;
  for (auto [key, field] : {std::pair{"median", &r.median}, std::pair{"low", &r.low}, std::pair{"high", &r.high}}) {
    std::optional<double> v;
    read(j, where, key, v);
    *field = v.value_or(0.0);  // as the readers before: a missing end reads 0
  }
  return r;
}

json to_json(const PairingRecord& p) {
  json j = {{"mode", p.mode}};
  write(j, "reason", p.reason);
  write(j, "group", p.group);
  write(j, "on", p.on);
  write(j, "members", p.members);
  write(j, "reference", p.reference);
  write(j, "seed", p.seed);
  write(j, "rounds", p.rounds);
  write(j, "stop", p.stop);
  write(j, "target", p.target);
  write(j, "resolution", p.resolution);
  write(j, "width_reached", p.width_reached);
  write(j, "runs", p.runs);
  write(j, "budget_runs", p.budget_runs);
  write(j, "bracketed", p.bracketed);
  write(j, "orders", p.orders);
  if (p.p50_per_round) j["p50_per_round"] = p50s_json(*p.p50_per_round);
  write(j, "ratios", p.ratios);
  if (p.paired()) j["ratio"] = p.ratio ? to_json(*p.ratio) : json();
  if (p.judged) j["verdict"] = p.verdict ? json(*p.verdict) : json();
  write(j, "refused_rounds", p.refused_rounds);
  write(j, "unsteady_rounds", p.unsteady_rounds);
  return j;
}

PairingRecord pairing_record_from_json(const json& j, const std::string& where) {
  require_object(j, where);
  PairingRecord p;
  std::optional<std::string> mode;
  read(j, where, "mode", mode);
  if (!mode) throw ResultSchemaError(key_of(where, "mode") + ": missing");
  p.mode = *mode;
  for (auto [key, field] : {std::pair{"reason", &p.reason}, std::pair{"group", &p.group}, std::pair{"on", &p.on},
                            std::pair{"reference", &p.reference}, std::pair{"stop", &p.stop}})
    read(j, where, key, *field);
  read_array(j, where, "members", p.members, text_item);
  read(j, where, "seed", p.seed);
  for (auto [key, field] :
       {std::pair{"rounds", &p.rounds}, std::pair{"runs", &p.runs}, std::pair{"budget_runs", &p.budget_runs}})
    read(j, where, key, *field);
  for (auto [key, field] : {std::pair{"target", &p.target}, std::pair{"resolution", &p.resolution},
                            std::pair{"width_reached", &p.width_reached}})
    read(j, where, key, *field);
  read(j, where, "bracketed", p.bracketed);
  read_array(j, where, "orders", p.orders, order_item);
  read_array(j, where, "p50_per_round", p.p50_per_round, number_or_null_item);
  read_array(j, where, "ratios", p.ratios, number_item);
  if (const json* r = find(j, "ratio")) p.ratio = ratio_record_from_json(*r, key_of(where, "ratio"));
  p.judged = j.contains("verdict");
  read(j, where, "verdict", p.verdict);
  read_array(j, where, "refused_rounds", p.refused_rounds, text_item);
  read_array(j, where, "unsteady_rounds", p.unsteady_rounds, index_item);
  return p;
}

json to_json(const SittingPairingRecord& p) {
  json j = {{"mode", p.mode}};
  write(j, "reference", p.reference);
  write(j, "target", p.target);
  write(j, "resolution", p.resolution);
  write(j, "min_rounds", p.min_rounds);
  write(j, "max_rounds", p.max_rounds);
  write(j, "budget_rounds", p.budget_rounds);
  write(j, "seed", p.seed);
  return j;
}

SittingPairingRecord sitting_pairing_record_from_json(const json& j, const std::string& where) {
  require_object(j, where);
  SittingPairingRecord p;
  std::optional<std::string> mode;
  read(j, where, "mode", mode);
  p.mode = mode.value_or("rounds");
  read(j, where, "reference", p.reference);
  read(j, where, "target", p.target);
  read(j, where, "resolution", p.resolution);
  for (auto [key, field] : {std::pair{"min_rounds", &p.min_rounds}, std::pair{"max_rounds", &p.max_rounds},
                            std::pair{"budget_rounds", &p.budget_rounds}})
    read(j, where, key, *field);
  read(j, where, "seed", p.seed);
  return p;
}

// ---------------------------------------------------------------- summary

json to_json(const LatencyRecord& l) {
  json j = json::object();
  for (auto [key, field] : {std::pair{"p50", &l.p50}, std::pair{"p90", &l.p90}, std::pair{"p99", &l.p99},
                            std::pair{"p999", &l.p999}, std::pair{"max", &l.max}, std::pair{"mean_max", &l.mean_max}})
    write(j, key, *field);
  return j;
}

LatencyRecord latency_record_from_json(const json& j, const std::string& where) {
  require_object(j, where);
  LatencyRecord l;
  for (auto [key, field] : {std::pair{"p50", &l.p50}, std::pair{"p90", &l.p90}, std::pair{"p99", &l.p99},
                            std::pair{"p999", &l.p999}, std::pair{"max", &l.max}, std::pair{"mean_max", &l.mean_max}})
    read(j, where, key, *field);
  return l;
}

const LatencyRecord* SummaryRecord::view(const std::string& name) const {
  if (name == "service") return service ? &*service : nullptr;
  if (name == "response") return response ? &*response : nullptr;
  return nullptr;
}

json to_json(const SummaryRecord& s) {
  json j = json::object();
  if (s.service) j["service"] = to_json(*s.service);
  if (s.response) j["response"] = to_json(*s.response);
  if (s.cv_p50 || s.cv_p99) {
    j["cv"] = json::object();
    write(j["cv"], "p50", s.cv_p50);
    write(j["cv"], "p99", s.cv_p99);
  }
  write(j, "achieved_rate", s.achieved_rate);
  for (auto [key, field] : {std::pair{"count", &s.count}, std::pair{"errors", &s.errors},
                            std::pair{"max_in_flight", &s.max_in_flight}, std::pair{"cap_hits", &s.cap_hits}})
    write(j, key, *field);
  json client = json::object();
  write(client, "empty_share", s.client_empty_share);
  write(client, "busy_share", s.client_busy_share);
  write(client, "busy_us_per_order", s.client_busy_us_per_order);
  if (s.lateness) client["lateness"] = to_json(*s.lateness);
  if (!client.empty()) j["client"] = std::move(client);
  return j;
}

SummaryRecord summary_record_from_json(const json& j, const std::string& where) {
  require_object(j, where);
  SummaryRecord s;
  s.service = latency_at(j, where, "service");
  s.response = latency_at(j, where, "response");
  if (const json* cv = find(j, "cv")) {
    require_object(*cv, key_of(where, "cv"));
    read(*cv, key_of(where, "cv"), "p50", s.cv_p50);
    read(*cv, key_of(where, "cv"), "p99", s.cv_p99);
  }
  read(j, where, "achieved_rate", s.achieved_rate);
  for (auto [key, field] : {std::pair{"count", &s.count}, std::pair{"errors", &s.errors},
                            std::pair{"max_in_flight", &s.max_in_flight}, std::pair{"cap_hits", &s.cap_hits}})
    read(j, where, key, *field);
  if (const json* c = find(j, "client")) {
    const std::string at = key_of(where, "client");
    require_object(*c, at);
    read(*c, at, "empty_share", s.client_empty_share);
    read(*c, at, "busy_share", s.client_busy_share);
    read(*c, at, "busy_us_per_order", s.client_busy_us_per_order);
    s.lateness = latency_at(*c, at, "lateness");
  }
  return s;
}

// ---------------------------------------------------------------- sweeps

namespace {

template <typename T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json();
}

json latency_or_null(const std::optional<LatencyRecord>& l) { return l ? to_json(*l) : json(); }

int integer_or(const json& j, const std::string& where, const char* key, int fallback) {
  std::optional<int> v;
  read(j, where, key, v);
  return v.value_or(fallback);
}

std::optional<double> server_figure(const json& server, const char* key) {
  if (!server.is_object()) return std::nullopt;
  std::optional<double> v;
  read(server, "server", key, v);
  return v;
}

void read_step_figures(const json& j, const std::string& where, SweepStepRecord& s) {
  s.response = latency_at(j, where, "response");
  s.service = latency_at(j, where, "service");
  read(j, where, "achieved_rate", s.achieved_rate);
  read(j, where, "max_in_flight", s.max_in_flight);
  read(j, where, "cap_hits", s.cap_hits);
  if (const json* c = find(j, "client")) {
    const std::string at = key_of(where, "client");
    require_object(*c, at);
    s.lateness = latency_at(*c, at, "lateness");
    read(*c, at, "busy_share", s.busy_share);
    s.client_threads = integer_or(*c, at, "threads", 1);
  }
  read(j, where, "limit", s.limit);
}

std::optional<SweepMarkRecord> mark_at(const json& j, const std::string& where, const char* key, const char* x) {
  const json* m = find(j, key);
  if (!m) return std::nullopt;
  const std::string at = key_of(where, key);
  require_object(*m, at);
  SweepMarkRecord r;
  r.x = integer_or(*m, at, x, 0);
  r.step = integer_or(*m, at, "step", 0);
  r.response = latency_at(*m, at, "response");
  read(*m, at, "limit", r.limit);
  return r;
}

}  // namespace

std::optional<double> SweepStepRecord::server_cpu_us_per_order() const {
  return server_figure(server, "cpu_us_per_order");
}

std::optional<double> SweepStepRecord::server_rss_kb() const { return server_figure(server, "rss_kb"); }

json to_json(const SweepStepRecord& s) {
  json j = {{"step", s.step},
            {"file", s.file},
            {"rate", s.rate},
            {"sessions", s.sessions},
            {"state", s.state},
            {"verdict", or_null(s.verdict)},
            {"verdict_reasons", s.verdict_reasons}};
  write(j, "reason", s.reason);
  if (s.measured()) {
    j["response"] = latency_or_null(s.response);
    j["service"] = latency_or_null(s.service);
    j["achieved_rate"] = or_null(s.achieved_rate);
    j["max_in_flight"] = or_null(s.max_in_flight);
    j["cap_hits"] = or_null(s.cap_hits);
    j["client"] = {{"lateness", latency_or_null(s.lateness)},
                   {"busy_share", or_null(s.busy_share)},
                   {"threads", s.client_threads}};
    j["limit"] = or_null(s.limit);
  }
  j["server"] = s.server;
  return j;
}

SweepStepRecord sweep_step_record_from_json(const json& j, const std::string& where) {
  require_object(j, where);
  SweepStepRecord s;
  s.step = integer_or(j, where, "step", 0);
  s.rate = integer_or(j, where, "rate", 0);
  s.sessions = integer_or(j, where, "sessions", 0);
  std::optional<std::string> text;
  read(j, where, "file", text);
  s.file = text.value_or("");
  text.reset();
  read(j, where, "state", text);
  s.state = text.value_or("");
  read(j, where, "verdict", s.verdict);
  if (const json* r = find(j, "verdict_reasons")) s.verdict_reasons = *r;
  read(j, where, "reason", s.reason);
  read_step_figures(j, where, s);
  if (const json* server = find(j, "server")) s.server = *server;
  return s;
}

json to_json(const SweepRecord& s) {
  json j = {{"schema", 1}, {"kind", "sweep"}, {"flavour", s.flavour}, {"series", s.series}, {"settings", s.settings}};
  write(j, "method", s.method);
  write(j, "transport", s.transport);
  write(j, "model", s.model);
  json steps = json::array();
  for (const auto& st : s.steps) steps.push_back(to_json(st));
  j["steps"] = std::move(steps);
  const char* x = s.x_key();
  j["knee"] =
      s.knee ? json({{x, s.knee->x}, {"step", s.knee->step}, {"response", latency_or_null(s.knee->response)}}) : json();
  j["saturated_from"] = s.saturated_from ? json({{x, s.saturated_from->x},
                                                 {"step", s.saturated_from->step},
                                                 {"limit", or_null(s.saturated_from->limit)}})
                                         : json();
  if (!s.by_rate()) j["memory_per_session_bytes"] = or_null(s.memory_per_session_bytes);
  write(j, "file", s.file);
  return j;
}

SweepRecord sweep_record_from_json(const json& j, const std::string& where) {
  require_object(j, where);
  SweepRecord s;
  std::optional<std::string> text;
  read(j, where, "flavour", text);
  s.flavour = text.value_or("");
  text.reset();
  read(j, where, "series", text);
  s.series = text.value_or("");
  for (auto [key, field] : {std::pair{"method", &s.method}, std::pair{"transport", &s.transport},
                            std::pair{"model", &s.model}, std::pair{"file", &s.file}})
    read(j, where, key, *field);
  if (const json* set = find(j, "settings")) s.settings = *set;
  std::optional<std::vector<SweepStepRecord>> steps;
  read_array(j, where, "steps", steps, sweep_step_record_from_json);
  s.steps = steps.value_or(std::vector<SweepStepRecord>{});
  s.knee = mark_at(j, where, "knee", s.x_key());
  s.saturated_from = mark_at(j, where, "saturated_from", s.x_key());
  read(j, where, "memory_per_session_bytes", s.memory_per_session_bytes);
  return s;
}

// ---------------------------------------------------------------- a result file

ResultRecord result_record_from_json(const json& result) {
  require_object(result, "result");
  ResultRecord r;
  if (const json* s = find(result, "summary")) r.summary = summary_record_from_json(*s);
  if (const json* p = find(result, "pairing")) r.pairing = pairing_record_from_json(*p);
  return r;
}

const SummaryRecord& summary_of(const StoredResult& r) {
  static const SummaryRecord none;
  return r.record ? r.record->summary : none;
}

const PairingRecord* pairing_of(const StoredResult& r) {
  return r.record && r.record->pairing ? &*r.record->pairing : nullptr;
}

}  // namespace kite::lab
