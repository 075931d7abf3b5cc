/*
** stub_attrs.h -- the stand-in driver's launch-attribute entry points (stub_attrs.c), named in
** stub_driver.c's table, and what they take from stub_driver.c: a call's pretend cost and the
** integer settings read from the environment.
*/
#ifndef CJ_STUB_ATTRS_H
#define CJ_STUB_ATTRS_H

#include <cuda.h>

void cj_stub_cost(void);
int cj_stub_env_int(const char *name, int fallback);

CUresult cj_stub_launch_plain(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                              unsigned by, unsigned bz, unsigned shared, CUstream s, void **params,
                              void **extra);
CUresult cj_stub_launch_ex(const CUlaunchConfig *c, CUfunction f, void **params, void **extra);
CUresult cj_stub_func_set_attribute(CUfunction f, CUfunction_attribute a, int value);
CUresult cj_stub_max_active_clusters(int *clusters, CUfunction f, const CUlaunchConfig *c);
CUresult cj_stub_param_info(CUfunction f, size_t index, size_t *offset, size_t *size);

#endif
