/* <stdbool.h> for NVRTC (cujit stand-in): C's header; in C++ bool, true and false are keywords. */
#ifndef CUJIT_STD_STDBOOL_H
#define CUJIT_STD_STDBOOL_H
#define __bool_true_false_are_defined 1
#endif
