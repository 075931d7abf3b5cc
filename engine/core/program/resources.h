/*
** resources.h -- a kernel's resources as the compiler reported them (resources.c). Internal.
*/
#ifndef CUJIT_RESOURCES_H
#define CUJIT_RESOURCES_H

#include "program.h"

/* Fills `a` from ptxas's report on `symbol` in the program's log and from its PTX: 1 when the
** log holds the report; else 0, with registers, local, shared and spills -1. */
int cj_resources_read(const cujit_program *p, const char *symbol, cujit_kernel_attributes *a);

#endif
