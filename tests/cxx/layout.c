/* layout.c -- the public structs' sizes and offsets as C sees them, for host.cpp to compare with
** C++'s (tests/sh/test_cxx.sh links the two): a C++ program and libcujit, built as C, must agree
** on every layout. cxx_test_c_layout(i) is figure i, in host.cpp's order; 0 past the last. */
#include "cujit.h"

#include <stddef.h>

size_t cxx_test_c_layout(int which);
size_t cxx_test_c_layout(int which) {
  const size_t c[] = {sizeof(cujit_device_info),
                      offsetof(cujit_device_info, pci_bus_id),
                      sizeof(cujit_compile_options),
                      offsetof(cujit_compile_options, nonnull_count),
                      sizeof(cujit_param_info),
                      offsetof(cujit_param_info, nullable),
                      sizeof(cujit_kernel_attributes),
                      sizeof(cujit_arg),
                      offsetof(cujit_arg, v),
                      sizeof(cujit_launch_config),
                      offsetof(cujit_launch_config, stream),
                      sizeof(cujit_cache_stats),
                      offsetof(cujit_cache_stats, disk_enabled),
                      sizeof(cujit_scalar),
                      sizeof(cujit_compile_option_info),
                      sizeof(cujit_status),
                      sizeof(cujit_dtype),
                      sizeof(cujit_tensor_map_desc),
                      offsetof(cujit_tensor_map_desc, oob_nan),
                      sizeof(cujit_tensor_map)};
  return which >= 0 && (size_t)which < sizeof c / sizeof *c ? c[which] : 0;
}
