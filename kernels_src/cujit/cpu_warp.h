/*
** cujit/cpu_warp.h -- the CPU device's warp operations: a lane's shuffle, vote, reduction, match or
** __syncwarp is a meeting of the lanes its mask names in the warp's scratch, completed by the last
** lane to arrive (or, once no lane can go on, by the scheduler in cpu_sync.h for lanes that
** returned); then __activemask and the CUDA names of them all. Included by cpu_prelude.h after
** cpu_sync.h, whose waits they use.
*/
#pragma once

namespace cj_cpu {

struct warp_result {
  unsigned long long value;
  unsigned ballot, members;
};
/* The open meeting of `what` with `mask` in warp W, or a free one; NULL when all are taken. */
static inline warp_group *meeting(warp *W, const char *what, unsigned mask, int combine,
                                  bool exited_drop) {
  warp_group *free_group = nullptr;
  for (int k = 0; k < groups_per_warp; k++) {
    warp_group *G = &W->g[k];
    if (!G->arrived) {
      if (!free_group) free_group = G;
    } else if ((G->mask == mask || (combine == W_COALESCE && G->combine == W_COALESCE)) &&
               (G->what == what || strcmp(G->what, what) == 0)) {
      /* coalesced_threads(): each lane's mask is the lanes still running when it arrives */
      return G;
    }
  }
  if (free_group)
    free_group->what = what, free_group->mask = mask, free_group->pred = 0,
    free_group->combine = combine, free_group->exited_drop = exited_drop;
  return free_group;
}
/* What every lane of a reduction or __match_all_sync gets, from the values of `arrived`. */
static inline unsigned long long combine_all(const warp_group *G, unsigned arrived) {
  int c = G->combine;
  if (c == W_SELECT || c == W_MATCH_ANY || c == W_COALESCE) return 0;
  unsigned first = (unsigned)__builtin_ctz(arrived), r = (unsigned)G->in[first];
  for (unsigned l = first + 1; l < 32; l++) {
    if (!(arrived >> l & 1u)) continue;
    unsigned v = (unsigned)G->in[l];
    if (c == W_MATCH_ALL && G->in[l] != G->in[first]) return 0;
    r = c == W_ADD     ? r + v
        : c == W_MIN_S ? ((int)v < (int)r ? v : r)
        : c == W_MIN_U ? (v < r ? v : r)
        : c == W_MAX_S ? ((int)v > (int)r ? v : r)
        : c == W_MAX_U ? (v > r ? v : r)
        : c == W_AND   ? r & v
        : c == W_OR    ? r | v
        : c == W_XOR   ? r ^ v
                       : r;
  }
  return c == W_MATCH_ALL ? arrived : r;
}
/* __match_any_sync: the lanes whose value equals lane l's. */
static inline unsigned match_any(const warp_group *G, unsigned arrived, unsigned l) {
  unsigned m = 0;
  for (unsigned j = 0; j < 32; j++)
    if ((arrived >> j & 1u) && G->in[j] == G->in[l]) m |= 1u << j;
  return m;
}
/* One warp operation: this lane offers `value` and `pred`, and wants the value of lane `src` (or,
** with another `combine`, the reduction of every lane's value). */
enum { S_SELF, S_IDX, S_UP, S_DOWN, S_XOR };
/* The source lane of each shuffle kind, as PTX's shfl.sync defines it for a segment `width`: only
** the low 5 bits of the lane, delta or lane mask count (bval = b[4:0]), so a delta of 33 moves by 1
** and a lane mask of -1 is 31. */
static inline unsigned source_lane(unsigned lane, int kind, unsigned arg, int width) {
  arg &= 31u;
  unsigned lo = lane & ~(unsigned)(width - 1), hi = lo | (unsigned)(width - 1);
  switch (kind) {
  case S_IDX:
    return lo | (arg & (unsigned)(width - 1));
  case S_UP:
    return lane >= arg && lane - arg >= lo ? lane - arg : lane;
  case S_DOWN:
    return lane + arg <= hi ? lane + arg : lane;
  case S_XOR:
    return (lane ^ arg) <= hi ? lane ^ arg : lane;
  default:
    return lane;
  }
}
/* The lanes of warp w that returned. */
static inline unsigned exited(const exec *ex, unsigned w) {
  unsigned m = 0;
  for (unsigned l = 0; l < 32 && (w << 5) + l < ex->n; l++)
    if (ex->state[(w << 5) + l] == T_DONE) m |= 1u << l;
  return m;
}
/* Completes meeting G of warp w once the lanes `need` have arrived: each arrived lane's results,
** and every lane but `self` (32: none) set running. False while it waits for more. */
static inline bool complete_if_met(exec *ex, unsigned w, warp_group *G, unsigned need,
                                   unsigned self) {
  if ((G->arrived & need) != need) return false;
  unsigned arrived = G->arrived;
  unsigned long long all = combine_all(G, arrived);
  for (unsigned l = 0; l < 32; l++) {
    if (!(arrived >> l & 1u)) continue;
    unsigned s = (unsigned)G->src[l];
    fiber *fl = &ex->fibers[(w << 5) + l];
    fl->wvalue = G->combine == W_SELECT      ? ((arrived >> s & 1u) ? G->in[s] : G->in[l])
                 : G->combine == W_MATCH_ANY ? match_any(G, arrived, l)
                                             : all;
    fl->wballot = G->pred & arrived, fl->wmembers = arrived;
    if (l != self) ex->state[(w << 5) + l] = T_RUN;
  }
  G->arrived = 0;
  return true;
}
/* From unblock, once no lane can go on: the votes, reductions, matches and __syncwarps whose other
** lanes returned (a meeting completes at its last lane's arrival otherwise, at no extra cost). */
static inline bool complete_exited(exec *ex) {
  bool released = false;
  for (unsigned w = 0; w < (ex->n + 31) / 32; w++)
    for (int k = 0; k < groups_per_warp; k++) {
      warp_group *G = &ex->warps[w].g[k];
      if (G->arrived && G->exited_drop)
        released |= complete_if_met(ex, w, G, G->mask & ~exited(ex, w), 32);
    }
  return released;
}
static inline warp_result warp_op(const char *file, int line, const char *what, unsigned mask,
                                  unsigned long long value, int kind, unsigned arg, int width,
                                  int pred, int combine = W_SELECT) {
  exec *ex = me()->ex;
  unsigned t = current(ex), w = t >> 5, lane = t & 31u, bit = 1u << lane;
  unsigned src = source_lane(lane, kind, arg, width);
  unsigned lanes = ex->n - (w << 5) < 32 ? ex->n - (w << 5) : 32;
  mask = (mask & (lanes == 32 ? ~0u : (1u << lanes) - 1u)) | bit;
  /* CUDA's votes, reductions, matches and __syncwarp take the non-exited lanes of the mask; a
  ** shuffle reading a lane that returned is reported below (its value is undefined on a GPU). */
  bool exited_drop = kind == S_SELF && combine != W_COALESCE;
  if (exited_drop && mask != bit) {
    if (ex->in_runner) runner_catch_up(ex, t);
    if ((mask & ~exited(ex, w)) == bit) mask = bit;
  }
  if (mask == bit) /* alone: its own value, and a match with itself */
    return warp_result{combine == W_MATCH_ANY || combine == W_MATCH_ALL ? bit : value,
                       pred ? bit : 0u, bit};
  char at[320];
  if (ex->in_runner) runner_catch_up(ex, t);
  if (ex->in_runner && !exited_drop)
    for (unsigned l = 0; l < lanes; l++)
      if ((mask >> l & 1u) && ex->state[(w << 5) + l] == T_DONE) {
        where(at, sizeof at, ex->L->kernel, file, line);
        set_error(ex, t,
                  "waits at %s (%s) for lane %u, which returned (a warp whose first lanes "
                  "finish before the others reach a warp operation)",
                  what, at, l);
        abandon(ex);
      }
  warp_group *G = meeting(&ex->warps[w], what, mask, combine, exited_drop);
  if (!G) {
    where(at, sizeof at, ex->L->kernel, file, line);
    set_error(ex, t, "%s (%s): more than %d different warp operations pending in one warp", what,
              at, (int)groups_per_warp);
    abandon(ex);
  }
  G->in[lane] = value, G->src[lane] = (signed char)(src & 31u);
  G->pred |= pred ? bit : 0u, G->arrived |= bit;
  fiber *f = &ex->fibers[t];
  if (!ex->in_runner && complete_if_met(ex, w, G, G->mask, lane))
    return warp_result{f->wvalue, f->wballot, f->wmembers};
  f->file = file, f->line = line, f->what = what, f->pred = 0, f->wmask = mask;
  wait_here(ex, t, T_WARP);
  return warp_result{f->wvalue, f->wballot, f->wmembers};
}

template <class T> static inline unsigned long long to_bits(T v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value,
                "warp shuffles take values of at most 8 bytes");
  unsigned long long b = 0;
  memcpy(&b, &v, sizeof v);
  return b;
}
template <class T> static inline T from_bits(unsigned long long b) {
  T v;
  memcpy(&v, &b, sizeof v);
  return v;
}
template <class T>
static inline T shfl(const char *file, int line, unsigned mask, T v, int src, int width = 32) {
  return from_bits<T>(
      warp_op(file, line, "__shfl_sync", mask, to_bits(v), S_IDX, (unsigned)src, width, 0).value);
}
template <class T>
static inline T shfl_up(const char *file, int line, unsigned mask, T v, unsigned d,
                        int width = 32) {
  return from_bits<T>(
      warp_op(file, line, "__shfl_up_sync", mask, to_bits(v), S_UP, d, width, 0).value);
}
template <class T>
static inline T shfl_down(const char *file, int line, unsigned mask, T v, unsigned d,
                          int width = 32) {
  return from_bits<T>(
      warp_op(file, line, "__shfl_down_sync", mask, to_bits(v), S_DOWN, d, width, 0).value);
}
template <class T>
static inline T shfl_xor(const char *file, int line, unsigned mask, T v, int m, int width = 32) {
  return from_bits<T>(
      warp_op(file, line, "__shfl_xor_sync", mask, to_bits(v), S_XOR, (unsigned)m, width, 0).value);
}
static inline unsigned vote(const char *file, int line, const char *what, unsigned mask, int p) {
  warp_result r = warp_op(file, line, what, mask, 0, S_SELF, 0, 32, p);
  if (what[2] == 'b') return r.ballot;                        /* __ballot_sync */
  if (what[2] == 'a' && what[3] == 'n') return r.ballot != 0; /* __any_sync */
  if (what[2] == 'a') return r.ballot == r.members;           /* __all_sync */
  return 0;                                                   /* __syncwarp */
}
/* sm_80's warp reductions over 32-bit integers, and __match_any_sync / __match_all_sync. */
#define CJ_REDUCE(fn, name, T, combine)                                                            \
  static inline T fn(const char *file, int line, unsigned mask, T v) {                             \
    return (T)warp_op(file, line, name, mask, (unsigned)v, S_SELF, 0, 32, 0, combine).value;       \
  }
