/*
** cpu_device.h -- making the CPU device: the one call the device table needs besides the
** operations of cj_backend_cpu (backend.h). Internal.
*/
#ifndef CUJIT_CPU_DEVICE_H
#define CUJIT_CPU_DEVICE_H

#include "runtime.h"

/* Fills dev (engine, ordinal, info, ops = &cj_backend_cpu, impl) for the CPU device: one worker
** per core (CUJIT_CPU_THREADS to choose), memory = host RAM, limits like an sm_90 GPU's. The
** threads start with the first work. ops->release(dev) undoes it. */
cujit_status cj_cpu_device_init(cujit_engine *engine, cujit_device *dev, int ordinal);

#endif
