// Explicit Runge-Kutta integrators for ODEs y' = f(t, y), templated on the ODE so that small
// systems run on fixed-size Eigen vectors. All storage is sized at construction; step() allocates
// nothing.
//
// The ODE type provides:
//   using State = Eigen::Matrix<double, S, 1>;   // S fixed or Eigen::Dynamic
//   int size() const;
//   void rhs(double t, const State& y, State& dydt);
#pragma once

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/formulation.hpp"

namespace mbs {

// Thrown by a right-hand side that cannot be evaluated at a stage's state (partitioned: its
// Newton-Raphson finds no dependent coordinates there). An adaptive method rejects the step and
// retries it shorter; for a fixed-step method it is a SolverError like any other.
class StageFailure : public SolverError {
 public:
  using SolverError::SolverError;
};

// Classical fixed-step RK4.
template <class Ode>
class Rk4 {
 public:
  using State = typename Ode::State;
  explicit Rk4(Ode& ode) : ode_(ode), k1_(ode.size()), k2_(ode.size()), k3_(ode.size()), k4_(ode.size()), tmp_(ode.size()) {}

  void step(double t, double h, State& y, RunStats& stats) {
    step(t, h, y, k1_, k2_, k3_, k4_, tmp_);
    stats.rhs_evals += 4;
  }

 private:
  void step(double t, double h, State& y, State& k1, State& k2, State& k3, State& k4, State& tmp) {
    ode_.rhs(t, y, k1);
    tmp = y + (0.5 * h) * k1;
    ode_.rhs(t + 0.5 * h, tmp, k2);
    tmp = y + (0.5 * h) * k2;
    ode_.rhs(t + 0.5 * h, tmp, k3);
    tmp = y + h * k3;
    ode_.rhs(t + h, tmp, k4);
    y += (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
  }

  Ode& ode_;
  State k1_, k2_, k3_, k4_, tmp_;
};

// An explicit Butcher tableau with an embedded pair: b gives order `order`, d order `embedded_order`.
struct ButcherTable {
  std::string name;
  int stages = 0;
  int order = 0;
  int embedded_order = 0;
  std::vector<double> A;  // stages x stages, row-major, strictly lower triangular
  std::vector<double> b, d, c;
  bool fsal = false;  // last stage is evaluated at the new solution (first same as last)

  // The coefficient tables shipped with SUNDIALS ARKODE, so no coefficient is retyped here.
  // Known names: "dopri5" (Dormand-Prince 5(4)), "fehlberg8" (Fehlberg 8(7)).
  static ButcherTable from_arkode(const std::string& name);
  // Dormand & Prince's 8th-order 12-stage method of DOP853, for fixed steps (no embedded estimate:
  // d = b); ARKODE 6.4 does not ship it (butcher_tables.cpp).
  static ButcherTable dop853();
};

// out = base + sum_t c[t] k[t] over m terms (base null: no base), each entry's sum added in the order
// of t, as one axpy after another would (so the same bits), for dynamic sizes: in blocks of 16
// entries held in registers while the terms are added, one load and store of out an entry rather
// than one per term.
template <class State>
void linear_combination(State& out, const State* base, const double* c, const State* const* k, int m) {
  static_assert(State::SizeAtCompileTime == Eigen::Dynamic, "fixed sizes: one axpy a term (EmbeddedRk)");
  using Block = Eigen::Matrix<double, 16, 1>;
  const Eigen::Index n = out.size();
  if (n < 16) {  // short vectors: Eigen's vectorized axpys beat the scalar loop below
    if (base != nullptr) out = *base;
    else out.setZero();
    for (int t = 0; t < m; ++t) out += c[t] * *k[t];
    return;
  }
  Eigen::Index e = 0;
  for (; e + 16 <= n; e += 16) {
    Block s = base != nullptr ? Block(base->template segment<16>(e)) : Block::Zero();
    for (int t = 0; t < m; ++t) s += c[t] * k[t]->template segment<16>(e);
    out.template segment<16>(e) = s;
  }
  for (; e < n; ++e) {
    double s = base != nullptr ? (*base)[e] : 0.0;
    for (int t = 0; t < m; ++t) s += c[t] * (*k[t])[e];
    out[e] = s;
  }
}

// Adaptive embedded Runge-Kutta with local extrapolation (the higher order propagates) and a PI
// step-size controller on the mixed error norm max_i |e_i| / (atol + rtol |y_i|).
template <class Ode>
class EmbeddedRk {
 public:
  using State = typename Ode::State;
  EmbeddedRk(Ode& ode, const ButcherTable& table, double rtol, double atol)
      : ode_(ode), tab_(table), rtol_(rtol), atol_(atol), k_(table.stages, State::Zero(ode.size())),
        ytmp_(ode.size()), ynew_(ode.size()), err_(ode.size()) {
    if (table.stages > kMaxStages) throw SolverError("embedded Runge-Kutta: more stages than kMaxStages");
  }