CJ_REDUCE(reduce_add, "__reduce_add_sync", unsigned, W_ADD)
CJ_REDUCE(reduce_add, "__reduce_add_sync", int, W_ADD)
CJ_REDUCE(reduce_min, "__reduce_min_sync", unsigned, W_MIN_U)
CJ_REDUCE(reduce_min, "__reduce_min_sync", int, W_MIN_S)
CJ_REDUCE(reduce_max, "__reduce_max_sync", unsigned, W_MAX_U)
CJ_REDUCE(reduce_max, "__reduce_max_sync", int, W_MAX_S)
CJ_REDUCE(reduce_and, "__reduce_and_sync", unsigned, W_AND)
CJ_REDUCE(reduce_or, "__reduce_or_sync", unsigned, W_OR)
CJ_REDUCE(reduce_xor, "__reduce_xor_sync", unsigned, W_XOR)
#undef CJ_REDUCE
template <class T>
static inline unsigned match_any_sync(const char *file, int line, unsigned mask, T v) {
  return (unsigned)warp_op(file, line, "__match_any_sync", mask, to_bits(v), S_SELF, 0, 32, 0,
                           W_MATCH_ANY)
      .value;
}
template <class T>
static inline unsigned match_all_sync(const char *file, int line, unsigned mask, T v, int *pred) {
  unsigned r = (unsigned)warp_op(file, line, "__match_all_sync", mask, to_bits(v), S_SELF, 0, 32, 0,
                                 W_MATCH_ALL)
                   .value;
  *pred = r != 0;
  return r;
}
/* __syncwarp() and __syncwarp(mask) through one macro: syncwarp(file, line)(mask). */
struct syncwarp {
  const char *file;
  int line;
  void operator()(unsigned mask = 0xffffffffu) const {
    vote(file, line, "__syncwarp", mask, 0);
  }
};
/* The lanes of this warp that have not returned. */
static inline unsigned activemask() {
  exec *ex = me()->ex;
  unsigned t = current(ex), w = t >> 5, m = 0;
  if (ex->in_runner) runner_catch_up(ex, t);
  for (unsigned l = 0; l < 32 && (w << 5) + l < ex->n; l++)
    if (ex->state[(w << 5) + l] != T_DONE) m |= 1u << l;
  return m;
}
/* __activemask(): the lanes of the warp that reach this call together, as on a GPU (where it is
** the lanes converged there): a meeting as coalesced_threads()'s, which the scheduler closes once
** no lane of the warp can go on (coalesce), so lanes that returned, or have yet to return, or took
** another branch are not in it. `site` tells this call from another one. */
static inline unsigned activemask_at(const char *file, int line, const char *site) {
  return warp_op(file, line, site, activemask(), 0, S_SELF, 0, 32, 0, W_COALESCE).members;
}

} // namespace cj_cpu

