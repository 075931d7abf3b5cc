/*
** minimal.h -- NVRTC's -minimal (12.4 on) where a unit cannot need what it leaves out: the
** texture and surface functions, the CUDA runtime's device functions and types ("cuda..."),
** launches from device code. About a fifth off a small kernel's compile. Internal.
*/
#ifndef CUJIT_MINIMAL_H
#define CUJIT_MINIMAL_H

#include "includes.h"
#include "options.h"

/* Adds -minimal to NVRTC's options `o` when it fits, after the cache key was made, and returns
** 1 (else 0). The key is the same with and without: -minimal only leaves out declarations the
** unit does not name, and the code NVRTC makes is the same (tests/c/test_minimal.c compares the
** PTX). It fits when CUJIT_MINIMAL is not off, NVRTC is 12.4 or newer, the options do not name it
** already, every header the unit includes is one of cujit's in memory (no file read or probed)
** and no text of the unit or its headers has, outside comments, a word beginning with cuda or
** CUDA, a texture or surface function's name (tex or surf then a digit or a capital: tex2D),
** __CUDACC_RTC_MINIMAL__ (which -minimal defines) or a "<<<". *status: CUJIT_OK, else
** INVALID_ARGUMENT for a CUJIT_MINIMAL that is not on/off, or OUT_OF_HOST_MEMORY (recorded). */
int cj_minimal_add(cujit_engine *engine, int nvrtc_version, const cj_includes *inc,
                   cj_option_list *o, cujit_status *status);

/* After a compile with -minimal failed: 1 when its log says an identifier is undefined (what
** -minimal left out, named in a way the words above missed), with -minimal taken out of `o` and
** the failed compile's log freed, so the caller compiles once more without it; else 0. */
int cj_minimal_retry(cj_option_list *o, char **log);

#endif
