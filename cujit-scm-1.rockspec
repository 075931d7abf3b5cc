-- cujit-scm-1.rockspec -- the Lua module from a checkout: `luarocks make` (add --local for
-- ~/.luarocks). Builds with CMake (the module alone, CUJIT_LUA_ROCK=ON) and installs cujit.so
-- into the rock tree. Needs what the build needs (see scripts/setup.sh) and the CUDA toolkit's
-- headers; NVRTC and the driver are opened at run time. Not published on luarocks.org.
rockspec_format = "3.0"
package = "cujit"
version = "scm-1"
source = {
  url = "git+https://example.invalid/cujit.git", -- no public repository yet: `luarocks make` does not fetch
}
description = {
  summary = "Run-time compiled CUDA kernels from Lua: NVRTC, a PTX/CUBIN cache, the Driver API",
  detailed = [[
Kernels are written as strings (a signature and a body, or whole .cu sources), compiled with
NVRTC on first use, cached on disk and launched through the CUDA Driver API, both opened at run
time. Device and host arrays, streams, events, reductions, elementwise kernels.]],
}
dependencies = {
  "lua >= 5.4, < 5.5",
}
build = {
  type = "cmake",
  variables = {
    CMAKE_BUILD_TYPE = "Release",
    CMAKE_INSTALL_PREFIX = "$(PREFIX)",
    BUILD_TESTING = "OFF",
    CUJIT_LUA_ROCK = "ON",
    CUJIT_LUA_ROCK_LIBDIR = "$(LIBDIR)",
  },
}
