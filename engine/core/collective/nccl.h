/*
** nccl.h -- what nccl.c (communicators, collectives) and nccl_id.c (unique ids as text, the
** rendezvous file) share. Internal; the public calls are in cujit.h.
*/
#ifndef CUJIT_NCCL_H
#define CUJIT_NCCL_H

#include "run/memory.h"
#include "nccl_lib.h"

/* NCCL opened (once per process), or NULL with UNSUPPORTED recorded, saying what to install or
** set, the message opening with `fn`. */
const cj_nccl *cj_nccl_need(cujit_engine *engine, const char *fn);

/* Records NCCL's result `rc` of `what` (with the communicator's last error when it has one). */
cujit_status cj_nccl_fail(cujit_engine *engine, const cj_nccl *lib, cj_nccl_comm_t comm,
                          cj_nccl_result rc, const char *what);

/* Reads 256 hex digits (surrounding white space allowed) into a unique id, or fails saying what
** is wrong with the text, the message opening with `fn`. */
cujit_status cj_nccl_id_parse(cujit_engine *engine, const char *fn, const char *hex,
                              cj_nccl_id *id);

#endif
