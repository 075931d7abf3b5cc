/*
** cmd_tools.c -- the subcommands that need no Lua: `cujit --version`, `cujit devices`,
** `cujit compile`, `cujit cache dir|stats|clear` and `cujit help`.
*/
#define _GNU_SOURCE /* dladdr and RTLD_NOLOAD, to name the NVRTC library that was opened */

#include "cli.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lua.h>

typedef int (*tool_fn)(cujit_engine *engine, int argc, char **argv);

static void tool_error(const char *tool, const char *msg) {
  fprintf(stderr, CLI_NAME " %s: %s\n", tool, msg);
}

/* Opens an engine for a tool; it never fails for want of a GPU, only for want of memory. */
static cujit_engine *open_engine(const char *tool) {
  cujit_engine *engine = NULL;
  cujit_status st = cujit_open(&engine);
  if (st != CUJIT_OK) tool_error(tool, cujit_status_string(st));
  return engine;
}

/* --- cujit help ------------------------------------------------------------------------------- */

void cli_print_usage(FILE *out) {
  fputs("usage: cujit [options] [script [args]]   run Lua 5.4 with cujit, as stock lua does\n"
        "       cujit                             the REPL (stdin a terminal; else stdin is run)\n"
        "       cujit --version                   versions of cujit, Lua, NVRTC and the driver\n"
        "       cujit devices                     list the GPUs\n"
        "       cujit compile FILE.cu [options]   compile a translation unit to PTX or CUBIN\n"
        "       cujit cache dir|stats|clear       the on-disk kernel cache\n"
        "       cujit help                        this text\n"
        "Lua options:\n"
        "  -e stat   execute string 'stat'\n"
        "  -i        enter the REPL after the script (also reads piped lines)\n"
        "  -l mod    require library 'mod' into global 'mod'\n"
        "  -l g=mod  require library 'mod' into global 'g'\n"
        "  -v        show version information\n"
        "  -E        ignore environment variables LUA_INIT, LUA_PATH, LUA_CPATH\n"
        "  -W        turn warnings on\n"
        "  --        stop handling options\n"
        "  -         run stdin and stop handling options\n"
        "compile options:\n"
        "  -o OUT            output file, '-' for stdout (default: FILE.ptx or FILE.cubin)\n"
        "  --ptx, --cubin    what to write (default: from -o's extension .ptx/.cubin, else PTX)\n"
        "  -v                each kernel's registers, spills, local and shared memory, threads\n"
        "  --sass            print the machine code (cuobjdump -sass) instead of writing a file\n"
        "  --time            NVRTC's time in each phase (front end, optimizer, code generation)\n",
        out);
  /* The compile options, from cujit's table: every one that has a flag. */
  const cujit_compile_option_info *info;
  for (size_t i = 0; (info = cujit_compile_option(i)) != NULL; i++) {
    if (!info->cli_flag) continue;
    char flag[64];
    snprintf(flag, sizeof flag, "%s%s%s", info->cli_flag, info->value ? " " : "",
             info->value ? info->value : "");
    fprintf(out, "  %-17s %s\n", flag, info->doc);
  }
  fputs("A first argument that ends in .lua or contains '/' is a script, never a subcommand.\n"
        "In the REPL, :help lists what it adds to Lua.\n",
        out);
}