  // Resets the controller and chooses the first step (Hairer, Norsett & Wanner, II.4).
  void initialize(double t0, const State& y0, RunStats& stats) {
    have_k0_ = false;
    err_old_ = 1.0;  // neutral: the first step's factor is the elementary controller's
    rejected_ = false;
    ode_.rhs(t0, y0, k_[0]);
    ++stats.rhs_evals;
    const double d0 = scaled_norm(y0, y0), d1 = scaled_norm(k_[0], y0);
    double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    for (;;) {  // the probe of f one Euler step on: shorter while its state is out of reach
      ytmp_ = y0 + h0 * k_[0];
      try {
        ode_.rhs(t0 + h0, ytmp_, k_[1]);
        ++stats.rhs_evals;
        break;
      } catch (const StageFailure&) {
        ++stats.failures;
        h0 *= 0.25;
        if (h0 < 1e-14 * std::max(1.0, std::abs(t0))) throw;
      }
    }
    err_ = k_[1] - k_[0];
    const double d2 = scaled_norm(err_, y0) / h0;
    const double dm = std::max(d1, d2);
    const double h1 = dm <= 1e-15 ? std::max(1e-6, h0 * 1e-3) : std::pow(0.01 / dm, 1.0 / (tab_.order + 1));
    h_ = std::min(100 * h0, h1);
    have_k0_ = true;  // k_[0] holds f(t0, y0)
  }

  // Advances (t, y) by one accepted step, never past t_end.
  void step(double& t, State& y, double t_end, RunStats& stats) {
    const double h_min = 1e-14 * std::max(1.0, std::abs(t_end));
    for (;;) {
      double h = std::min(h_, t_end - t);
      if (!have_k0_) {
        ode_.rhs(t, y, k_[0]);
        ++stats.rhs_evals;
      }
      bool stage_failed = false;
      try {
        for (int i = 1; i < tab_.stages; ++i) {
          stage_argument(i, h, y);
          ode_.rhs(t + tab_.c[i] * h, ytmp_, k_[i]);
          ++stats.rhs_evals;
        }
      } catch (const StageFailure&) {
        // A stage the step put out of reach: reject it like a failed error test, 4x shorter.
        if (0.25 * h < h_min) throw;
        stage_failed = true;
      }
      if (stage_failed) {
        ++stats.failures;
        h_ = 0.25 * h;
        have_k0_ = true;  // k_[0] = f(t, y) is still valid for the retry
        continue;
      }
      solution_and_error(h, y);
      const double en = scaled_norm(err_, y, ynew_);
      if (!std::isfinite(en)) throw SolverError("non-finite state in embedded Runge-Kutta step");
      if (en <= 1.0) {
        const double fac = accepted_factor(en);
        t = (h == t_end - t) ? t_end : t + h;
        y = ynew_;
        if (tab_.fsal) {
          k_[0].swap(k_[tab_.stages - 1]);  // FSAL; the last stage is recomputed before it is read
          have_k0_ = true;
        } else {
          have_k0_ = false;
        }
        h_ = h * fac;
        return;
      }
      ++stats.failures;
      h_ = h * rejected_factor(en);
      have_k0_ = true;  // k_[0] = f(t, y) is still valid for the retry
      if (h_ < h_min) underflow(t, h_);
    }
  }

