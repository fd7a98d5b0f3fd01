// Per-session validation against a data dictionary: the codec's Validator
// behind the session's MessageValidator interface. A SessionRegistry makes
// one for each session with UseDataDictionary on.
#pragma once

#include <memory>

#include "kite/codec/dictionary.hpp"
#include "kite/codec/validator.hpp"
#include "kite/session/session.hpp"

namespace kite::session {

class DictionaryValidator final : public MessageValidator {
 public:
  // `transport`: on FIXT.1.1, the transport dictionary alone (FIXT11.xml),
  // which judges the session messages; `dictionary` (transport and
  // application merged) judges the application messages.
  explicit DictionaryValidator(std::shared_ptr<const codec::Dictionary> dictionary,
                               codec::ValidationOptions options = {},
                               std::shared_ptr<const codec::Dictionary> transport = nullptr);
  // The codec's options for a session's ValidateFieldsHaveValues,
  // ValidateUserDefinedFields, ValidateFieldsOutOfOrder, AllowUnknownMsgFields.
  static codec::ValidationOptions options_for(const SessionSettings& settings) noexcept;
  // DataDictionary names a folder holding the standard files (FIX40.xml to
  // FIX44.xml; on FIXT.1.1, FIXT11.xml and the DefaultApplVerID's FIX50.xml,
  // FIX50SP1.xml or FIX50SP2.xml) or one XML file (for FIXT.1.1, the
  // application dictionary, with FIXT11.xml beside it). Throws
  // std::runtime_error with the loader's message on failure (set-up time).
  static std::unique_ptr<DictionaryValidator> for_settings(const SessionSettings& settings);

  Validation validate(const codec::Header& h, const codec::FieldIndex& ix) const noexcept override;
  // The dictionary that judges application messages (on FIXT.1.1 the
  // transport and application dictionaries merged).
  const codec::Dictionary& dictionary() const noexcept { return *dictionary_; }

 private:
  std::shared_ptr<const codec::Dictionary> dictionary_;
  std::shared_ptr<const codec::Dictionary> transport_;
  mutable codec::Validator validator_;  // scratch state: one session's thread
  mutable std::unique_ptr<codec::Validator> transport_validator_;
};

}  // namespace kite::session
