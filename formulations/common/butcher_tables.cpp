#include <cstdio>  // arkode_butcher.h uses FILE without including it

#include <arkode/arkode_butcher_erk.h>

#include <cmath>
#include <stdexcept>

#include "common/explicit_rk.hpp"

namespace mbs {

ButcherTable ButcherTable::from_arkode(const std::string& name) {
  ARKODE_ERKTableID id;
  if (name == "dopri5") id = ARKODE_DORMAND_PRINCE_7_4_5;
  else if (name == "fehlberg8") id = ARKODE_FEHLBERG_13_7_8;
  else throw std::invalid_argument("unknown Butcher table '" + name + "'");
  ARKodeButcherTable bt = ARKodeButcherTable_LoadERK(id);
  if (bt == nullptr) throw std::runtime_error("ARKodeButcherTable_LoadERK failed for " + name);
  ButcherTable t;
  t.name = name;
  t.stages = bt->stages;
  t.order = bt->q;
  t.embedded_order = bt->p;
  t.A.assign(t.stages * t.stages, 0.0);
  for (int i = 0; i < t.stages; ++i)
    for (int j = 0; j < t.stages; ++j) t.A[i * t.stages + j] = bt->A[i][j];
  t.b.assign(bt->b, bt->b + t.stages);
  t.d.assign(bt->d, bt->d + t.stages);
  t.c.assign(bt->c, bt->c + t.stages);
  ARKodeButcherTable_Free(bt);
  t.fsal = std::abs(t.c[t.stages - 1] - 1.0) < 1e-15;
  for (int j = 0; j < t.stages && t.fsal; ++j)
    t.fsal = std::abs(t.A[(t.stages - 1) * t.stages + j] - t.b[j]) < 1e-15;
  return t;
}

}  // namespace mbs
