/* <assert.h> for NVRTC (cujit stand-in). As in C, each inclusion defines assert anew from NDEBUG
** as it stands there, so no include guard. A failed device assert reports through NVRTC's
** __assertfail (expression, file, line, function) and stops the kernel. */
#undef assert
#ifdef NDEBUG
#define assert(e) (static_cast<void>(0))
#else
#define assert(e)                                                                                  \
  ((e) ? static_cast<void>(0) : __assertfail(#e, __FILE__, __LINE__, __PRETTY_FUNCTION__, sizeof(char)))
#endif