/* 1 if `arg` asks for the usage: `cujit compile --help`, `cujit cache -h`. */
static int asks_help(const char *arg) {
  return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

/* For the subcommands that take no arguments (devices, --version): -1 when there are none, else
** the exit status after the usage (`--help` or `-h` alone: 0) or a refusal (1). */
static int no_arguments(const char *tool, int argc, char **argv) {
  if (argc <= 2) return -1;
  if (argc == 3 && asks_help(argv[2])) {
    cli_print_usage(stdout);
    return 0;
  }
  fprintf(stderr, CLI_NAME " %s: takes no arguments\n", tool);
  return 1;
}

/* `cujit help [SUBCOMMAND]`: the usage, which covers every subcommand. */
static int tool_help(cujit_engine *engine, int argc, char **argv) {
  (void)engine;
  if (argc > 3) {
    tool_error("help", "takes one argument at most, a subcommand's name (devices, compile, "
                       "cache, help, --version)");
    return 1;
  }
  if (argc == 3 && !cli_is_tool(argv[2])) {
    fprintf(stderr,
            CLI_NAME " help: '%s' is not a subcommand (devices, compile, cache, help, "
                     "--version); 'cujit help' alone shows the usage\n",
            argv[2]);
    return 1;
  }
  cli_print_usage(stdout);
  return 0;
}

/* --- cujit --version -------------------------------------------------------------------------- */

/* CUDA writes versions as major*1000 + minor*10. */
static void print_cuda_version(const char *what, const char *prefix, int version,
                               const char *detail) {
  printf("%-8s %s%d.%d%s%s\n", what, prefix, version / 1000, version % 1000 / 10,
         detail[0] ? "  " : "", detail);
}

/* The file NVRTC was loaded from. The public API has no call for it, so ask the dynamic loader
** which of the names the engine tries is resident (RTLD_NOLOAD never loads anything). */
static void nvrtc_library(char *buf, size_t len) {
  static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12"};
  const char *env = getenv("CUJIT_NVRTC");
  buf[0] = '\0';
  for (size_t i = 0; i < 3 && !buf[0]; i++) {
    const char *name = i == 0 ? env : names[i - 1];
    if (!name || !*name) continue;
    void *h = dlopen(name, RTLD_NOW | RTLD_NOLOAD);
    if (!h) continue;
    Dl_info info;
    void *sym = dlsym(h, "nvrtcVersion");
    if (sym && dladdr(sym, &info) && info.dli_fname)
      snprintf(buf, len, "(%s)", info.dli_fname);
    else
      snprintf(buf, len, "(%s)", name);
    dlclose(h);
  }
}

static int tool_version(cujit_engine *engine, int argc, char **argv) {
  int done = no_arguments("--version", argc, argv);
  if (done >= 0) return done;
  int v = 0;
  char lib[512];
  printf("%-8s %s\n", "cujit", cujit_version());
  printf("%-8s %s.%s.%s\n", "Lua", LUA_VERSION_MAJOR, LUA_VERSION_MINOR, LUA_VERSION_RELEASE);
  if (cujit_nvrtc_version(engine, &v) == CUJIT_OK) {
    nvrtc_library(lib, sizeof lib);
    print_cuda_version("NVRTC", "", v, lib);
  } else {
    printf("%-8s missing: %s\n", "NVRTC", cujit_errmsg(engine));
  }
  cujit_status st = cujit_driver_version(engine, &v);
  if (st == CUJIT_OK && v > 0)
    print_cuda_version("driver", "CUDA ", v, "");
  else if (st == CUJIT_OK) /* cuDriverGetVersion answered nothing: no "CUDA 0.0" */
    printf("%-8s loaded, but it reports no CUDA version (cuDriverGetVersion)\n", "driver");
  else
    printf("%-8s missing: %s\n", "driver", cujit_errmsg(engine));
  return 0;
}

/* --- cujit devices ---------------------------------------------------------------------------- */

static int tool_devices(cujit_engine *engine, int argc, char **argv) {
  int done = no_arguments("devices", argc, argv);
  if (done >= 0) return done;
  int count = 0;
  cujit_status st = cujit_device_count(engine, &count);
  if (st != CUJIT_OK || count == 0) {
    /* One line, so that scripts can show it whole with `head -1`. A user who already chose the
    ** CPU device is told it is in use, not to choose it. */
    const char *chosen = getenv("CUJIT_DEVICE");
    int on_cpu = chosen && strcmp(chosen, "cpu") == 0;
    fprintf(stderr, CLI_NAME " devices: %s (%s; 'cujit compile --arch sm_90' needs no GPU)\n",
            st == CUJIT_OK ? "the CUDA driver sees no GPU" : cujit_errmsg(engine),
            on_cpu ? "kernels run on the CPU device, as CUJIT_DEVICE=cpu asks"
                   : "without a GPU, kernels run on the CPU device: CUJIT_DEVICE=cpu, or "
                     "cuda.device(\"cpu\") in Lua");
    return 1;
  }
  for (int i = 0; i < count; i++) {
    cujit_device *dev;
    cujit_device_info info = CUJIT_DEVICE_INFO_INIT;
    char arch[32];
    if (cujit_device_get(engine, i, &dev) != CUJIT_OK ||
        cujit_device_info_get(dev, &info) != CUJIT_OK ||
        cujit_device_arch(dev, arch, sizeof arch) != CUJIT_OK) {
      fprintf(stderr, CLI_NAME " devices: device %d: %s\n", i, cujit_errmsg(engine));
      return 1;
    }
    printf("%d  %s  %s  %.1f GiB  %d SMs\n", i, info.name, arch,
           (double)info.total_memory / (1024.0 * 1024.0 * 1024.0), info.multiprocessors);
  }
  return 0;
}

/* --- cujit compile ---------------------------------------------------------------------------- */

typedef struct compile_args {
  const char *input, *output;
  const char *kind_flag; /* "--ptx", "--cubin" or NULL: what the command line asked for */
  int cubin;
  int verbose, sass; /* -v: the kernels' resources; --sass: the machine code, not a file */
  int time;          /* --time: NVRTC's phase times (its --time=-, in the log) */
  int help;          /* --help or -h: the usage was printed, nothing else is done */
  cujit_compile_options opts;
  const char **values; /* the list options' values: `slots` for each option, by its index */
  size_t slots;
} compile_args;

/* The value of an option given as "-D X", "-DX", "--arch sm_90" or "--arch=sm_90"; advances *i
** past it. NULL (after a message) when it is missing. A separate value that looks like an option
** is one (`-o --cubin` forgot the file name, which would otherwise be "--cubin"), except for -X,
** whose values are NVRTC's options, and "-o -" (stdout); such a value can be joined instead. */
static const char *option_value(int argc, char **argv, int *i, const char *opt) {
  const char *a = argv[*i];
  size_t n = strlen(opt);
  if (a[n] == '=' && n > 2) return a + n + 1;
  if (a[n] != '\0' && n == 2) return a + n;
  const char *next = *i + 1 < argc ? argv[*i + 1] : NULL;
  if (next && (next[0] != '-' || strcmp(opt, "-X") == 0 ||
               (strcmp(opt, "-o") == 0 && strcmp(next, "-") == 0)))
    return argv[++*i];
  if (next)
    fprintf(stderr,
            CLI_NAME " compile: option '%s' needs a value, and '%s' after it is an option (a "
                     "value that starts with '-' is joined to it: %s%s%s)\n",
            opt, next, opt, n > 2 ? "=" : "", next);
  else
    fprintf(stderr, CLI_NAME " compile: option '%s' needs a value\n", opt);
  return NULL;
}

/* 1 if argv[i] is option `opt`, alone, joined ("-DX", short options) or with '=' (long ones). */
static int is_option(const char *a, const char *opt) {
  size_t n = strlen(opt);
  if (strncmp(a, opt, n) != 0) return 0;
  return a[n] == '\0' || (n == 2 && opt[1] != '-') || (n > 2 && a[n] == '=');
}

/* 1 if `path` ends in `ext` (".ptx", ".cubin"). */
static int has_extension(const char *path, const char *ext) {
  size_t n = strlen(path), e = strlen(ext);
  return n > e && strcmp(path + n - e, ext) == 0;
}

/* PTX or CUBIN: --ptx/--cubin, else the extension of -o (".cubin" is a CUBIN, ".ptx" PTX), else
** PTX. A flag that contradicts the extension is refused: either answer could be the mistake. */
static int choose_output_kind(compile_args *ca) {
  const char *out = ca->output ? ca->output : "";
  int ext = has_extension(out, ".cubin") ? 1 : has_extension(out, ".ptx") ? 0 : -1;
  int flag = !ca->kind_flag ? -1 : strcmp(ca->kind_flag, "--cubin") == 0;
  if (flag >= 0 && ext >= 0 && flag != ext) {
    fprintf(stderr,
            CLI_NAME " compile: %s contradicts -o %s, whose extension asks for %s; drop %s, or "
                     "name the output %s\n",
            ca->kind_flag, out, ext ? "a CUBIN" : "PTX", ca->kind_flag, ext ? "*.ptx" : "*.cubin");
    return 0;
  }
  ca->cubin = flag >= 0 ? flag : ext >= 0 ? ext : 0;
  return 1;
}

/* The compile option (cujit's table) whose flag argv[i] is, with the index of its row; NULL when
** none is. A switch is its flag alone; the others take a value as is_option says. */
static const cujit_compile_option_info *find_flag(const char *a, size_t *row) {
  const cujit_compile_option_info *info;
  for (size_t i = 0; (info = cujit_compile_option(i)) != NULL; i++) {
    if (!info->cli_flag) continue;
    if (info->kind == CUJIT_OPTION_SWITCH ? strcmp(a, info->cli_flag) == 0
                                          : is_option(a, info->cli_flag)) {
      *row = i;
      return info;
    }
  }
  return NULL;
}

/* Stores compile option `info` (row `row`) from argv[*i] (and its value) in ca->opts. */
static int take_option(int argc, char **argv, int *i, const cujit_compile_option_info *info,
                       size_t row, compile_args *ca) {
  char *at = (char *)&ca->opts + info->offset;
  if (info->kind == CUJIT_OPTION_SWITCH) {
    *(int *)(void *)at = 1;
    return 1;
  }
  const char *v = option_value(argc, argv, i, info->cli_flag);
  if (!v) return 0;
  if (info->kind == CUJIT_OPTION_TEXT) {
    *(const char **)(void *)at = v;
    return 1;
  }
  const char **list = ca->values + row * ca->slots;
  size_t *count = (size_t *)(void *)((char *)&ca->opts + info->count_offset);
  list[(*count)++] = v;
  *(const char *const **)(void *)at = list;
  return 1;
}

static int parse_compile_args(int argc, char **argv, compile_args *ca) {
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i], *v = NULL;
    const cujit_compile_option_info *info;
    size_t row;
    if (strcmp(a, "--ptx") == 0 || strcmp(a, "--cubin") == 0)
      ca->kind_flag = a;
    else if (strcmp(a, "-v") == 0 || strcmp(a, "--sass") == 0)
      *(a[1] == 'v' ? &ca->verbose : &ca->sass) = 1;
    else if (strcmp(a, "--time") == 0)
      ca->time = 1;
    else if (asks_help(a)) {
      cli_print_usage(stdout);
      ca->help = 1;
      return 0;
    } else if ((info = find_flag(a, &row)) != NULL) {
      if (!take_option(argc, argv, &i, info, row, ca)) return 0;
    } else if (is_option(a, "-o")) {
      if (!(v = option_value(argc, argv, &i, "-o"))) return 0;
      ca->output = v;
    } else if (a[0] == '-' && a[1] != '\0') {
      fprintf(stderr, CLI_NAME " compile: unknown option '%s' (see 'cujit help')\n", a);
      return 0;
    } else if (ca->input) {
      fprintf(stderr, CLI_NAME " compile: one input file at a time ('%s' and '%s')\n", ca->input,
              a);
      return 0;
    } else {
      ca->input = a;
    }
  }
  if (!ca->input || !*ca->input) {
    fprintf(stderr,
            CLI_NAME " compile: %s; usage: cujit compile FILE.cu [--arch sm_XX] [-o OUT] "
                     "[--ptx|--cubin]\n",
            ca->input ? "the input file's name is empty ('')" : "no input file");
    return 0;
  }
  if (ca->output && !*ca->output) {
    fprintf(stderr, CLI_NAME " compile: -o was given an empty file name; name the output file, "
                             "or write -o - for stdout\n");
    return 0;
  }
  if (ca->sass && (ca->output || ca->kind_flag)) {
    fprintf(stderr,
            CLI_NAME " compile: --sass prints the machine code on stdout and writes no file: "
                     "drop %s, or redirect stdout\n",
            ca->output ? "-o" : ca->kind_flag);
    return 0;
  }
  return choose_output_kind(ca);
}

