/* <strings.h> for NVRTC (cujit stand-in): host-only, and empty. Code that includes it for its
** host code compiles; device code that uses what it declares fails naming that, undefined. */
