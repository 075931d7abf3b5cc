/*
** backend.c -- what every backend shares below the seam: poisoning a device with its first
** sticky fault, refusing work on a faulted device, and waiting by polling so that a wait can be
** interrupted. The operations themselves are in backend_cuda.c (and the CPU device's files).
*/
#include "backend.h"

#include <stdio.h>
#include <time.h>

#define SPIN_MS 0.02        /* poll without sleeping for the first 20 us */
#define FIRST_SLEEP_NS 2000 /* then sleep, doubling up to... */
#define MAX_SLEEP_NS 100000

cujit_status cj_device_refuse(cujit_device *dev) {
  return cj_fail(dev->engine, CUJIT_ERROR_DEVICE_FAULT, "%s", dev->fault_msg);
}

cujit_status cj_device_fault(cujit_device *dev, const char *fmt, ...) {
  char msg[sizeof dev->fault_msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  cujit_engine *engine = dev->engine;
  pthread_mutex_lock(&engine->lock);
  if (dev->fault == CUJIT_OK) { /* the first report names the cause; later ones repeat it */
    snprintf(dev->fault_msg, sizeof dev->fault_msg, "%s", msg);
    __atomic_store_n(&dev->fault, CUJIT_ERROR_DEVICE_FAULT, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&engine->lock);
  return cj_device_refuse(dev);
}

static void nap(long ns) {
  struct timespec ts = {0, ns};
  nanosleep(&ts, NULL);
}

cujit_status cj_backend_wait(cujit_device *dev, cj_poll_fn done, void *handle, const char *what) {
  cujit_engine *engine = dev->engine;
  double start = cj_now_ms();
  long sleep_ns = FIRST_SLEEP_NS;
  for (;;) {
    cujit_status st = done(dev, handle);
    if (st != CUJIT_ERROR_NOT_READY) return st;
    if (engine->interrupted) {
      engine->interrupted = 0;
      return cj_fail(engine, CUJIT_ERROR_INTERRUPTED,
                     "%s was interrupted (cujit_interrupt); the work already queued on device %d "
                     "goes on running",
                     what, dev->ordinal);
    }
    if (cj_now_ms() - start < SPIN_MS) continue;
    nap(sleep_ns);
    if (sleep_ns < MAX_SLEEP_NS)
      sleep_ns = sleep_ns * 2 > MAX_SLEEP_NS ? MAX_SLEEP_NS : sleep_ns * 2;
  }
}
