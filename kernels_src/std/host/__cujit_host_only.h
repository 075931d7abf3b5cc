/* The poison the host-only stand-ins (kernels_src/std/host/) declare their names with: code that
** includes <vector> for its host code compiles under NVRTC, and device code that uses what the
** header declares fails there with a message naming the header and saying what to do. Each
** static_assert depends on a template parameter, so it fires only where device code instantiates
** the name, never where the name is only mentioned (a pointer, a host declaration). */
#ifndef CUJIT_STD_HOST_ONLY_H
#define CUJIT_STD_HOST_ONLY_H
#define CUJIT_HOST_ONLY_MSG(header, what)                                                          \
  header " is a host-only header: " what " cannot be used in device code. Keep it to host code "  \
         "(guarded by #ifndef __CUDACC_RTC__, or in a file NVRTC does not compile); libcu++'s "    \
         "<cuda/std/...> has device versions of some of the C++ library"
/* A class template: std::vector<int> v; fails. */
#define CUJIT_HOST_ONLY_TEMPLATE(header, name)                                                     \
  template <class... T>                                                                            \
  struct name {                                                                                    \
    static_assert(sizeof...(T) == 0 && sizeof...(T) != 0, CUJIT_HOST_ONLY_MSG(header, "std::" #name)); \
  };
/* A class: std::ofstream f("x"); fails at its construction. */
#define CUJIT_HOST_ONLY_CLASS(header, name)                                                        \
  struct name {                                                                                    \
    template <class... A>                                                                          \
    __device__ name(A &&...) {                                                                     \
      static_assert(sizeof...(A) == 0 && sizeof...(A) != 0, CUJIT_HOST_ONLY_MSG(header, "std::" #name)); \
    }                                                                                              \
  };
/* A function: std::sort(a, b); fails (its int result lets `auto x = std::make_unique<T>(...)`
** reach the assertion rather than stop at the auto). */
#define CUJIT_HOST_ONLY_FUNCTION(header, name)                                                     \
  template <class... A>                                                                            \
  __device__ int name(A &&...) {                                                                   \
    static_assert(sizeof...(A) == 0 && sizeof...(A) != 0, CUJIT_HOST_ONLY_MSG(header, "std::" #name)); \
    return 0;                                                                                      \
  }
#endif
