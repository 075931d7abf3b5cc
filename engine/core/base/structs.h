/*
** structs.h -- the public structs that grow (cujit.h's introduction, "Structs that grow"): every
** struct a caller passes in or has filled begins with the `size` its program was built with, and
** cujit copies only what both layouts share. Internal: nothing here is public.
*/
#ifndef CUJIT_STRUCTS_H
#define CUJIT_STRUCTS_H

#include "base.h"

#include <stddef.h>

/* The bytes of a layout up to the end of `field`: a first version's size (its last field), which
** stays the smallest size cujit accepts however much the struct grows after it. */
#define CJ_SIZE_UP_TO(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

/* The first version of each struct, by its last field then. Programs built against that header
** pass at least this much; a smaller size is not a layout that ever was. A field added to a struct
** goes after the whole of the layout before it (its sizeof, trailing padding included), so that
** an older program's padding, which its initializer need not zero, is never read as a field. */
#define CJ_DEVICE_INFO_V1 CJ_SIZE_UP_TO(cujit_device_info, pci_bus_id)
#define CJ_COMPILE_OPTIONS_V1 CJ_SIZE_UP_TO(cujit_compile_options, std)
#define CJ_PARAM_INFO_V1 CJ_SIZE_UP_TO(cujit_param_info, nullable)
#define CJ_KERNEL_ATTRIBUTES_V1 CJ_SIZE_UP_TO(cujit_kernel_attributes, binary_version)
#define CJ_LAUNCH_CONFIG_V1 CJ_SIZE_UP_TO(cujit_launch_config, stream)
#define CJ_CACHE_STATS_V1 CJ_SIZE_UP_TO(cujit_cache_stats, disk_enabled)
#define CJ_SCALAR_V1 CJ_SIZE_UP_TO(cujit_scalar, v)
#define CJ_GEMM_OPTIONS_V1 CJ_SIZE_UP_TO(cujit_gemm_options, relu_mask)
#define CJ_TENSOR_MAP_DESC_V1 CJ_SIZE_UP_TO(cujit_tensor_map_desc, oob_nan)

/* Larger than any struct of cujit.h will be: a size above it is an uninitialised field. */
#define CJ_STRUCT_SIZE_MAX 4096

/* A struct the caller passes in (`theirs`, whose first field is its size) made into one of this
** library's layout in `ours` (ours_size bytes): the bytes both layouts have are copied, the rest
** of `ours` is zero (each field's default), and ours' size is ours_size. Refused, naming `fn`,
** `type` and its INIT macro: a size of 0, below `v1` or above CJ_STRUCT_SIZE_MAX
** (CUJIT_ERROR_INVALID_ARGUMENT); a newer layout with a byte set past ours, a field this library
** does not know and would otherwise ignore (CUJIT_ERROR_UNSUPPORTED). */
cujit_status cj_struct_in(cujit_engine *engine, const char *fn, const char *type,
                          const void *theirs, void *ours, size_t ours_size, size_t v1);

/* Checks the size of a struct the caller has filled (`theirs`; NULL is refused) as cj_struct_in
** does, and gives the bytes cujit may write there: min(their size, ours_size). */
cujit_status cj_struct_room(cujit_engine *engine, const char *fn, const char *type,
                            const void *theirs, size_t ours_size, size_t v1, size_t *room);

/* Fills the caller's struct from `ours` (a whole struct of this library's layout, ours_size
** bytes): the first `room` bytes (cj_struct_room's), so nothing past the caller's layout is
** touched; the size field then says how many bytes were filled. */
void cj_struct_out(void *theirs, size_t room, const void *ours);

#endif
