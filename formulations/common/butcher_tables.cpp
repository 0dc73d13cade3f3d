#include <cstdio>  // arkode_butcher.h uses FILE without including it

#include <arkode/arkode_butcher_erk.h>

#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

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

// Dormand & Prince's 8th-order method of DOP853 (Hairer, Norsett & Wanner, Solving Ordinary
// Differential Equations I, 2nd ed., Springer 1993, Sec. II.10; the constants of Hairer's dop853.f):
// its 12 stages and 8th-order weights only, for fixed steps. ARKODE 6.4 has no such table (its one
// 8th-order method, Fehlberg 8(7), takes 13 stages), so the coefficients are written here, and
// tests/test_projection.cpp checks the quadrature conditions and the 8th order of the result.
ButcherTable ButcherTable::dop853() {
  ButcherTable t;
  t.name = "dop853";
  t.stages = 12;
  t.order = 8;
  t.embedded_order = 0;  // no error estimate: fixed steps only
  t.c = {0.0,
         0.526001519587677318785587544488e-01,
         0.789002279381515978178381316732e-01,
         0.118350341907227396726757197510e+00,
         0.281649658092772603273242802490e+00,
         0.333333333333333333333333333333e+00,
         0.25e+00,
         0.307692307692307692307692307692e+00,
         0.651282051282051282051282051282e+00,
         0.6e+00,
         0.857142857142857142857142857142e+00,
         1.0};
  // Row i: the nonzero a_ij of stage i + 1 as (j, a_ij), j 0-based.
  const std::vector<std::vector<std::pair<int, double>>> rows = {
      {},
      {{0, 5.26001519587677318785587544488e-2}},
      {{0, 1.97250569845378994544595329183e-2}, {1, 5.91751709536136983633785987549e-2}},
      {{0, 2.95875854768068491816892993775e-2}, {2, 8.87627564304205475450678981324e-2}},
      {{0, 2.41365134159266685502369798665e-1}, {2, -8.84549479328286085344864962717e-1},
       {3, 9.24834003261792003115737966543e-1}},
      {{0, 3.7037037037037037037037037037e-2}, {3, 1.70828608729473871279604482173e-1},
       {4, 1.25467687566822425016691814123e-1}},
      {{0, 3.7109375e-2}, {3, 1.70252211019544039314978060272e-1}, {4, 6.02165389804559606850219397283e-2},
       {5, -1.7578125e-2}},
      {{0, 3.70920001185047927108779319836e-2}, {3, 1.70383925712239993810214054705e-1},
       {4, 1.07262030446373284651809199168e-1}, {5, -1.53194377486244017527936158236e-2},
       {6, 8.27378916381402288758473766002e-3}},
      {{0, 6.24110958716075717114429577812e-1}, {3, -3.36089262944694129406857109825e0},
       {4, -8.68219346841726006818189891453e-1}, {5, 2.75920996994467083049415600797e1},
       {6, 2.01540675504778934086186788979e1}, {7, -4.34898841810699588477366255144e1}},
      {{0, 4.77662536438264365890433908527e-1}, {3, -2.48811461997166764192642586468e0},
       {4, -5.90290826836842996371446475743e-1}, {5, 2.12300514481811942347288949897e1},
       {6, 1.52792336328824235832596922938e1}, {7, -3.32882109689848629194453265587e1},
       {8, -2.03312017085086261358222928593e-2}},
      {{0, -9.3714243008598732571704021658e-1}, {3, 5.18637242884406370830023853209e0},
       {4, 1.09143734899672957818500254654e0}, {5, -8.14978701074692612513997267357e0},
       {6, -1.85200656599969598641566180701e1}, {7, 2.27394870993505042818970056734e1},
       {8, 2.49360555267965238987089396762e0}, {9, -3.0467644718982195003823669022e0}},
      {{0, 2.27331014751653820792359768449e0}, {3, -1.05344954667372501984066689879e1},
       {4, -2.00087205822486249909675718444e0}, {5, -1.79589318631187989172765950534e1},
       {6, 2.79488845294199600508499808837e1}, {7, -2.85899827713502369474065508674e0},
       {8, -8.87285693353062954433549289258e0}, {9, 1.23605671757943030647266201528e1},
       {10, 6.43392746015763530355970484046e-1}}};
  t.A.assign(t.stages * t.stages, 0.0);
  for (int i = 0; i < t.stages; ++i)
    for (const auto& [j, a] : rows[i]) t.A[i * t.stages + j] = a;
  t.b = {5.42937341165687622380535766363e-2, 0.0, 0.0, 0.0, 0.0, 4.45031289275240888144113950566e0,
         1.89151789931450038304281599044e0, -5.8012039600105847814672114227e0, 3.1116436695781989440891606237e-1,
         -1.52160949662516078556178806805e-1, 2.01365400804030348374776537501e-1, 4.47106157277725905176885569043e-2};
  t.d = t.b;
  t.fsal = false;
  return t;
}

}  // namespace mbs