 private:
  [[noreturn, gnu::noinline, gnu::cold]] static void underflow(double t, double h) {
    throw SolverError(fmt::format("step size underflow in embedded Runge-Kutta at t = {:.9g} s (h = {:.3g} s)", t, h));
  }
  // PI control (Gustafsson's PI.3.4: k_I = 0.3/k, k_P = 0.4/k, k = embedded order + 1) on accepted
  // steps: on a chain whose step is held at the stability boundary, the elementary controller
  // rejected a quarter of its steps. After a rejection the next step may not grow (Hairer, II.4).
  // Out of line: called once a step, it need not grow the step loop inlined into every formulation.
  [[gnu::noinline]] double accepted_factor(double en) {
    const double expo = 1.0 / (std::min(tab_.order, tab_.embedded_order) + 1), beta = 0.4 * expo;
    double fac = en == 0.0 ? 5.0 : std::clamp(0.9 * std::pow(en, -(expo - 0.75 * beta)) * std::pow(err_old_, beta), 0.2, 5.0);
    if (rejected_) fac = std::min(fac, 1.0);
    rejected_ = false;
    err_old_ = std::max(en, 1e-4);
    return fac;
  }
  // The elementary controller on a rejected step (en > 1).
  [[gnu::noinline]] double rejected_factor(double en) {
    rejected_ = true;
    return std::max(0.9 * std::pow(en, -1.0 / (std::min(tab_.order, tab_.embedded_order) + 1)), 0.2);
  }

  // ytmp_ = y + h sum_j a_ij k_j. Dynamic sizes: one linear combination (blocks held in registers);
  // fixed sizes: one axpy a term, which the compiler keeps in registers itself (the combination's
  // arrays of coefficients and pointers cost the planar pendulum's baumgarte/dopri5 a third more).
  void stage_argument(int i, double h, const State& y) {
    if constexpr (State::SizeAtCompileTime == Eigen::Dynamic) {
      double coef[kMaxStages];
      const State* terms[kMaxStages];
      int m = 0;
      for (int j = 0; j < i; ++j)
        if (const double a = tab_.A[i * tab_.stages + j]; a != 0.0) coef[m] = h * a, terms[m++] = &k_[j];
      linear_combination(ytmp_, &y, coef, terms, m);
    } else {
      ytmp_ = y;
      for (int j = 0; j < i; ++j)
        if (const double a = tab_.A[i * tab_.stages + j]; a != 0.0) ytmp_ += (h * a) * k_[j];
    }
  }

  // ynew_ = y + h sum_i b_i k_i and err_ = h sum_i (b_i - d_i) k_i, as stage_argument().
  void solution_and_error(double h, const State& y) {
    if constexpr (State::SizeAtCompileTime == Eigen::Dynamic) {
      double coef[kMaxStages];
      const State* terms[kMaxStages];
      int m = 0;
      for (int i = 0; i < tab_.stages; ++i)
        if (tab_.b[i] != 0.0) coef[m] = h * tab_.b[i], terms[m++] = &k_[i];
      linear_combination(ynew_, &y, coef, terms, m);
      m = 0;
      for (int i = 0; i < tab_.stages; ++i)
        if (const double e = tab_.b[i] - tab_.d[i]; e != 0.0) coef[m] = h * e, terms[m++] = &k_[i];
      linear_combination(err_, static_cast<const State*>(nullptr), coef, terms, m);
    } else {
      ynew_ = y;
      err_.setZero();
      for (int i = 0; i < tab_.stages; ++i) {
        if (tab_.b[i] != 0.0) ynew_ += (h * tab_.b[i]) * k_[i];
        const double e = tab_.b[i] - tab_.d[i];
        if (e != 0.0) err_ += (h * e) * k_[i];
      }
    }
  }

  double scaled_norm(const State& e, const State& y) const {
    return (e.array().abs() / (atol_ + rtol_ * y.array().abs())).maxCoeff();
  }
  double scaled_norm(const State& e, const State& y0, const State& y1) const {
    return (e.array().abs() / (atol_ + rtol_ * y0.array().abs().max(y1.array().abs()))).maxCoeff();
  }

