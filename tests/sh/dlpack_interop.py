"""dlpack_interop.py -- cujit's DLPack export and import against a real producer and consumer:
PyTorch (on a GPU with CUDA tensors, or on the CPU device with CPU tensors) or NumPy (CPU tensors
only), through Python's ctypes and libcujit.so, as an embedding host would do it. Run by
test_dlpack_torch.sh as:  python3 dlpack_interop.py LIBCUJIT {torch-cuda|torch-cpu|numpy-cpu}.

It checks, printing each check as it goes:
  cujit -> consumer: a cujit buffer written by a cujit kernel, exported with cujit_buffer_to_dlpack
    and wrapped in a PyCapsule named "dltensor_versioned", is seen by the consumer at the same
    address (no copy) with the shape and values; the consumer's writes are seen by cujit; the
    tensor stays valid after cujit_buffer_free, and the memory is given back (a wrapped buffer's
    release called, once) only when the consumer lets go of it.
  producer -> cujit: the producer's __dlpack__(max_version=(1, 0)) capsule, its pointer taken with
    PyCapsule_GetPointer (and the capsule renamed "used_dltensor_versioned", as a consumer does),
    imported with cujit_buffer_from_dlpack at the same address; a cujit kernel's writes are seen by
    the producer; the producer's deleter runs when cujit frees the buffer (PyTorch CUDA: its
    allocator gets the memory back only then).
Exit status 0 when everything held, 1 on a failure, 77 when the mode's library is missing.
"""
import ctypes
import gc
import sys

if len(sys.argv) != 3:
    sys.exit("usage: dlpack_interop.py LIBCUJIT {torch-cuda|torch-cpu|numpy-cpu}")
LIB, MODE = sys.argv[1], sys.argv[2]
KIND, WHERE = MODE.split("-")
failures = 0


def check(what, cond, detail=""):
    global failures
    print(("ok:   " if cond else "FAIL: ") + what + ("" if cond or not detail else ": " + str(detail)))
    sys.stdout.flush()
    if not cond:
        failures += 1


try:
    if KIND == "torch":
        import torch
        if WHERE == "cuda" and not torch.cuda.is_available():
            print("skip: torch " + torch.__version__ + " sees no CUDA device")
            sys.exit(77)
    else:
        import numpy
except ImportError as e:
    print("skip: " + str(e))
    sys.exit(77)

# --- libcujit through ctypes -------------------------------------------------------------------
c_void_pp = ctypes.POINTER(ctypes.c_void_p)
cj = ctypes.CDLL(LIB)
RELEASE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint64)
for name, res, args in [
    ("cujit_open", ctypes.c_int, [c_void_pp]),
    ("cujit_close", None, [ctypes.c_void_p]),
    ("cujit_errmsg", ctypes.c_char_p, [ctypes.c_void_p]),
    ("cujit_set_device", ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
    ("cujit_current_device", ctypes.c_int, [ctypes.c_void_p, c_void_pp]),
    ("cujit_device_synchronize", ctypes.c_int, [ctypes.c_void_p]),
    ("cujit_buffer_alloc", ctypes.c_int,
     [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, c_void_pp]),
    ("cujit_buffer_wrap", ctypes.c_int,
     [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_int, RELEASE_FN, ctypes.c_void_p,
      c_void_pp]),
    ("cujit_buffer_free", None, [ctypes.c_void_p]),
    ("cujit_buffer_devptr", ctypes.c_uint64, [ctypes.c_void_p]),
    ("cujit_memcpy_htod", ctypes.c_int,
     [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]),
    ("cujit_memcpy_dtoh", ctypes.c_int,
     [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p]),
    ("cujit_buffer_to_dlpack", ctypes.c_int,
     [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int64), c_void_pp]),
    ("cujit_buffer_from_dlpack", ctypes.c_int,
     [ctypes.c_void_p, ctypes.c_void_p, c_void_pp, ctypes.POINTER(ctypes.c_int),
      ctypes.POINTER(ctypes.c_int64)]),
    ("cujit_kernel_define", ctypes.c_int,
     [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p,
      c_void_pp]),
    ("cujit_launch", ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                    ctypes.c_size_t]),
]:
    f = getattr(cj, name)
    f.restype, f.argtypes = res, args

CUJIT_F32, CUJIT_DEVICE_CPU = 2, -1
ARG_INT, ARG_FLOAT, ARG_BUFFER = 0, 2, 3


class Arg(ctypes.Structure):  # cujit_arg: a kind, then an 8-byte union
    _fields_ = [("kind", ctypes.c_int), ("v", ctypes.c_uint64)]


class LaunchConfig(ctypes.Structure):  # cujit_launch_config, its first (and current) layout
    _fields_ = [("size", ctypes.c_size_t), ("grid", ctypes.c_uint * 3),
                ("block", ctypes.c_uint * 3), ("shared_bytes", ctypes.c_uint),
                ("stream", ctypes.c_void_p)]


engine = ctypes.c_void_p()


