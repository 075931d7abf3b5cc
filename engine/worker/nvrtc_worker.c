/*
** nvrtc_worker.c -- cujit-nvrtc-worker: the program an engine starts to compile with NVRTC beside
** its own process (engine/core/compile/remote.h), since NVRTC runs one compile of a process at a
** time. It reads requests on stdin, a socket the engine holds, and answers each on stdout until
** the engine closes it. Its own engine (no disk cache: the engine that asks keeps the results)
** holds its precompiled headers, which its later compiles of the same headers use. Not for people:
** it says so when run from a terminal or with arguments.
*/
#include "compile/remote.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
  (void)argv;
  if (argc > 1 || isatty(0)) {
    fprintf(stderr, "cujit-nvrtc-worker compiles for a cujit engine, which starts it; it is not "
                    "run by hand (CUJIT_NVRTC_WORKER=off keeps engines from using it)\n");
    return 64;
  }
  setenv("CUJIT_CACHE", "off", 1);
  cujit_engine *engine;
  if (cujit_open(&engine) != CUJIT_OK) return 3;
  int status = cj_remote_serve(engine, 0, 1);
  cujit_close(engine); /* removes its PCH directory */
  return status;
}