  static constexpr int kMaxStages = 16;  // the tables used have at most 13 (Fehlberg 8(7))
  Ode& ode_;
  ButcherTable tab_;
  double rtol_, atol_;
  std::vector<State> k_;
  State ytmp_, ynew_, err_;
  double h_ = 0.0;
  double err_old_ = 1.0;  // the last accepted step's error norm (at least 1e-4), for the PI term
  bool rejected_ = false;
  bool have_k0_ = false;
};

// Fixed-step explicit Runge-Kutta with the propagating weights b of a Butcher table (e.g. the
// 8th-order weights of ARKODE's Fehlberg 8(7) table at a fixed step); no error estimate. All stages
// are evaluated at every step (no FSAL reuse: neither Fehlberg 8(7) nor DOP853's 8th-order part is
// FSAL). Stage sums accumulate forward: as soon as k_j exists it is added, h a_ij k_j, into every
// later stage's argument (and h b_j k_j into y), so a stage's argument is complete one axpy after
// its last k, instead of a chain of up to s - 1 dependent axpys started only then; each sum still
// adds its terms in the order of j, so the results are the same to the bit. Only the nonzero
// coefficients are kept (a third of DOP853's and Fehlberg's are zero), scaled by h once per step size.
// Small fixed-size states (kSmall) take an unrolled step instead (unrolled_step), same sums, same bits.
template <class Ode>
class FixedButcherRk {
 public:
  using State = typename Ode::State;
  FixedButcherRk(Ode& ode, const ButcherTable& table)
      : ode_(ode), s_(table.stages), c_(table.c), k_(ode.size()), arg_(table.stages + 1, State::Zero(ode.size())) {
    first_.push_back(0);
    for (int j = 0; j < s_; ++j) {
      for (int i = j + 1; i < s_; ++i)
        if (const double a = table.A[i * s_ + j]; a != 0.0) a_.push_back({i, a});
      if (table.b[j] != 0.0) a_.push_back({s_, table.b[j]});  // arg_[s_]: the new y
      first_.push_back(static_cast<int>(a_.size()));
    }
    ha_.assign(a_.size(), 0.0);
    if constexpr (kSmall) {
      dense_.assign(static_cast<size_t>(s_) * (s_ + 1), 0.0);
      for (int j = 0; j < s_; ++j) {
        for (int i = j + 1; i < s_; ++i) dense_[j * (s_ + 1) + i] = table.A[i * s_ + j];
        dense_[j * (s_ + 1) + s_] = table.b[j];
      }
      hdense_.assign(dense_.size(), 0.0);
    }
  }

  void step(double t, double h, State& y, RunStats& stats) {
    if (h != h_) {  // a fixed step changes only for a last partial step or an event's sub-step
      h_ = h;
      for (size_t n = 0; n < a_.size(); ++n) ha_[n] = h * a_[n].a;
      for (size_t n = 0; n < dense_.size(); ++n) hdense_[n] = h * dense_[n];
    }
    if constexpr (kSmall) {
      if (s_ == 12) return unrolled_step<12>(t, h, y, stats);
      if (s_ == 13) return unrolled_step<13>(t, h, y, stats);
    }
    for (int i = 0; i <= s_; ++i) arg_[i] = y;
    for (int j = 0; j < s_; ++j) {
      ode_.rhs(t + c_[j] * h, arg_[j], k_);
      for (int n = first_[j], end = first_[j + 1]; n < end; ++n) arg_[a_[n].i] += ha_[n] * k_;
    }
    y = arg_[s_];
    stats.rhs_evals += s_;
  }

 private:
  static constexpr bool kSmall = State::SizeAtCompileTime != Eigen::Dynamic && State::SizeAtCompileTime <= 8;

  // The step for S stages unrolled at compile time, on the dense table (its zeros too: adding 0 k
  // changes no bit of a finite sum): the stage arguments and each k are locals, which the compiler
  // keeps in registers or passes whole, where a member k written element by element by the
  // right-hand side and read back as one vector stalls store-to-load forwarding at every stage.
  // Measured in docs/formulations.md (Method notes).
  template <int S>
  EIGEN_ALWAYS_INLINE void unrolled_step(double t, double h, State& y, RunStats& stats) {
    State arg[S + 1];
#pragma GCC unroll 16
    for (int i = 0; i <= S; ++i) arg[i] = y;
#pragma GCC unroll 16
    for (int j = 0; j < S; ++j) {
      State k;
      ode_.rhs(t + c_[j] * h, arg[j], k);
      const double* col = &hdense_[j * (S + 1)];
#pragma GCC unroll 16
      for (int i = j + 1; i <= S; ++i) arg[i] += col[i] * k;
    }
    y = arg[S];
    stats.rhs_evals += S;
  }

  struct Coefficient {
    int i;  // the stage whose argument the term enters (s_: the new y, with weight b_j)
    double a;
  };
  Ode& ode_;
  int s_;
  std::vector<double> c_, ha_;
  std::vector<double> dense_, hdense_;  // kSmall: column j (s_ + 1 entries) holds a_ij for i > j, then b_j
  std::vector<Coefficient> a_;  // nonzero a_ij, then b_j, by the stage j that produces k_j (first_[j] .. first_[j + 1])
  std::vector<int> first_;
  State k_;
  std::vector<State> arg_;  // the stages' arguments y + h sum_j a_ij k_j, built up as the k_j come, and the new y
  double h_ = 0.0;
};

}  // namespace mbs
