#include "kite/session/validation.hpp"

#include <filesystem>
#include <stdexcept>

namespace kite::session {

DictionaryValidator::DictionaryValidator(std::shared_ptr<const codec::Dictionary> dictionary,
                                         codec::ValidationOptions options,
                                         std::shared_ptr<const codec::Dictionary> transport)
    : dictionary_(std::move(dictionary)), transport_(std::move(transport)), validator_(*dictionary_, options) {
  if (transport_) transport_validator_ = std::make_unique<codec::Validator>(*transport_, options);
}

codec::ValidationOptions DictionaryValidator::options_for(const SessionSettings& s) noexcept {
  codec::ValidationOptions o;
  o.check_fields_have_values = s.validate_fields_have_values;
  o.allow_user_defined_fields = !s.validate_user_defined_fields;
  o.check_fields_out_of_order = s.validate_fields_out_of_order;
  o.allow_unknown_fields = s.allow_unknown_msg_fields;
  return o;
}

namespace {

// The application dictionary's file for a FIXT session's DefaultApplVerID.
const char* application_file(const std::string& appl_ver_id) {
  if (appl_ver_id == "7") return "FIX50.xml";
  if (appl_ver_id == "8") return "FIX50SP1.xml";
  if (appl_ver_id == "9") return "FIX50SP2.xml";
  if (appl_ver_id == "6") return "FIX44.xml";
  if (appl_ver_id == "4") return "FIX42.xml";
  throw std::runtime_error("DataDictionary: no dictionary for DefaultApplVerID " + appl_ver_id);
}

}  // namespace

std::unique_ptr<DictionaryValidator> DictionaryValidator::for_settings(const SessionSettings& s) {
  namespace fs = std::filesystem;
  const fs::path p(s.data_dictionary);
  codec::DictionaryLoad load;
  std::shared_ptr<const codec::Dictionary> transport;
  if (s.fixt()) {
    const fs::path file = fs::is_directory(p) ? p / "FIXT11.xml" : p.parent_path() / "FIXT11.xml";
    codec::DictionaryLoad t = codec::Dictionary::load(file.string());
    if (!t) throw std::runtime_error("DataDictionary: " + t.error);
    transport = std::move(t.dictionary);
  }
  if (fs::is_directory(p) && s.fixt()) {
    load = codec::Dictionary::load((p / "FIXT11.xml").string(), (p / application_file(s.default_appl_ver_id)).string());
  } else if (fs::is_directory(p)) {
    load = codec::Dictionary::load_for(p.string(), s.begin_string);
  } else if (s.fixt()) {
    load = codec::Dictionary::load((p.parent_path() / "FIXT11.xml").string(), p.string());
  } else {
    load = codec::Dictionary::load(p.string());
  }
  if (!load) throw std::runtime_error("DataDictionary: " + load.error);
  return std::make_unique<DictionaryValidator>(std::move(load.dictionary), options_for(s), std::move(transport));
}

Validation DictionaryValidator::validate(const codec::Header& h, const codec::FieldIndex& ix) const noexcept {
  const bool session_message =
      h.msg_type.size() == 1 && ((h.msg_type[0] >= '0' && h.msg_type[0] <= '5') || h.msg_type[0] == 'A');
  codec::Validator& v = session_message && transport_validator_ ? *transport_validator_ : validator_;
  const codec::ValidationResult r = v.validate(ix, h);
  if (r.ok) return {};
  return {false, r.reason, r.ref_tag, r.text};
}

}  // namespace kite::session