/* Without --arch the current GPU decides; with no GPU, say plainly that --arch is needed. */
static int default_arch(cujit_engine *engine, char *arch, size_t len) {
  cujit_device *dev;
  if (cujit_current_device(engine, &dev) == CUJIT_OK &&
      cujit_device_arch(dev, arch, len) == CUJIT_OK)
    return 1;
  const char *why = cujit_errmsg(engine); /* its first line: the hints after it are for running */
  fprintf(stderr,
          CLI_NAME " compile: no GPU to take the target from (%.*s)\n"
                   "  pass the target explicitly with --arch, for example --arch sm_90\n",
          (int)strcspn(why, "\n"), why);
  return 0;
}

/* "dir/k.cu" -> "dir/k.ptx"; a name without ".cu" gets the extension added. */
static char *output_name(const char *input, const char *ext) {
  size_t n = strlen(input);
  if (n > 3 && strcmp(input + n - 3, ".cu") == 0) n -= 3;
  char *out = malloc(n + strlen(ext) + 1);
  if (!out) return NULL;
  memcpy(out, input, n);
  strcpy(out + n, ext);
  return out;
}

/* 1 if writing `output` would overwrite `input` (by name or, through links, by file). */
static int same_file(const char *input, const char *output) {
  struct stat a, b;
  if (strcmp(input, output) == 0) return 1;
  return stat(input, &a) == 0 && stat(output, &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

/* The output is written by cujit_file_write's rule: a regular file through a temporary file and a
** rename, /dev/null, a FIFO or a terminal in place (never replaced), "-" to stdout. */
static int write_output(cujit_engine *engine, const char *path, const void *data, size_t len) {
  if (cujit_file_write(engine, path, data, len) == CUJIT_OK) return 1;
  fprintf(stderr, CLI_NAME " compile: %s\n", cujit_errmsg(engine));
  return 0;
}

/* "cujit: k.cu: 2 kernels (saxpy, vadd) for sm_90, compiled in 12.3 ms -> k.ptx" on stderr. */
static void print_summary(const cujit_program *prog, const char *input, const char *arch,
                          const char *output) {
  size_t n = cujit_program_kernel_count(prog);
  fprintf(stderr, CLI_NAME ": %s: %zu kernel%s (", input, n, n == 1 ? "" : "s");
  for (size_t i = 0; i < n; i++)
    fprintf(stderr, "%s%s", i ? ", " : "", cujit_program_kernel_name(prog, i));
  fprintf(stderr, ") for %s, %s in %.1f ms -> %s\n", arch,
          cujit_program_from_cache(prog) ? "from the cache" : "compiled",
          cujit_program_milliseconds(prog), strcmp(output, "-") == 0 ? "stdout" : output);
}

/* The engine's message, with the options it names as C fields (extra_flags, std, arch) named as
** they are given on this command line. */
static void print_compile_error(const char *msg) {
  static const char c_words[] = "check extra_flags, std and arch";
  const char *at = strstr(msg, c_words);
  if (at)
    fprintf(stderr, CLI_NAME " compile: %.*scheck -X, --std and --arch%s\n", (int)(at - msg), msg,
            at + strlen(c_words));
  else
    fprintf(stderr, CLI_NAME " compile: %s\n", msg);
}

/* The CPU device's code is a host shared object built when a program asks for it, never a PTX
** or CUBIN file: refused, whether asked for (--arch cpu) or taken from the current device. */
static int refuse_cpu_arch(const compile_args *ca, int asked) {
  if (strcmp(ca->opts.arch, "cpu") != 0) return 0;
  fprintf(stderr,
          CLI_NAME " compile: %s, which has no PTX or CUBIN: its kernels are compiled by the "
                   "C++ compiler when a script or program uses them (CUJIT_DEVICE=cpu). This "
                   "command writes GPU code only: pass a GPU target, for example --arch sm_90\n",
          asked ? "--arch cpu names the CPU device"
                : "the current device is the CPU device (CUJIT_DEVICE=cpu)");
  return 1;
}

static int compile_and_write(cujit_engine *engine, compile_args *ca) {
  char arch[32];
  int asked = ca->opts.arch != NULL;
  if (!ca->opts.arch) {
    if (!default_arch(engine, arch, sizeof arch)) return 1;
    ca->opts.arch = arch;
  }
  if (refuse_cpu_arch(ca, asked)) return 1;
  cujit_program *prog = NULL;
  /* -v: ptxas's report, --time: NVRTC's times join the extra flags, so the key has them. The
  ** times go to a file of a new private directory (NVRTC 13 writes none into the log beside
  ** ptxas's report): its name makes the key new, so NVRTC always runs, as timing it needs. With
  ** both, the report comes from a compile of its own: the H200 machine's NVRTC 13.0 wrote no
  ** ptxas report into the log of a compile given --time as well. */
  const char *const *given = ca->opts.extra_flags;
  size_t given_count = ca->opts.extra_flag_count;
  const char **flags = NULL;
  char tdir[PATH_MAX], tfile[PATH_MAX + 16] = "", tflag[PATH_MAX + 32];
  if (ca->time) {
    const char *tmp = getenv("TMPDIR");
    snprintf(tdir, sizeof tdir, "%s/cujit-time-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(tdir))
      return tool_error("compile", "--time: cannot make a directory in TMPDIR"), 1;
    snprintf(tfile, sizeof tfile, "%s/times.csv", tdir);
    snprintf(tflag, sizeof tflag, "--time=%s", tfile);
  }
  if (ca->verbose || ca->time) {
    size_t n = ca->opts.extra_flag_count;
    if (!(flags = calloc(n + 2, sizeof *flags))) return tool_error("compile", "out of memory"), 1;
    for (size_t i = 0; i < n; i++) flags[i] = ca->opts.extra_flags[i];
    if (ca->verbose && !ca->time) flags[n++] = "--ptxas-options=-v";
    if (ca->time) flags[n++] = tflag;
    ca->opts.extra_flags = flags, ca->opts.extra_flag_count = n;
  }
  cujit_status st = cujit_program_compile_file(engine, ca->input, &ca->opts, &prog);
  if (ca->time && st == CUJIT_OK) cli_print_times(prog, tfile);
  if (ca->time) remove(tfile), rmdir(tdir);
  cujit_program *report = prog; /* the program ptxas's report is read from */
  if (st == CUJIT_OK && ca->verbose && ca->time) {
    for (size_t i = 0; i < given_count; i++) flags[i] = given[i];
    flags[given_count] = "--ptxas-options=-v";
    ca->opts.extra_flag_count = given_count + 1;
    st = cujit_program_compile_file(engine, ca->input, &ca->opts, &report);
    if (st != CUJIT_OK) cujit_program_free(prog);
  }
  free(flags);
  if (st != CUJIT_OK) {
    print_compile_error(cujit_errmsg(engine));
    return 1;
  }
  const char *log = cujit_program_log(prog);
  if (log && *log) fprintf(stderr, "%s%s", log, log[strlen(log) - 1] == '\n' ? "" : "\n");
  if (ca->sass || ca->verbose) {
    int done = (!ca->verbose || cli_print_resources(engine, report, ca->opts.arch)) &&
               (!ca->sass || cli_print_sass(engine, prog, ca->opts.arch));
    if (report != prog) cujit_program_free(report);
    if (ca->sass || !done) {
      cujit_program_free(prog);
      return !done;
    }
  } else if (report != prog)
    cujit_program_free(report);
  size_t len = 0;
  const void *data =
      ca->cubin ? cujit_program_cubin(prog, &len) : (const void *)cujit_program_ptx(prog, &len);
  int status = 1;
  char *defname = NULL;
  const char *out = ca->output;
  if (!data) {
    fprintf(stderr,
            CLI_NAME " compile: %s gives no CUBIN (a compute_XX target is PTX only); pass an "
                     "sm_XX target, or write PTX (--ptx, -o FILE.ptx)\n",
            ca->opts.arch);
  } else if (!out && !(out = defname = output_name(ca->input, ca->cubin ? ".cubin" : ".ptx"))) {
    tool_error("compile", "out of memory");
  } else if (strcmp(out, "-") != 0 && same_file(ca->input, out)) {
    fprintf(stderr,
            CLI_NAME " compile: the output %s is the input file; it would be overwritten. Pass "
                     "another -o, or leave -o out to write %s\n",
            out, ca->cubin ? "FILE.cubin" : "FILE.ptx");
  } else if (write_output(engine, out, data, len)) {
    print_summary(prog, ca->input, ca->opts.arch, out);
    status = 0;
  }
  free(defname);
  cujit_program_free(prog);
  return status;
}

static int tool_compile(cujit_engine *engine, int argc, char **argv) {
  compile_args ca = {.opts = CUJIT_COMPILE_OPTIONS_INIT, .slots = (size_t)argc};
  /* One program per process: a precompiled header made here would never be used again, and
  ** making one costs more than the compile (README, CUJIT_PCH); unless the user says otherwise. */
  setenv("CUJIT_PCH", "off", 0);
  size_t rows = 0;
  while (cujit_compile_option(rows)) rows++;
  ca.values = calloc(rows * ca.slots, sizeof *ca.values); /* each list may take every argument */
  int status = 1;
  if (!ca.values)
    tool_error("compile", "out of memory");
  else if (parse_compile_args(argc, argv, &ca))
    status = compile_and_write(engine, &ca);
  else if (ca.help)
    status = 0;
  free(ca.values);
  return status;
}

/* --- cujit cache ------------------------------------------------------------------------------ */

static void format_bytes(char *buf, size_t len, uint64_t bytes) {
  static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)bytes;
  size_t u = 0;
  while (v >= 1024.0 && u + 1 < sizeof units / sizeof *units) v /= 1024.0, u++;
  if (u == 0)
    snprintf(buf, len, "%llu bytes", (unsigned long long)bytes);
  else
    snprintf(buf, len, "%.1f %s", v, units[u]);
}

/* 1 when CUJIT_CACHE's value is one that turns the disk cache off, as the library reads it; any
** other value leaves it on, so a cache that is off for another reason must not blame it. */
static int cache_turned_off(const char *env) {
  static const char *const off[] = {"0", "off", "no", "false", "disabled"};
  for (size_t i = 0; env && i < sizeof off / sizeof *off; i++)
    if (strcasecmp(env, off[i]) == 0) return 1;
  return 0;
}

static int cache_off(void) {
  const char *env = getenv("CUJIT_CACHE");
  if (cache_turned_off(env))
    fprintf(stderr,
            CLI_NAME " cache: the disk cache is off (CUJIT_CACHE=%s); unset CUJIT_CACHE to "
                     "use it\n",
            env);
  else
    fprintf(stderr, CLI_NAME " cache: the disk cache is off (the warning above says why); set "
                             "CUJIT_CACHE_DIR to a directory of your own\n");
  return 1;
}

static int cache_stats(cujit_engine *engine) {
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  char size[64], max[64];
  if (cujit_cache_stats_get(engine, &s) != CUJIT_OK) {
    tool_error("cache", cujit_errmsg(engine));
    return 1;
  }
  if (!s.disk_enabled) return cache_off();
  format_bytes(size, sizeof size, s.bytes);
  format_bytes(max, sizeof max, s.max_bytes);
  printf("directory  %s\n", cujit_cache_dir(engine));
  printf("entries    %llu\n", (unsigned long long)s.entries);
  printf("size       %s (limit %s, CUJIT_CACHE_MAX)\n", size, max);
  return 0;
}

static int cache_clear(cujit_engine *engine) {
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  char size[64];
  if (cujit_cache_stats_get(engine, &s) != CUJIT_OK || cujit_cache_clear(engine) != CUJIT_OK) {
    tool_error("cache", cujit_errmsg(engine));
    return 1;
  }
  if (!s.disk_enabled) return cache_off();
  format_bytes(size, sizeof size, s.bytes);
  printf("removed %llu entr%s (%s) from %s\n", (unsigned long long)s.entries,
         s.entries == 1 ? "y" : "ies", size, cujit_cache_dir(engine));
  return 0;
}

static int tool_cache(cujit_engine *engine, int argc, char **argv) {
  const char *what = argc == 3 ? argv[2] : "";
  if (asks_help(what)) {
    cli_print_usage(stdout);
    return 0;
  }
  if (strcmp(what, "dir") == 0) {
    const char *dir = cujit_cache_dir(engine);
    if (!dir || !*dir) return cache_off();
    printf("%s\n", dir);
    return 0;
  }
  if (strcmp(what, "stats") == 0) return cache_stats(engine);
  if (strcmp(what, "clear") == 0) return cache_clear(engine);
  tool_error("cache", "usage: cujit cache dir|stats|clear");
  return 1;
}

/* --- dispatch --------------------------------------------------------------------------------- */

static const struct {
  const char *name;
  tool_fn fn;
} tools[] = {
    {"--version", tool_version}, {"devices", tool_devices}, {"compile", tool_compile},
    {"cache", tool_cache},       {"help", tool_help},       {"--help", tool_help},
};

static tool_fn find_tool(const char *arg) {
  size_t n = strlen(arg);
  if (strchr(arg, '/') || (n >= 4 && strcmp(arg + n - 4, ".lua") == 0)) return NULL;
  for (size_t i = 0; i < sizeof tools / sizeof *tools; i++)
    if (strcmp(arg, tools[i].name) == 0) return tools[i].fn;
  return NULL;
}

int cli_is_tool(const char *arg) {
  return find_tool(arg) != NULL;
}

int cli_tool_main(int argc, char **argv) {
  tool_fn fn = find_tool(argv[1]);
  cujit_engine *engine = open_engine(argv[1]);
  if (!engine) return 1;
  int status = fn(engine, argc, argv);
  cujit_close(engine);
  /* What the tool printed must have reached stdout (`cujit help > /dev/full`): else say so. */
  errno = 0;
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, CLI_NAME " %s: cannot write to stdout%s%s\n", argv[1], errno ? ": " : "",
            errno ? strerror(errno) : "");
    status = 1;
  }
  return status;
}
