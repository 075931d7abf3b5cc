/*
** files.h -- reading a source file, writing a file the user named without harming what was
** there, and removing a directory cujit made (files.c).
*/
#ifndef CUJIT_FILES_H
#define CUJIT_FILES_H

#include "base.h"

/* Writes len bytes to path by the rule of files.c; on failure the message names fn (unless NULL)
** and path, says why and what to do. "-" is standard output. */
cujit_status cj_file_write(cujit_engine *engine, const char *fn, const char *path, const void *data,
                           size_t len);

/* The whole text file at path in *out (malloc'd, NUL-terminated), refused when it holds NUL bytes
** or reaches max bytes; the message names the file and why. */
cujit_status cj_file_read(cujit_engine *engine, const char *path, size_t max, char **out);

/* 1 when the file at path holds exactly the len bytes of text (0 when it differs, is missing or
** cannot be read): a file cujit keeps is rewritten only when it is not what it should be. */
int cj_file_holds(const char *path, const char *text, size_t len);

/* Removes path and everything under it, never following a symbolic link out of it; what cannot be
** removed stays, silently (the cleanup of a directory cujit made: kept sources, PCHs). */
void cj_remove_tree(const char *path);

#endif
