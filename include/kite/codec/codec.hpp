// Everything of the codec in one include.
#pragma once

#include "kite/codec/encoder.hpp"
#include "kite/codec/field_index.hpp"
#include "kite/codec/fix.hpp"
#include "kite/codec/framer.hpp"
#include "kite/codec/header.hpp"
#include "kite/codec/scan.hpp"
#include "kite/codec/values.hpp"
