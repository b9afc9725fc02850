#include "edgeplan/core/device.hpp"

namespace edgeplan {

const char* to_string(Calibration c) {
  switch (c) {
    case Calibration::reference: return "reference";
    case Calibration::fitted: return "fitted";
    case Calibration::carried: return "carried";
    case Calibration::datasheet: return "datasheet";
    case Calibration::measured: return "measured";
    case Calibration::class_model: return "class";
  }
  return "";
}

bool calibrated(const std::optional<Provenance>& p) { return p && p->method == Calibration::fitted; }

}  // namespace edgeplan