/* --- the CUDA names ---------------------------------------------------------------------------
 */
#define __shfl_sync(...) ::cj_cpu::shfl(__FILE__, __LINE__, __VA_ARGS__)
#define __shfl_up_sync(...) ::cj_cpu::shfl_up(__FILE__, __LINE__, __VA_ARGS__)
#define __shfl_down_sync(...) ::cj_cpu::shfl_down(__FILE__, __LINE__, __VA_ARGS__)
#define __shfl_xor_sync(...) ::cj_cpu::shfl_xor(__FILE__, __LINE__, __VA_ARGS__)
#define __ballot_sync(m, p)                                                                        \
  ::cj_cpu::vote(__FILE__, __LINE__, "__ballot_sync", (m), ::cj_cpu::predicate(p))
#define __any_sync(m, p)                                                                           \
  ((int)::cj_cpu::vote(__FILE__, __LINE__, "__any_sync", (m), ::cj_cpu::predicate(p)))
#define __all_sync(m, p)                                                                           \
  ((int)::cj_cpu::vote(__FILE__, __LINE__, "__all_sync", (m), ::cj_cpu::predicate(p)))
#define __syncwarp(...) (::cj_cpu::syncwarp{__FILE__, __LINE__}(__VA_ARGS__))
#define CJ_WARP_STR2(x) #x
#define CJ_WARP_STR(x) CJ_WARP_STR2(x)
#define __activemask()                                                                             \
  ::cj_cpu::activemask_at(__FILE__, __LINE__,                                                      \
                          "__activemask() of " __FILE__ ":" CJ_WARP_STR(__LINE__))
#define __reduce_add_sync(m, v) ::cj_cpu::reduce_add(__FILE__, __LINE__, (m), (v))
#define __reduce_min_sync(m, v) ::cj_cpu::reduce_min(__FILE__, __LINE__, (m), (v))
#define __reduce_max_sync(m, v) ::cj_cpu::reduce_max(__FILE__, __LINE__, (m), (v))
#define __reduce_and_sync(m, v) ::cj_cpu::reduce_and(__FILE__, __LINE__, (m), (v))
#define __reduce_or_sync(m, v) ::cj_cpu::reduce_or(__FILE__, __LINE__, (m), (v))
#define __reduce_xor_sync(m, v) ::cj_cpu::reduce_xor(__FILE__, __LINE__, (m), (v))
#define __match_any_sync(m, v) ::cj_cpu::match_any_sync(__FILE__, __LINE__, (m), (v))
#define __match_all_sync(m, v, p) ::cj_cpu::match_all_sync(__FILE__, __LINE__, (m), (v), (p))
