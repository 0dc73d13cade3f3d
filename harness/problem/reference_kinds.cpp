#include "problem/reference_kinds.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace mbs {

bool Reference::evaluates(const std::string& check_quantity) const {
  const auto& q = kind_->check_quantities;
  return std::find(q.begin(), q.end(), check_quantity) != q.end();
}

ReferenceKinds& ReferenceKinds::instance() {
  static ReferenceKinds kinds;
  return kinds;
}

bool ReferenceKinds::add(const ReferenceKindInfo& info) {
  if (find(info.name)) throw std::logic_error("reference kind '" + info.name + "' registered twice");
  kinds_.push_back(&info);
  std::sort(kinds_.begin(), kinds_.end(), [](const ReferenceKindInfo* a, const ReferenceKindInfo* b) { return a->name < b->name; });
  return true;
}

const ReferenceKindInfo* ReferenceKinds::find(const std::string& name) const {
  for (const ReferenceKindInfo* k : kinds_)
    if (k->name == name) return k;
  return nullptr;
}

std::vector<const ReferenceKindInfo*> ReferenceKinds::all() const { return kinds_; }

std::vector<std::string> ReferenceKinds::names(const std::function<bool(const ReferenceKindInfo&)>& has) const {
  std::vector<std::string> out;
  for (const ReferenceKindInfo* k : kinds_)
    if (has(*k)) out.push_back(k->name);
  return out;
}

std::shared_ptr<ReferenceTrajectory> sample_exact(const Problem& problem, const std::string& kind,
                                                  const std::function<Eigen::VectorXd(double)>& position) {
  auto ref = std::make_shared<ReferenceTrajectory>();
  ref->kind = kind;
  ref->dim = problem.model.dim;
  ref->dt = problem.run.output_interval;
  ref->t_end = problem.run.end_time;
  const int samples = static_cast<int>(std::ceil(ref->t_end / ref->dt - 1e-9)) + 1;
  ref->x.resize(samples, ref->dim);
  for (int k = 0; k < samples; ++k) ref->x.row(k) = position(std::min(k * ref->dt, ref->t_end)).transpose();
  return ref;
}

}  // namespace mbs
