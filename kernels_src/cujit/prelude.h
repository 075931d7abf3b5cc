/*
** cujit/prelude.h -- what every kernel generated from a signature and a body gets without asking:
** the grid helpers and the two calls of programmatic dependent launch, so that it costs nothing
** measurable to compile.
*/
#pragma once
#include <cujit/grid.h>
#include <cujit/pdl.h>
