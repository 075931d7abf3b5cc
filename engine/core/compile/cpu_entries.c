/*
** cpu_entries.c -- the CPU device's translation unit, its fixed parts (cpu_source.c writes the
** rest): the CUDA names declared again in namespace __cj, and after the user's code the exported
** entries, one per kernel with its parameters' layout, and the ABI's functions.
*/
#include "cpu_entries.h"
#include "lang/lexicon.h"

#include <string.h>

/* CUDA's functions the program may overload (helper_math.h's float2 fminf(float2, float2) calls
** fminf(float, float)): in namespace __cj an overload of the program's would hide them, so they
** are declared there too, again after each header the program includes at file scope (which may
** add overloads of them). Only CUDA's names: those of the C library the prelude's headers add
** are what the namespace keeps away. */
const char cj_cpu_cuda_api[] =
    "using ::sin; using ::cos; using ::tan; using ::asin; using ::acos; using ::atan; "
    "using ::atan2; using ::sinh; using ::cosh; using ::tanh; using ::asinh; using ::acosh; "
    "using ::atanh; using ::exp; using ::exp2; using ::exp10; using ::expm1; using ::log; "
    "using ::log2; using ::log10; using ::log1p; using ::pow; using ::sqrt; using ::cbrt; "
    "using ::hypot; using ::fabs; using ::floor; using ::ceil; using ::round; using ::trunc; "
    "using ::rint; using ::nearbyint; using ::lround; using ::llround; using ::lrint; "
    "using ::llrint; using ::fmod; using ::remainder; using ::remquo; using ::fmin; "
    "using ::fmax; using ::fdim; using ::fma; using ::frexp; using ::ldexp; using ::modf; "
    "using ::ilogb; using ::logb; using ::scalbn; using ::scalbln; using ::nextafter; "
    "using ::copysign; using ::erf; using ::erfc; using ::tgamma; using ::lgamma; "
    "using ::isnan; using ::isinf; using ::isfinite; using ::signbit; using ::abs; "
    "using ::labs; using ::llabs; using ::j0; using ::j1; using ::jn; using ::y0; using ::y1; "
    "using ::yn; using ::sinf; using ::cosf; using ::tanf; using ::asinf; using ::acosf; "
    "using ::atanf; using ::atan2f; using ::sinhf; using ::coshf; using ::tanhf; "
    "using ::asinhf; using ::acoshf; using ::atanhf; using ::expf; using ::exp2f; "
    "using ::exp10f; using ::expm1f; using ::logf; using ::log2f; using ::log10f; "
    "using ::log1pf; using ::powf; using ::sqrtf; using ::cbrtf; using ::hypotf; "
    "using ::fabsf; using ::floorf; using ::ceilf; using ::roundf; using ::truncf; "
    "using ::rintf; using ::nearbyintf; using ::lroundf; using ::llroundf; using ::lrintf; "
    "using ::llrintf; using ::fmodf; using ::remainderf; using ::remquof; using ::fminf; "
    "using ::fmaxf; using ::fdimf; using ::fmaf; using ::frexpf; using ::ldexpf; "
    "using ::modff; using ::ilogbf; using ::logbf; using ::scalbnf; using ::scalblnf; "
    "using ::nextafterf; using ::copysignf; using ::erff; using ::erfcf; using ::tgammaf; "
    "using ::lgammaf; using ::j0f; using ::j1f; using ::jnf; using ::y0f; using ::y1f; "
    "using ::ynf; using ::rsqrt; using ::rsqrtf; using ::rcbrt; using ::rcbrtf; using ::sinpi; "
    "using ::cospi; using ::sinpif; using ::cospif; using ::sincos; using ::sincosf; "
    "using ::sincospi; using ::sincospif; using ::normcdf; using ::normcdff; using ::fdividef; "
    "using ::min; using ::max; using ::umin; using ::umax; using ::llmin; using ::llmax; "
    "using ::ullmin; using ::ullmax; using ::atomicAdd; using ::atomicSub; using ::atomicExch; "
    "using ::atomicMin; using ::atomicMax; using ::atomicInc; using ::atomicDec; "
    "using ::atomicCAS; using ::atomicAnd; using ::atomicOr; using ::atomicXor; "
    "using ::atomicAdd_block; using ::atomicAdd_system; using ::atomicExch_block; "
    "using ::atomicCAS_block; using ::atomicMin_block; using ::atomicMax_block; "
    "using ::__popc; using ::__popcll; using ::__clz; using ::__clzll; using ::__ffs; "
    "using ::__ffsll; using ::__brev; using ::__brevll; using ::__byte_perm; "
    "using ::__funnelshift_l; using ::__funnelshift_r; using ::__mulhi; using ::__umulhi; "
    "using ::__mul64hi; using ::__umul64hi; using ::__mul24; using ::__umul24; using ::__hadd; "
    "using ::__rhadd; using ::__uhadd; using ::__urhadd; using ::__sad; using ::__usad; "
    "using ::__ldg; using ::__ldcg; using ::__ldca; using ::__ldcs; using ::__ldlu; "
    "using ::__ldcv; using ::__stwb; using ::__stcg; using ::__stcs; using ::__stwt; "
    "using ::__threadfence; using ::__threadfence_block; using ::__threadfence_system; "
    "using ::clock; using ::clock64; using ::__nanosleep; using ::printf; using ::malloc; "
    "using ::free; using ::memcpy; using ::memset; ";

