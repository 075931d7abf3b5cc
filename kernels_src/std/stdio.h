/* <stdio.h> for NVRTC (cujit stand-in: used only when neither include_dirs nor the toolkit has
** one). Device code has printf, which NVRTC declares itself; the rest of C's stdio (FILE, fopen,
** fprintf) is host-only, and code that calls it from device code fails naming the function. */
#ifndef CUJIT_STD_STDIO_H
#define CUJIT_STD_STDIO_H
#ifndef EOF
#define EOF (-1)
#endif
#endif
