#!/usr/bin/env python3
"""peers.py -- the Python peers of the benchmark, CuPy and Numba, one system per process.

    python3 peers.py --system cupy|numba [--cases LIST] [--kernels DIR] [--reps N] ...

Prints CSV rows (case,system,variant,n,value,unit,status,detail) as the C programs do, with the
same method: launch batches with only the launch calls timed, kernels timed by events, sums and
Monte Carlo by host wall time to a value on the host. A peer that cannot be imported answers every
case with a "missing" row and exits 0. CuPy runs the same CUDA C sources as raw C and cujit; Numba
compiles Python, so its kernels below are the same algorithms written in Python.
"""
import argparse
import math
import os
import statistics
import sys
import time

S0, STRIKE, RATE, SIGMA, YEARS = 100.0, 100.0, 0.05, 0.2, 1.0
DRIFT = (RATE - 0.5 * SIGMA * SIGMA) * YEARS
VOL = SIGMA * math.sqrt(YEARS)
BW_VARIANTS = ["vadd", "saxpy", "vadd4", "saxpy4", "vadd_ew", "saxpy_ew"]


def clean(text):
    return str(text).replace(",", ";").replace("\n", " ").replace("\r", " ")


def row(case, system, variant, n, value, unit):
    print(f"{case},{system},{variant},{int(n)},{value:.6g},{unit},ok,", flush=True)


def missing(case, system, variant, n, why):
    print(f"{case},{system},{variant},{int(n)},,,missing,{clean(why)}", flush=True)


def info(system, what, value):
    print(f"info,{system},{what},0,,,info,{clean(value)}", flush=True)


def black_scholes_call():
    sq = SIGMA * math.sqrt(YEARS)
    d1 = (math.log(S0 / STRIKE) + (RATE + 0.5 * SIGMA * SIGMA) * YEARS) / sq
    d2 = d1 - sq
    cdf = lambda x: 0.5 * math.erfc(-x / math.sqrt(2))
    return S0 * cdf(d1) - STRIKE * math.exp(-RATE * YEARS) * cdf(d2)


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--system", required=True, choices=["cupy", "numba"])
    p.add_argument("--cases", default="all")
    p.add_argument("--kernels", default=os.path.join(os.path.dirname(__file__), "kernels"))
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--launches", type=int, default=20000)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--roundtrips", type=int, default=2000)
    p.add_argument("--sizes", default="20:28:1")
    p.add_argument("--sum-log2", type=int, default=28)
    p.add_argument("--mc-log2", type=int, default=24)
    p.add_argument("--budget", type=float, default=30.0,
                   help="seconds a slow figure (Numba's RNG setup) may take before repetitions stop")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--short", action="store_true")
    a = p.parse_args()
    try:
        lo, hi, *step = (int(x) for x in a.sizes.split(":"))
        a.sizes = list(range(lo, hi + 1, step[0] if step else 1))
        if not (4 <= lo <= hi <= 30) or not a.sizes:
            raise ValueError
    except ValueError:
        p.error(f"--sizes expects MIN:MAX[:STEP] in log2 elements, 4 <= MIN <= MAX <= 30")
    if a.quick:
        a.reps, a.launches, a.roundtrips, a.sizes = 5, 5000, 500, a.sizes[::4]
    if a.short:
        a.reps, a.launches, a.batch, a.roundtrips = 1, 10, 10, 10
        a.sizes, a.sum_log2, a.mc_log2 = [10], 10, 10
    a.batch = min(a.batch, a.launches)
    a.cases = a.cases.split(",")
    return a


def wants(a, case):
    return "all" in a.cases or case in a.cases


def read_kernel(a, name):
    with open(os.path.join(a.kernels, name)) as f:
        return f.read()


def time_launches(a, launch, sync):
    """Host microseconds per launch: batches, only the launch calls timed, drained between."""
    per = []
    for r in range(-1, a.reps):
        spent = 0.0
        for _ in range(0, a.launches, a.batch):
            t0 = time.perf_counter()
            for _ in range(a.batch):
                launch()
            spent += time.perf_counter() - t0
            sync()
        if r >= 0:
            per.append(spent / a.launches * 1e6)
    return statistics.median(per)


def time_roundtrips(a, launch, sync):
    per = []
    for r in range(-1, a.reps):
        t0 = time.perf_counter()
        for _ in range(a.roundtrips):
            launch()
            sync()
        if r >= 0:
            per.append((time.perf_counter() - t0) / a.roundtrips * 1e6)
    return statistics.median(per)


