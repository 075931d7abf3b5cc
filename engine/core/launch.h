/*
** launch.h -- launching kernels (launch.c): the public cujit_launch* calls and the kernel queries
** that need the kernel on the current device. Nothing internal is declared: the layers above
** (library) launch through the public calls. Internal.
*/
#ifndef CUJIT_LAUNCH_H
#define CUJIT_LAUNCH_H

#include "kernel.h"
#include "memory.h"

#endif
