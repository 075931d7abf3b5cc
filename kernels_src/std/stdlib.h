/* <stdlib.h> for NVRTC (cujit stand-in). Device code has malloc, free, abs, labs and llabs, which
** NVRTC declares itself (malloc draws on the device heap); exit, getenv, rand are host-only. */
#ifndef CUJIT_STD_STDLIB_H
#define CUJIT_STD_STDLIB_H
#ifndef EXIT_SUCCESS
#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
#endif
#endif
