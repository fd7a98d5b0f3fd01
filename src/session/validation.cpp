#include "kite/session/validation.hpp"

#include <filesystem>
#include <stdexcept>

namespace kite::session {

DictionaryValidator::DictionaryValidator(std::shared_ptr<const codec::Dictionary> dictionary,
                                         codec::ValidationOptions options)
    : dictionary_(std::move(dictionary)), validator_(*dictionary_, options) {}

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
  return std::make_unique<DictionaryValidator>(std::move(load.dictionary));
}

Validation DictionaryValidator::validate(const codec::Header& h, const codec::FieldIndex& ix) const noexcept {
  const codec::ValidationResult r = validator_.validate(ix, h);
  if (r.ok) return {};
  return {false, r.reason, r.ref_tag, r.text};
}

}  // namespace kite::session