/* Whether kernel k is an extern "C" one: its name an identifier, its linkage not C++'s. */
int cj_cpu_c_kernel(const char *name, const int *cxx, size_t k) {
  char entry[320];
  return !(cxx && cxx[k]) && cj_entry_identifier(name, entry, sizeof entry) &&
         strcmp(entry, name) == 0;
}

void cj_cpu_write_entries(cj_buf *out, const char *const *kernel_names, const int *cxx,
                          const unsigned char *defined, char *const *cluster, size_t nkernels) {
  char entry[320];
  /* The entries live in the namespace too and name the kernel unqualified: it and a name
  ** expression's arguments ("scale<my_type>") are looked up there first, then at file scope (a
  ** kernel of an included header). Their parameters have reserved names, which no kernel has. */
  cj_buf_puts(out, "namespace __cj {\n#line 1 \"<cujit cpu entries>\"\n");
  /* The weak redeclaration below takes the kernel's type without its default arguments: g++ keeps
  ** them in decltype's type, and a redeclaration that gives them again is an error. Its names are
  ** reserved ones, which no program's macro takes (conv2d.lua defines R). */
  cj_buf_puts(out,
              "template <class __cj_F> struct __cj_plain;\n"
              "template <class __cj_R, class... __cj_A> struct __cj_plain<__cj_R(__cj_A...)> {\n"
              "  typedef __cj_R type(__cj_A...);\n};\n"
              "template <class __cj_R, class... __cj_A> struct __cj_plain<__cj_R(__cj_A...) "
              "noexcept> {\n"
              "  typedef __cj_R type(__cj_A...) noexcept;\n};\n");
  for (size_t k = 0; k < nkernels; k++) {
    cj_entry_identifier(kernel_names[k], entry, sizeof entry);
    /* An extern "C" kernel the preprocessor removed (#if 0) is then only referenced, and the
    ** reference weak, so the object still links; cj_verify_object drops it, seeing it undefined.
    ** A C++-linkage kernel keeps a strong reference: a static one cannot be weak (g++: "weak
    ** declaration must be public"), and a qualified name or a template's instantiation is found
    ** by g++'s name lookup: removed, it is a compile (or link) error, as NVRTC's name expression
    ** is for a GPU. */
    int c = cj_cpu_c_kernel(kernel_names[k], cxx, k) && defined[k];
    if (c) /* a redeclaration of its own type: #pragma weak finds no name in a namespace */
      cj_buf_printf(out,
                    "extern \"C\" __attribute__((weak)) __cj_plain<decltype(__cj_k_%s)>::type "
                    "__cj_k_%s;\n",
                    kernel_names[k], kernel_names[k]);
    cj_buf_printf(
        out,
        "extern \"C\" __attribute__((visibility(\"default\"))) void cjk_%s(::cj_cpu_launch "
        "*__cj_l, ::cj_cpu_worker *__cj_w) {\n  ::cj_cpu::entry<&%s%s >(__cj_l, "
        "__cj_w);\n}\n",
        entry, c ? "__cj_k_" : "", kernel_names[k]);
    /* Its parameters' sizes, read back from the object (verify.c): a struct by value's too. */
    cj_buf_printf(out,
                  "extern \"C\" __attribute__((visibility(\"default\"))) const "
                  "::cj_cpu::layout<decltype(&%s%s)> cjp_%s = {};\n",
                  c ? "__cj_k_" : "", kernel_names[k], entry);
    if (cluster && cluster[k]) /* its __cluster_dims__, evaluated where the kernel was */
      cj_buf_printf(out,
                    "extern \"C\" __attribute__((visibility(\"default\"))) const unsigned "
                    "cjc_%s[3] = {%s};\n",
                    entry, cluster[k]);
  }
  cj_buf_puts(out, "}\n");
  cj_buf_puts(out,
              "extern \"C\" __attribute__((visibility(\"default\"))) int cj_cpu_abi_version(void) "
              "{\n  return CJ_CPU_ABI_VERSION;\n}\n"
              "extern \"C\" __attribute__((visibility(\"default\"))) void "
              "cj_cpu_worker_release(cj_cpu_worker *w) {\n  ::cj_cpu::worker_release(w);\n}\n"
              "extern \"C\" __attribute__((visibility(\"default\"))) int cj_cpu_where(const "
              "cj_cpu_worker *w, char *buf, size_t len) {\n  return ::cj_cpu::where_now(w ? "
              "(const ::cj_cpu::regs *)w->regs : nullptr, buf, len);\n}\n");
}
