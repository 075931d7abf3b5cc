/* <time.h> for NVRTC (cujit stand-in). Device code has clock_t and clock() (the SM's cycle
** counter, as clock64() is), which NVRTC declares itself; time, CLOCKS_PER_SEC and the calendar
** are host-only: a device clock() counts cycles, not seconds. */
#ifndef CUJIT_STD_TIME_H
#define CUJIT_STD_TIME_H
#endif
