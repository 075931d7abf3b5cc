/*
** nvtx_recording.c -- a stand-in NVTX tool for tests/sh/test_nvtx.sh: an injection library, as a
** profiler's, loaded by NVTX through NVTX_INJECTION64_PATH. Written to the interface the toolkit's
** NVTX3 headers document (nvtxDetail/nvtxTypes.h, nvtxInit.h): NVTX calls its
** InitializeInjectionNvtx2 with the export table, and it fills the CORE2 module's slots (domains,
** registered strings, pushes, pops, marks) with functions of its own. Each event is one line
** appended to the file $CUJIT_TEST_NVTX_LOG, written whole by one write():
**   init | domain NAME | push DOMAIN TEXT | pop DOMAIN | mark DOMAIN TEXT
** where TEXT is the event's message, a registered string resolved to its text. With
** CUJIT_TEST_NVTX_NO_REGISTER=1 it registers no strings (a tool without them: NULL handles).
*/
#define NVTX_NO_IMPL /* the types and the interface only: this is the tool, not a user of NVTX */
#include <nvtx3/nvToolsExt.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The opaque handles NVTX hands back to its user are the tool's own records, kept on a list for
** the process's life as a tool keeps them (so LeakSanitizer sees them reachable). */
struct nvtxDomainRegistration_st {
  char name[64];
  struct nvtxDomainRegistration_st *next;
};
struct nvtxStringRegistration_st {
  char text[512];
  struct nvtxStringRegistration_st *next;
};
static struct nvtxDomainRegistration_st *domains;
static struct nvtxStringRegistration_st *strings;
static pthread_mutex_t lists = PTHREAD_MUTEX_INITIALIZER;

static int log_fd = -1;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n > sizeof line - 2) n = (int)sizeof line - 2;
  line[n++] = '\n';
  if (log_fd >= 0 && write(log_fd, line, (size_t)n) != n) abort();
}

static const char *domain_name(nvtxDomainHandle_t d) {
  return d ? d->name : "(default)";
}

static const char *message(const nvtxEventAttributes_t *a) {
  if (!a) return "(no attributes)";
  switch (a->messageType) {
  case NVTX_MESSAGE_TYPE_ASCII:
    return a->message.ascii ? a->message.ascii : "(null)";
  case NVTX_MESSAGE_TYPE_REGISTERED:
    return a->message.registered ? a->message.registered->text : "(null handle)";
  default:
    return "(no message)";
  }
}

static nvtxDomainHandle_t NVTX_API domain_create(const char *name) {
  nvtxDomainHandle_t d = calloc(1, sizeof *d);
  if (d) {
    snprintf(d->name, sizeof d->name, "%s", name);
    pthread_mutex_lock(&lists);
    d->next = domains, domains = d;
    pthread_mutex_unlock(&lists);
  }
  say("domain %s", name);
  return d;
}

static nvtxStringHandle_t NVTX_API register_string(nvtxDomainHandle_t d, const char *text) {
  (void)d;
  nvtxStringHandle_t s = calloc(1, sizeof *s);
  if (s) {
    snprintf(s->text, sizeof s->text, "%s", text);
    pthread_mutex_lock(&lists);
    s->next = strings, strings = s;
    pthread_mutex_unlock(&lists);
  }
  return s;
}

static int NVTX_API push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  say("push %s %s", domain_name(d), message(a));
  return 0;
}

static int NVTX_API pop(nvtxDomainHandle_t d) {
  say("pop %s", domain_name(d));
  return 0;
}

static void NVTX_API mark(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  say("mark %s %s", domain_name(d), message(a));
}

int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table);
int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table) {
  const char *path = getenv("CUJIT_TEST_NVTX_LOG");
  if (path) log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
  say("init");
  const NvtxExportTableCallbacks *callbacks = get_table(NVTX_ETID_CALLBACKS);
  NvtxFunctionTable table = NULL;
  unsigned int slots = 0;
  if (!callbacks || !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &slots) ||
      slots < NVTX_CBID_CORE2_DomainCreateA)
    return 0; /* NVTX then answers nothing, as without a tool */
  *table[NVTX_CBID_CORE2_DomainCreateA] = (NvtxFunctionPointer)domain_create;
  *table[NVTX_CBID_CORE2_DomainRangePushEx] = (NvtxFunctionPointer)push;
  *table[NVTX_CBID_CORE2_DomainRangePop] = (NvtxFunctionPointer)pop;
  *table[NVTX_CBID_CORE2_DomainMarkEx] = (NvtxFunctionPointer)mark;
  const char *no_register = getenv("CUJIT_TEST_NVTX_NO_REGISTER");
  if (!(no_register && strcmp(no_register, "1") == 0))
    *table[NVTX_CBID_CORE2_DomainRegisterStringA] = (NvtxFunctionPointer)register_string;
  return 1;
}
