#include "kite/session/validation.hpp"

#include <filesystem>
#include <stdexcept>

namespace kite::session {

DictionaryValidator::DictionaryValidator(std::shared_ptr<const codec::Dictionary> dictionary,
                                         codec::ValidationOptions options)
    : dictionary_(std::move(dictionary)), validator_(*dictionary_, options) {}

std::unique_ptr<DictionaryValidator> DictionaryValidator::for_settings(const SessionSettings& s) {
  namespace fs = std::filesystem;
  const fs::path p(s.data_dictionary);
  codec::DictionaryLoad load;
  if (fs::is_directory(p)) {
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
