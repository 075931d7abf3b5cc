/* <stddef.h> for NVRTC (cujit stand-in). NVRTC already has size_t, ptrdiff_t and NULL; this adds
** offsetof and max_align_t (16 bytes: the widest alignment of a device built-in type). */
#ifndef CUJIT_STD_STDDEF_H
#define CUJIT_STD_STDDEF_H
#ifndef offsetof /* NVRTC's front end has no __builtin_offsetof; __INTADDR__ is its constant */
#define offsetof(type, member) ((size_t)__INTADDR__(&((type *)0)->member))
#endif
typedef struct __align__(16) {
  long long __cujit_ll;
  double __cujit_d;
} max_align_t;
#endif
