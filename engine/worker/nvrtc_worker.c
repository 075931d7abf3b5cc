/*
** nvrtc_worker.c -- cujit-nvrtc-worker: the program an engine starts to compile with NVRTC beside
** its own process (engine/core/compile/remote.h), since NVRTC runs one compile of a process at a
** time. It reads requests on stdin, a socket the engine holds, and answers each on stdout until
** the engine closes it. Not for people: it says so when run from a terminal.
*/
#include "compile/remote.h"

#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
  (void)argv;
  if (argc > 1 || isatty(0)) {
    fprintf(stderr, "cujit-nvrtc-worker compiles for a cujit engine, which starts it; it is not "
                    "run by hand (CUJIT_NVRTC_WORKER=off keeps engines from using it)\n");
    return 64;
  }
  return cj_remote_serve(0, 1);
}