def graph_sizes(a):
    return [1, 10] if a.short else [1, 10, 100, 1000]


def time_replays(a, replay, sync, n):
    """Host microseconds per node of replaying an n-node graph, as common.c measures it."""
    per_batch = max(1, a.batch // n)
    replays = max(per_batch, a.launches // n)
    per = []
    for r in range(-1, a.reps):
        spent, done = 0.0, 0
        while done < replays:
            t0 = time.perf_counter()
            for _ in range(per_batch):
                replay()
            spent += time.perf_counter() - t0
            sync()
            done += per_batch
        if r >= 0:
            per.append(spent / (done * n) * 1e6)
    return statistics.median(per)


def host_ms(a, fn, reps=None, budget=None):
    """Median host milliseconds of fn() after one warm-up call; stops early past `budget` s."""
    fn()
    times, start = [], time.perf_counter()
    for _ in range(reps or a.reps * 3):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
        if budget and time.perf_counter() - start > budget:
            break
    return statistics.median(times)


def guarded(a, system, case, variants, n, body):
    """Runs one case; any failure becomes "missing" rows with the exception as the reason."""
    if not wants(a, case):
        return
    try:
        body()
    except Exception as e:  # a peer's failure is reported, never fatal to the run
        for v in variants:
            missing(case, system, v, n, f"{type(e).__name__}: {e}")


# ---- CuPy ---------------------------------------------------------------------------------------

def cupy_main(a):
    import numpy as np
    import cupy as cp

    sysname = "cupy"
    sync = cp.cuda.runtime.deviceSynchronize
    small = cp.zeros(1 << 20, dtype=cp.float32)  # the context exists before anything is timed
    sync()
    if wants(a, "info"):
        info(sysname, "cupy", cp.__version__)
        info(sysname, "gpu", cp.cuda.runtime.getDeviceProperties(0)["name"].decode())

    def launch_case():
        mod = cp.RawModule(code=read_kernel(a, "empty.cu"))
        i32, f32 = np.int32, np.float32
        args = {1: (i32(1),), 4: (small, small, i32(1), f32(0.5)),
                12: (small,) * 4 + tuple(i32(k + 1) for k in range(4)) +
                    tuple(f32(0.5 * k) for k in range(4))}
        for count in (1, 4, 12):
            k, ar = mod.get_function(f"empty{count}"), args[count]
            launch = lambda: k((1,), (32,), ar)
            if wants(a, "launch"):
                row("launch", sysname, f"args{count}", a.launches, time_launches(a, launch, sync), "us")
            if count == 4 and wants(a, "roundtrip"):
                row("roundtrip", sysname, "args4", a.roundtrips, time_roundtrips(a, launch, sync), "us")

    def first_launch(case):
        src, n = read_kernel(a, "vadd.cu"), 1 << 20
        t0 = time.perf_counter()
        k = cp.RawKernel(src, "vadd")  # compiled (or fetched from CUPY_CACHE_DIR) at the first call
        k((n // 256,), (256,), (small, small, small, np.int32(n)))
        sync()
        row(case, sysname, "vadd", n, (time.perf_counter() - t0) * 1e3, "ms")

    def bandwidth_case():
        top = 1 << max(a.sizes)
        x = cp.ones(top, dtype=cp.float32)
        y = cp.full(top, 2.0, dtype=cp.float32)
        z = cp.empty(top, dtype=cp.float32)
        m1 = cp.RawModule(code=read_kernel(a, "vadd.cu") + read_kernel(a, "saxpy.cu"))
        m4 = cp.RawModule(code=read_kernel(a, "vec4.cu"))
        axpy = cp.ElementwiseKernel("float32 a, float32 x, float32 y", "float32 z", "z = a * x + y",
                                    "saxpy_ew")
        fv, fs = m1.get_function("vadd"), m1.get_function("saxpy")
        fv4, fs4 = m4.get_function("vadd4"), m4.get_function("saxpy4")
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        for k in a.sizes:
            n = 1 << k
            xs, ys, zs = x[:n], y[:n], z[:n]
            f32, i32, n4 = np.float32(2.0), np.int32(n), np.int32(n // 4)
            g1, g4 = ((n + 255) // 256,), ((n // 4 + 255) // 256,)
            runs = {
                "vadd": lambda: fv(g1, (256,), (xs, ys, zs, i32)),
                "saxpy": lambda: fs(g1, (256,), (f32, xs, zs, i32)),
                "vadd4": lambda: fv4(g4, (256,), (xs, ys, zs, n4)),
                "saxpy4": lambda: fs4(g4, (256,), (f32, xs, zs, n4)),
                "vadd_ew": lambda: cp.add(xs, ys, out=zs),
                "saxpy_ew": lambda: axpy(f32, xs, zs, zs),
            }
            for variant in BW_VARIANTS:
                def once(fn=runs[variant]):
                    start.record()
                    fn()
                    stop.record()
                    stop.synchronize()
                    return cp.cuda.get_elapsed_time(start, stop)
                once()
                ms = statistics.median(once() for _ in range(a.reps * 3))
                if variant == "vadd" and not (float(zs[0]) == 3.0 and float(zs[-1]) == 3.0):
                    missing("bandwidth", sysname, variant, n, "vadd gave wrong results")
                    continue
                row("bandwidth", sysname, variant, n, 12.0 * n / (ms * 1e-3) / 1e9, "GB/s")

    def sum_case():
        n = 1 << a.sum_log2
        x = cp.ones(n, dtype=cp.float32)
        total = float(x.sum())
        if total != n:
            raise RuntimeError(f"wrong sum {total} of {n} ones")
        ms = host_ms(a, lambda: float(x.sum()))
        row("sum", sysname, "sum", n, 4.0 * n / (ms * 1e-3) / 1e9, "GB/s")

    def mc_case():
        n = 1 << a.mc_log2
        def price(paths, seed):
            rs = cp.random.RandomState(seed)  # generator setup is part of the figure
            z = rs.standard_normal(paths, dtype=cp.float32)
            payoff = cp.maximum(S0 * cp.exp(DRIFT + VOL * z) - STRIKE, 0)
            return math.exp(-RATE * YEARS) * float(payoff.mean())
        price(1024, 1)
        got = price(n, 1234)
        if n >= 1 << 20 and abs(got - black_scholes_call()) > 0.05:
            raise RuntimeError(f"wrong price {got:.4f} (Black-Scholes {black_scholes_call():.4f})")
        seeds = iter(range(2000, 100000))
        ms = host_ms(a, lambda: price(n, next(seeds)), reps=a.reps)
        row("montecarlo", sysname, "e2e", n, ms, "ms")

    def graph_case():
        # Graphs of n empty4 launches captured on a stream (CuPy instantiates in end_capture, so
        # the capture row includes it), replayed by g.launch() in batches of at most a.batch nodes.
        k = cp.RawModule(code=read_kernel(a, "empty.cu")).get_function("empty4")
        ar = (small, small, np.int32(1), np.float32(0.5))
        k((1,), (32,), ar)
        sync()
        s = cp.cuda.Stream(non_blocking=True)
        for n in graph_sizes(a):
            with s:
                t0 = time.perf_counter()
                s.begin_capture()
                for _ in range(n):
                    k((1,), (32,), ar)
                g = s.end_capture()
                t1 = time.perf_counter()
            row("graph", sysname, f"nodes{n}", n, time_replays(a, lambda: g.launch(s), s.synchronize, n),
                "us")
            row("graph_setup", sysname, f"capture{n}", n, (t1 - t0) * 1e6, "us")

    def median_us(fn, count):
        for _ in range(3):
            fn()
        times = []
        for _ in range(count):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e6)
        return statistics.median(times)

    def latency_case():
        """Issue 15: a spin kernel of each length launched and waited for, per kind of wait."""
        mod = cp.RawModule(code=read_kernel(a, "spin.cu"))
        spin = mod.get_function("spin")
        stream, event = cp.cuda.Stream(non_blocking=True), cp.cuda.Event(disable_timing=True)
        def on_stream(ns):
            spin((1,), (1,), (np.uint64(ns),), stream=stream)
            stream.synchronize()
        def on_device(ns):
            spin((1,), (1,), (np.uint64(ns),))
            sync()
        def on_event(ns):
            spin((1,), (1,), (np.uint64(ns),))
            event.record()
            event.synchronize()
        waits = {"stream": on_stream, "device": on_device, "event": on_event}
        for kind in ("stream", "device", "event"):
            for us in LATENCY_LENGTHS:
                count = max(1 if a.short else 5,
                            min(a.roundtrips, 2000, 400000 // us if us else 2000))
                fn = waits[kind]
                row("latency", sysname, f"rt{us}_{kind}", count,
                    median_us(lambda: fn(us * 1000), count), "us")
        c0, t0 = time.process_time(), time.perf_counter()
        on_stream(10_000_000 if a.short else 1_000_000_000)
        row("latency", sysname, "cpu_wait1s", 1,
            100 * (time.process_time() - c0) / (time.perf_counter() - t0), "%")

    def small_case():
        """Issue 15: small operations, median us each."""
        a1k, a1m = cp.zeros(1024, dtype=cp.float32), cp.zeros(1 << 20, dtype=cp.float32)
        h = np.zeros(1024, dtype=np.float32)
        table = [i * 0.5 for i in range(1, 1025)]
        twice = cp.RawModule(code=read_kernel(a, "spin.cu")).get_function("twice")
        def ew():
            twice((4,), (256,), (a1k, np.int32(1024)))
            sync()
        ops = {
            "alloc_free": lambda: cp.empty(1024, dtype=cp.float32),  # freed to the pool at once
            "zeros": lambda: cp.zeros(1024, dtype=cp.float32),
            "sum1k": lambda: float(a1k.sum()),
            "sum1m": lambda: float(a1m.sum()),
            "dtoh1k": lambda: a1k.get(out=h),
            "htod1k": lambda: a1k.set(h),
            "table1k": lambda: cp.asarray(table, dtype=cp.float32),
            "ew1k": ew,
        }
        count = min(a.roundtrips, 2000)
        for variant, fn in ops.items():
            row("small", sysname, variant, count, median_us(fn, count), "us")

    def gemm_case():
        # cuBLAS through CuPy, device time between events: f32, and f16 inputs (into f16: CuPy's
        # matmul keeps the inputs' type; cuBLAS accumulates in f32), n x n x n as cujit's case
        n = 256 if a.short else 8192
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        for variant, dt in (("f32", cp.float32), ("f16", cp.float16)):
            x = cp.ones((n, n), dtype=dt)
            y = cp.matmul(x, x)
            if float(y[n - 1, n - 1]) != n:
                raise RuntimeError(f"wrong product {float(y[n - 1, n - 1])} (want {n})")
            times = []
            for _ in range(a.reps * 3):
                start.record()
                cp.matmul(x, x, out=y)
                stop.record()
                stop.synchronize()
                times.append(cp.cuda.get_elapsed_time(start, stop))
            row("gemm", sysname, variant, n, 2.0 * n ** 3 / (statistics.median(times) * 1e-3) / 1e12,
                "TFLOP/s")

    guarded(a, sysname, "launch", ["args1", "args4", "args12"], a.launches, launch_case)
    if not wants(a, "launch"):
        guarded(a, sysname, "roundtrip", ["args4"], a.roundtrips, launch_case)
    guarded(a, sysname, "gemm", ["f32", "f16"], 256 if a.short else 8192, gemm_case)
    guarded(a, sysname, "latency", ["(all)"], 0, latency_case)
    guarded(a, sysname, "small", ["(all)"], 0, small_case)
    guarded(a, sysname, "cold", ["vadd"], 1 << 20, lambda: first_launch("cold"))
    guarded(a, sysname, "warm", ["vadd"], 1 << 20, lambda: first_launch("warm"))
    guarded(a, sysname, "bandwidth", BW_VARIANTS, 1 << max(a.sizes), bandwidth_case)
    guarded(a, sysname, "graph", [f"nodes{n}" for n in graph_sizes(a)], 0, graph_case)
    guarded(a, sysname, "sum", ["sum"], 1 << a.sum_log2, sum_case)
    guarded(a, sysname, "montecarlo", ["e2e"], 1 << a.mc_log2, mc_case)


# ---- Numba --------------------------------------------------------------------------------------

def numba_main(a):
    import numpy as np
    np.row_stack = np.vstack  # numba-cuda 0.30 still looks for it; NumPy 2 removed it
    from numba import cuda, float32, float64
    import numba
    sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import numba_kernels
    from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_normal_float32

    sysname = "numba"
    sync = cuda.synchronize
    small = cuda.device_array(1 << 20, dtype=np.float32)
    sync()
    if wants(a, "info"):
        info(sysname, "numba", numba.__version__)

    # The kernels of kernels/*.cu, written in Python.
    @cuda.jit
    def empty1(i0):
        pass

    @cuda.jit
    def empty4(x, y, n, s):
        pass

    @cuda.jit
    def empty12(p0, p1, p2, p3, i0, i1, i2, i3, f0, f1, f2, f3):
        pass

    def launch_case():
        i32, f32 = np.int32, np.float32
        cases = {1: (empty1, (i32(1),)), 4: (empty4, (small, small, i32(1), f32(0.5))),
                 12: (empty12, (small,) * 4 + tuple(i32(k + 1) for k in range(4)) +
                      tuple(f32(0.5 * k) for k in range(4)))}
        for count in (1, 4, 12):
            k, ar = cases[count]
            launch = lambda: k[1, 32](*ar)
            if wants(a, "launch"):
                row("launch", sysname, f"args{count}", a.launches, time_launches(a, launch, sync), "us")
            if count == 4 and wants(a, "roundtrip"):
                row("roundtrip", sysname, "args4", a.roundtrips, time_roundtrips(a, launch, sync), "us")

    def first_launch(case):
        n = 1 << 20
        # cache=True keeps the compiled kernel in NUMBA_CACHE_DIR (the warm case); the cold
        # case runs with an empty one, so both are one code path, as for CuPy and cujit.
        t0 = time.perf_counter()
        k = cuda.jit(cache=True)(numba_kernels.vadd)
        k[n // 256, 256](small, small, small, np.int32(n))
        sync()
        row(case, sysname, "vadd", n, (time.perf_counter() - t0) * 1e3, "ms")

    # Ufunc element functions must be named defs, not lambdas: Numba's CUDA vectorize writes its
    # kernel as Python source, "def __vectorized_<name>(...)", from the function's __name__, and
    # "<lambda>" makes that "SyntaxError: expected '('" (line 2 of its template).
    def ew_add(x, y):
        return x + y

    def ew_axpy(al, x, y):
        return al * x + y

    def bandwidth_case():
        # Each kernel is made when first run, inside that variant's own error handling, so one
        # that cannot be built is reported missing without taking the others with it.
        made = {}

        def kernel(name):
            if name not in made:
                if name in ("vadd", "saxpy"):
                    made[name] = cuda.jit(getattr(numba_kernels, name))
                elif name == "vadd_ew":
                    made[name] = numba.vectorize(["float32(float32, float32)"],
                                                 target="cuda")(ew_add)
                else:
                    made[name] = numba.vectorize(["float32(float32, float32, float32)"],
                                                 target="cuda")(ew_axpy)
            return made[name]

        top = 1 << max(a.sizes)
        x = cuda.to_device(np.ones(top, dtype=np.float32))
        y = cuda.to_device(np.full(top, 2.0, dtype=np.float32))
        z = cuda.device_array(top, dtype=np.float32)
        start, stop = cuda.event(), cuda.event()
        for k in a.sizes:
            n = 1 << k
            xs, ys, zs = x[:n], y[:n], z[:n]
            f32, i32, g = np.float32(2.0), np.int32(n), (n + 255) // 256
            runs = {"vadd": lambda: kernel("vadd")[g, 256](xs, ys, zs, i32),
                    "saxpy": lambda: kernel("saxpy")[g, 256](f32, xs, zs, i32),
                    "vadd_ew": lambda: kernel("vadd_ew")(xs, ys, out=zs),
                    "saxpy_ew": lambda: kernel("saxpy_ew")(f32, xs, zs, out=zs)}
            for variant, fn in runs.items():
                def once(fn=fn):
                    start.record()
                    fn()
                    stop.record()
                    stop.synchronize()
                    return start.elapsed_time(stop)
                try:
                    once()
                    ms = statistics.median(once() for _ in range(a.reps * 3))
                except Exception as e:
                    missing("bandwidth", sysname, variant, n, f"{type(e).__name__}: {e}")
                    continue
                if variant == "vadd" and not (zs[0] == 3.0 and zs[n - 1] == 3.0):
                    missing("bandwidth", sysname, variant, n, "vadd gave wrong results")
                    continue
                row("bandwidth", sysname, variant, n, 12.0 * n / (ms * 1e-3) / 1e9, "GB/s")

    def sum_case():
        n = 1 << a.sum_log2
        total_of = cuda.reduce(lambda p, q: p + q)
        x = cuda.to_device(np.ones(n, dtype=np.float32))
        total = float(total_of(x))
        if total != n:
            raise RuntimeError(f"wrong sum {total} of {n} ones")
        ms = host_ms(a, lambda: total_of(x))
        row("sum", sysname, "sum", n, 4.0 * n / (ms * 1e-3) / 1e9, "GB/s")

    @cuda.jit
    def mc_call(states, out, paths, s0, strike, drift, vol):
        part = cuda.shared.array(256, float64)
        i = cuda.grid(1)
        t = cuda.threadIdx.x
        payoff = 0.0
        if i < paths:
            z = xoroshiro128p_normal_float32(states, i)
            payoff = max(s0 * math.exp(drift + vol * z) - strike, float32(0.0))
        part[t] = payoff
        cuda.syncthreads()
        step = 128
        while step > 0:
            if t < step:
                part[t] += part[t + step]
            cuda.syncthreads()
            step //= 2
        if t == 0:
            cuda.atomic.add(out, 0, part[0])

    def mc_case():
        n = 1 << a.mc_log2
        out = cuda.device_array(1, dtype=np.float64)
        parts = {"setup": [], "kernel": [], "e2e": []}

        def price(paths, seed, record):
            t0 = time.perf_counter()
            states = create_xoroshiro128p_states(paths, seed=seed)
            sync()
            t1 = time.perf_counter()
            out.copy_to_device(np.zeros(1))
            mc_call[(paths + 255) // 256, 256](states, out, np.int64(paths), np.float32(S0),
                                              np.float32(STRIKE), np.float32(DRIFT), np.float32(VOL))
            total = out.copy_to_host()[0]
            t2 = time.perf_counter()
            if record:
                parts["setup"].append((t1 - t0) * 1e3)
                parts["kernel"].append((t2 - t1) * 1e3)
                parts["e2e"].append((t2 - t0) * 1e3)
            return math.exp(-RATE * YEARS) * total / paths

        price(1024, 1, False)  # compiles both kernels
        start = time.perf_counter()
        for r in range(a.reps):
            got = price(n, 1234 + r, True)
            if time.perf_counter() - start > a.budget:
                break
        if n >= 1 << 20 and abs(got - black_scholes_call()) > 0.05:
            raise RuntimeError(f"wrong price {got:.4f} (Black-Scholes {black_scholes_call():.4f})")
        for variant in ("e2e", "setup", "kernel"):
            row("montecarlo", sysname, variant, n, statistics.median(parts[variant]), "ms")

    guarded(a, sysname, "launch", ["args1", "args4", "args12"], a.launches, launch_case)
    if not wants(a, "launch"):
        guarded(a, sysname, "roundtrip", ["args4"], a.roundtrips, launch_case)
    guarded(a, sysname, "cold", ["vadd"], 1 << 20, lambda: first_launch("cold"))
    guarded(a, sysname, "warm", ["vadd"], 1 << 20, lambda: first_launch("warm"))
    guarded(a, sysname, "bandwidth", ["vadd", "saxpy", "vadd_ew", "saxpy_ew"], 1 << max(a.sizes),
            bandwidth_case)
    guarded(a, sysname, "sum", ["sum"], 1 << a.sum_log2, sum_case)
    guarded(a, sysname, "montecarlo", ["e2e"], 1 << a.mc_log2, mc_case)
    if wants(a, "graph"):
        for n in graph_sizes(a):
            missing("graph", sysname, f"nodes{n}", n,
                    "Numba has no CUDA graphs (numba-cuda issues #102 and #832)")


ALL_CASES = {"launch": ["args1", "args4", "args12"], "roundtrip": ["args4"], "cold": ["vadd"],
             "warm": ["vadd"], "bandwidth": ["vadd", "saxpy"], "sum": ["sum"], "montecarlo": ["e2e"],
             "graph": ["nodes1", "nodes10", "nodes100", "nodes1000"],
             "latency": ["(all)"], "small": ["(all)"]}
LATENCY_LENGTHS = (0, 5, 20, 50, 200, 1000, 10000)  # us, as latency.c and bench.lua


def main():
    a = parse()
    try:
        body = cupy_main if a.system == "cupy" else numba_main
        if a.system == "cupy":
            import cupy  # noqa: F401 -- only to learn whether the peer is installed
        else:
            import numpy
            numpy.row_stack = numpy.vstack
            from numba import cuda
            if not cuda.is_available():
                raise RuntimeError("numba.cuda sees no GPU")
    except Exception as e:
        why = f"{a.system} is not usable here ({type(e).__name__}: {e})"
        for case, variants in ALL_CASES.items():
            if wants(a, case):
                for v in variants:
                    missing(case, a.system, v, 0, why)
        return 0
    body(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
