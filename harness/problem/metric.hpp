// The figures a rule may name and a table may show: one enum, one name each (the name is the
// problem file's spelling and the JSON field).
#pragma once

#include <array>
#include <fmt/format.h>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace mbs {

enum class Metric {
  kMaxEnergyDrift,                // J, every step
  kMaxPositionViolation,          // m, max_t |Phi|
  kMaxVelocityViolation,          // m/s, max_t |Phi_q v|
  kFinalPositionError,            // m, against an exact solution at t_end
  kMaxPenetration,                // m, contacts
  kMaxEnergyDriftBetweenImpacts,  // J, impacts' own losses taken out
  kMaxReferenceError,             // m, over the output times
  kFinalReferenceError,           // m, at t_end
  kMaxEnergyRise,                 // J, above the lowest energy so far
  kMaxAngularMomentumDrift,       // kg m^2/s, about score.angular_momentum_about
  kEigenvalueError,               // 1/s, linearization problems only
};

inline constexpr std::array<Metric, 11> kAllMetrics{
    Metric::kMaxEnergyDrift,     Metric::kMaxPositionViolation,         Metric::kMaxVelocityViolation,
    Metric::kFinalPositionError, Metric::kMaxPenetration,               Metric::kMaxEnergyDriftBetweenImpacts,
    Metric::kMaxReferenceError,  Metric::kFinalReferenceError,          Metric::kMaxEnergyRise,
    Metric::kMaxAngularMomentumDrift, Metric::kEigenvalueError};

inline std::string_view name(Metric m) {
  switch (m) {
    case Metric::kMaxEnergyDrift: return "max_energy_drift";
    case Metric::kMaxPositionViolation: return "max_position_violation";
    case Metric::kMaxVelocityViolation: return "max_velocity_violation";
    case Metric::kFinalPositionError: return "final_position_error";
    case Metric::kMaxPenetration: return "max_penetration";
    case Metric::kMaxEnergyDriftBetweenImpacts: return "max_energy_drift_between_impacts";
    case Metric::kMaxReferenceError: return "max_reference_error";
    case Metric::kFinalReferenceError: return "final_reference_error";
    case Metric::kMaxEnergyRise: return "max_energy_rise";
    case Metric::kMaxAngularMomentumDrift: return "max_angular_momentum_drift";
    case Metric::kEigenvalueError: return "eigenvalue_error";
  }
  return "?";
}
inline std::string to_string(Metric m) { return std::string(name(m)); }

inline std::ostream& operator<<(std::ostream& os, Metric m) { return os << name(m); }

inline std::optional<Metric> metric_from_name(std::string_view s) {
  for (const Metric m : kAllMetrics)
    if (name(m) == s) return m;
  return std::nullopt;
}

// Distances of the measured points from a reference trajectory.
inline bool is_reference_metric(Metric m) {
  return m == Metric::kMaxReferenceError || m == Metric::kFinalReferenceError;
}

}  // namespace mbs

// Printed by name: fmt::format("{}", Metric::kMaxEnergyDrift) is "max_energy_drift".
template <>
struct fmt::formatter<mbs::Metric> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(mbs::Metric x, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(mbs::name(x), ctx);
  }
};
