/*
** lstream.h -- streams and events from Lua (cuda.stream, cuda.event): their userdata, and what
** other files need of a stream argument.
*/
#ifndef CUJIT_LSTREAM_H
#define CUJIT_LSTREAM_H

#include "lstate.h"

#define CJL_STREAM "cujit.stream"
#define CJL_EVENT "cujit.event"

typedef struct cjl_stream {
  cujit_stream *stream; /* NULL once freed */
  cjl_state *state;
  int capturing; /* set by lgraph.c during a capture: launches keep their arrays (cjl_stream_keep)
                  */
} cjl_stream;

/* The stream at `idx`, NULL for none or nil; raises for anything else or a freed stream. */
cujit_stream *cjl_opt_stream(lua_State *L, int idx);

/* Keeps the value at `value_idx` alive until the stream at `stream_idx` is synchronized, for
** host memory an asynchronous copy still reads or writes. */
void cjl_stream_keep(lua_State *L, int stream_idx, int value_idx);

/* Pushes an event userdata holding no event yet; the caller fills the slot (cujit_event_create
** and the toolbox's shareable and opened events, lmanaged.c). The event at `idx`, raising if it is
** not one or was freed. */
cujit_event **cjl_new_event(lua_State *L);
cujit_event *cjl_check_event(lua_State *L, int idx);

/* Registers the stream and event classes and adds cuda.stream, cuda.event, cuda.elapsed to the
** module table at `module_index`. */
void cjl_open_streams(lua_State *L, int module_index);

#endif
