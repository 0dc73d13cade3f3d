// The recursive engine, split the way Pinocchio is: an immutable model (tree_model.hpp: SpatialTree,
// built once by build_spatial_tree from each joint's tree_joint() description), a workspace
// sized from it (TreeWorkspace), and algorithms over the two that allocate nothing: kinematics.hpp,
// aba.hpp (the spatial, planar and pin paths), crba.hpp (CRBA and the tree-sparse LTDL),
// tree_forces.hpp (force elements as body forces); spatial_algebra.hpp the spatial vectors they share.
#pragma once

#include "recursive/aba.hpp"
#include "recursive/crba.hpp"
#include "recursive/kinematics.hpp"
#include "recursive/spatial_algebra.hpp"
#include "recursive/tree_forces.hpp"
#include "recursive/tree_model.hpp"
