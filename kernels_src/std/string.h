/* <string.h> for NVRTC (cujit stand-in). Device code has memcpy and memset, which NVRTC declares
** itself; the string functions (strlen, strcpy, ...) are host-only. */
#ifndef CUJIT_STD_STRING_H
#define CUJIT_STD_STRING_H
#endif
