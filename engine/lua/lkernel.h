/*
** lkernel.h -- kernel objects from Lua (userdata cujit.kernel): what the launch and program files
** need of them.
*/
#ifndef CUJIT_LKERNEL_H
#define CUJIT_LKERNEL_H

#include "lstate.h"

#define CJL_KERNEL "cujit.kernel"

/* What the launch path needs of a parameter, read once when the kernel is wrapped. */
typedef struct cjl_param {
  const char *name; /* owned by the kernel */
  cujit_param_kind kind;
  cujit_dtype dtype;
  int is_const;
  int type_var;
  int is_bool;
  size_t size;
} cjl_param;

/* User values of a kernel: the last grid/block launcher, the last forall launcher, and (for a
** specialisation) the generic kernel that owns it. */
enum { CJL_UV_LAUNCHER = 1, CJL_UV_FORALL, CJL_UV_PARENT, CJL_KERNEL_UVS = CJL_UV_PARENT };

struct cjl_launcher;

typedef struct cjl_kernel {
  cujit_kernel *kernel;      /* NULL once freed */
  struct cjl_kernel *parent; /* the generic kernel that owns this specialisation, or NULL */
  cjl_state *state;
  struct cjl_launcher *launcher; /* the cached grid/block launcher (user value CJL_UV_LAUNCHER) */
  int owns;
  int nparams;
  char arch[24]; /* from the PTX's .target, "" for a generic kernel */
  cjl_param params[];
} cjl_kernel;

/* Usable: not freed, and not a specialisation whose generic kernel was freed (with it). */
int cjl_kernel_alive(const cjl_kernel *k);

/* The kernel's name, or "?" once it is freed. */
const char *cjl_kernel_name(const cjl_kernel *k);

/* The live kernel at `idx`; raises an argument error otherwise. */
cjl_kernel *cjl_check_kernel(lua_State *L, int idx);

/* Pushes a kernel object for `kernel`, reading its parameters once. `owns`: the object frees the
** kernel when collected (0 for a specialisation, owned by its generic kernel). */
cjl_kernel *cjl_push_kernel(lua_State *L, cujit_kernel *kernel, int owns);

/* Raises the error of a call of many items (cujit_program_compile_many, _specialize_many):
** "WHAT: K of N ITEMS failed:" then "[i] message" for each failure, i counted from 1 as the Lua
** list is. */
int cjl_many_failed(lua_State *L, cujit_engine *e, const char *what, const char *items,
                    const cujit_status *statuses, size_t n);

/* Registers the kernel class (methods; llaunch.c adds launching) and adds cuda.jit. */
void cjl_open_kernels(lua_State *L, int module_index);

#endif