def ok(status, what):
    if status != 0:
        raise RuntimeError("%s failed (%d): %s" % (what, status,
                                                  cj.cujit_errmsg(engine).decode()))


ok(cj.cujit_open(ctypes.byref(engine)), "cujit_open")
ok(cj.cujit_set_device(engine, 0 if WHERE == "cuda" else CUJIT_DEVICE_CPU), "cujit_set_device")
device = ctypes.c_void_p()
ok(cj.cujit_current_device(engine, ctypes.byref(device)), "cujit_current_device")
kernel = ctypes.c_void_p()
ok(cj.cujit_kernel_define(engine, b"affine(float *y, float a, float b, int n)",
                          b"int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                          b"if (i < n) y[i] = a * y[i] + b;", None, None, ctypes.byref(kernel)),
   "cujit_kernel_define")


def affine(buf, n, a, b):
    """y = a * y + b on the cujit buffer, then the device synchronized."""
    cfg = LaunchConfig(ctypes.sizeof(LaunchConfig), (ctypes.c_uint * 3)((n + 127) // 128, 1, 1),
                       (ctypes.c_uint * 3)(128, 1, 1), 0, None)
    fa, fb = ctypes.c_double(a), ctypes.c_double(b)
    args = (Arg * 4)(Arg(ARG_BUFFER, buf.value), Arg(ARG_FLOAT, ctypes.c_uint64.from_buffer(fa).value),
                     Arg(ARG_FLOAT, ctypes.c_uint64.from_buffer(fb).value), Arg(ARG_INT, n))
    ok(cj.cujit_launch(kernel, ctypes.byref(cfg), args, 4), "cujit_launch")
    ok(cj.cujit_device_synchronize(device), "cujit_device_synchronize")


def download(buf, n):
    out = (ctypes.c_float * n)()
    ok(cj.cujit_memcpy_dtoh(out, buf, 0, 4 * n, None), "cujit_memcpy_dtoh")
    return list(out)


# --- capsules ------------------------------------------------------------------------------------
py = ctypes.pythonapi
py.PyCapsule_New.restype = ctypes.py_object
py.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
py.PyCapsule_GetPointer.restype = ctypes.c_void_p
py.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
py.PyCapsule_GetName.restype = ctypes.c_char_p
py.PyCapsule_GetName.argtypes = [ctypes.py_object]
py.PyCapsule_SetName.restype = ctypes.c_int
py.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
VERSIONED = b"dltensor_versioned"
USED = ctypes.c_char_p(b"used_dltensor_versioned")  # kept alive: the capsule keeps the pointer


class Exported:
    """What a consumer's from_dlpack takes: __dlpack__ and __dlpack_device__ over cujit's export."""

    def __init__(self, pointer, device):
        self.pointer, self.device = pointer, device

    def __dlpack__(self, stream=None, max_version=None, **other):  # dl_device, copy: not asked
        if max_version is not None and max_version[0] < 1:
            raise BufferError("cujit exports DLPack 1.x only")
        # cujit's work is done (the device was synchronized), so no stream needs to wait.
        return py.PyCapsule_New(self.pointer, VERSIONED, None)

    def __dlpack_device__(self):
        return self.device


dl_device = (2, 0) if WHERE == "cuda" else (1, 0)
print("mode %s: %s" % (MODE, torch.__version__ if KIND == "torch" else "numpy " + numpy.__version__))


def consumer_from(obj):
    return torch.from_dlpack(obj) if KIND == "torch" else numpy.from_dlpack(obj)


def address_of(t):
    return t.data_ptr() if KIND == "torch" else t.__array_interface__["data"][0]


def sync_consumer():
    if KIND == "torch" and WHERE == "cuda":
        torch.cuda.synchronize()


# --- cujit -> consumer ---------------------------------------------------------------------------
N = 4096
backing = ctypes.c_void_p()
ok(cj.cujit_buffer_alloc(engine, 4 * N, CUJIT_F32, ctypes.byref(backing)), "cujit_buffer_alloc")
host = (ctypes.c_float * N)(*range(N))
ok(cj.cujit_memcpy_htod(backing, 0, host, 4 * N, None), "cujit_memcpy_htod")
releases = []
on_release = RELEASE_FN(lambda user, address: releases.append(address))
wrapped = ctypes.c_void_p()  # a wrapped buffer, so that the release shows when the memory goes
ok(cj.cujit_buffer_wrap(engine, cj.cujit_buffer_devptr(backing), 4 * N, CUJIT_F32, on_release, None,
                        ctypes.byref(wrapped)), "cujit_buffer_wrap")
devptr = cj.cujit_buffer_devptr(wrapped)
affine(wrapped, N, 2.0, 1.0)  # y = 2 i + 1
shape = (ctypes.c_int64 * 2)(64, N // 64)
tensor = ctypes.c_void_p()
ok(cj.cujit_buffer_to_dlpack(wrapped, 2, shape, ctypes.byref(tensor)), "cujit_buffer_to_dlpack")
t = consumer_from(Exported(tensor.value, dl_device))
check("the consumer's tensor is at cujit's address (no copy)", address_of(t) == devptr,
      "%x != %x" % (address_of(t), devptr))
check("the shape is (64, %d)" % (N // 64), tuple(t.shape) == (64, N // 64), tuple(t.shape))
check("the dtype is float32", str(t.dtype).endswith("float32"), t.dtype)
if KIND == "torch":
    check("the device is " + WHERE, t.device.type == WHERE, t.device)
    flat = t.flatten().cpu().tolist()
else:
    flat = t.flatten().tolist()
check("the consumer sees the values a cujit kernel wrote", flat == [2.0 * i + 1 for i in range(N)],
      flat[:4])
t *= 3  # the consumer writes in place (the export is writable)
sync_consumer()
got = download(wrapped, N)
check("cujit sees the consumer's writes", got[:3] == [3.0, 9.0, 15.0] and got[-1] == 3 * (2 * N - 1),
      got[:3])
cj.cujit_buffer_free(wrapped)
check("freeing the cujit buffer leaves the memory to the tensor (no release yet)", releases == [],
      releases)
again = (t.flatten().cpu() if KIND == "torch" else t.flatten()).tolist()
check("the tensor still reads after cujit_buffer_free", again[:3] == [3.0, 9.0, 15.0], again[:3])
del t
gc.collect()
sync_consumer()
check("dropping the tensor runs the deleter: the memory released once, at its address",
      releases == [devptr], releases)
cj.cujit_buffer_free(backing)

# --- producer -> cujit ---------------------------------------------------------------------------
if KIND == "torch":
    big = 1 << 20
    before = torch.cuda.memory_allocated() if WHERE == "cuda" else 0
    p = torch.arange(big, dtype=torch.float32, device=WHERE).reshape(256, big // 256)
    try:
        capsule = p.__dlpack__(max_version=(1, 0))
    except TypeError as e:
        check("torch's __dlpack__ takes max_version=(1, 0)", False, e)
        sys.exit(1)
else:
    p = numpy.arange(1024, dtype=numpy.float32).reshape(32, 32)
    capsule = p.__dlpack__(max_version=(1, 0))
name = py.PyCapsule_GetName(capsule)
check("the producer's capsule is a versioned tensor", name == VERSIONED, name)
pointer = py.PyCapsule_GetPointer(capsule, VERSIONED)
imported, ndim, dims = ctypes.c_void_p(), ctypes.c_int(), (ctypes.c_int64 * 8)()
st = cj.cujit_buffer_from_dlpack(engine, pointer, ctypes.byref(imported), ctypes.byref(ndim), dims)
if st == 0:
    py.PyCapsule_SetName(capsule, USED)  # cujit owns it now: the capsule must not delete it
    del capsule
    count = p.numel() if KIND == "torch" else p.size
    check("imported at the producer's address (no copy)",
          cj.cujit_buffer_devptr(imported) == address_of(p))
    check("the shape came across", ndim.value == 2 and tuple(dims[:2]) == tuple(p.shape),
          (ndim.value, tuple(dims[:2])))
    affine(imported, count, -1.0, 0.5)  # y = 0.5 - i
    sync_consumer()
    last = float(p.flatten()[-1])
    check("the producer sees a cujit kernel's writes", last == 0.5 - (count - 1), last)
    if KIND == "torch" and WHERE == "cuda":
        del p
        gc.collect()
        held = torch.cuda.memory_allocated()
        check("while cujit holds the tensor, torch keeps its memory", held >= before + 4 * count,
              (held, before))
        cj.cujit_buffer_free(imported)
        gc.collect()
        after = torch.cuda.memory_allocated()
        check("cujit's free ran torch's deleter: the memory went back to torch's allocator",
              after <= before, (after, before))
    else:
        # The producer's export holds a reference: torch one on the storage, numpy one on the
        # array; the deleter drops it.
        if KIND == "torch":
            # torch 2.11's CPU export holds the tensor (its TensorImpl), not one more reference
            # on the storage: _storage_Use_Count did not move on the H200 machine whether the
            # deleter ran or not, so it proves nothing here. The CUDA mode checks torch's deleter
            # through its allocator instead, and numpy's mode through the array's references.
            count_refs = None
        else:
            count_refs = lambda: sys.getrefcount(p)
        if count_refs:
            n_held = count_refs()
            cj.cujit_buffer_free(imported)
            gc.collect()
            check("cujit's free ran the producer's deleter (references %d -> %d)"
                  % (n_held, count_refs()), count_refs() == n_held - 1)
        else:
            cj.cujit_buffer_free(imported)
            print("note: the deleter's run is not checked for torch's CPU tensors (no count "
                  "of torch's sees it); the CUDA and numpy modes check it")
else:
    check("cujit imports the producer's tensor", False, cj.cujit_errmsg(engine).decode())
    py.PyCapsule_SetName(capsule, VERSIONED)

cj.cujit_close(engine)
print("%d failure(s)" % failures)
sys.exit(1 if failures else 0)
