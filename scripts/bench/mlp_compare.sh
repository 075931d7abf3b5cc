#!/bin/sh
# mlp_compare.sh -- issue 13's benchmark in one command, on the GPU machine: examples/mlp.lua
# (f32, f16 and bf16, graph replays and launches, batch 128 and 1024; MNIST 5k for 20 epochs and
# Fashion-MNIST for 10) beside its PyTorch twin scripts/bench/mlp_torch.py (eager f32 and f16
# autocast, CUDA-graph capture of the step), and the tiled GEMM beside torch.matmul (TF32 off),
# then one table with the goals' verdicts. Both train with the same recipe (mlp.lua's defaults) and
# the twin starts from cujit's own initial weights (mlp.lua --init-out, mlp_torch.py --init: the
# files init-DATA.bin in the output folder), so that the two differ only by rounding. The f16 and
# bf16 runs' products go through cuda.gemm (the tensor cores where the shapes fit), issue 26's
# goals for them beside the f32 runs; the GEMM table has each precision on nn.lua's GEMM and on
# cuda.gemm. Every program runs under `timeout` within a budget of
# 230 s for the whole script (MLP_COMPARE_BUDGET), so it ends whatever happens; a run that
# fails, times out or does not fit is a `missing` row.
#
# Usage: scripts/bench/mlp_compare.sh [--cujit PATH] [--python PYTHON] [--out DIR] [--compile]
#                                     [--quick] [--device cpu]
#   --cujit    the cujit command (default build/cujit)
#   --out      where the logs and the cujit charts go (default $OUT/mlp-compare, else /tmp/...)
#   --compile  also the twin with torch.compile(mode="reduce-overhead") (slow to compile)
#   --quick    a trial of the script itself, every run small (MNIST 5k for 2 epochs, Fashion on
#              its first 4,096 training images for 1 epoch, the square GEMM at 256^3): the same
#              programs, options and table as the real run, figures that mean nothing
#   --device cpu  the twin on the CPU, eager only (a trial without a GPU: cujit then runs on its
#              CPU device); about 3 minutes with --quick on a 2-core machine
# The data must be in data/ (scripts/fetch_mnist.sh; on a machine without network, carry data/).
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
cujit=$root/build/cujit
python=python3
out=${OUT:-/tmp}/mlp-compare
modes=eager,graphs
quick=0
device=cuda
while [ $# -gt 0 ]; do
  case $1 in
    --cujit) cujit=$2; shift 2 ;;
    --python) python=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --compile) modes=eager,graphs,compile; shift ;;
    --quick) quick=1; shift ;;
    --device) device=$2; shift 2 ;;
    *) echo "mlp_compare.sh: unknown argument $1 (see the comment at the top)" >&2; exit 2 ;;
  esac
done
case $device in
  cuda) ;;
  cpu) modes=eager ;; # CUDA graphs and torch.compile's reduce-overhead need a GPU
  *) echo "mlp_compare.sh: --device "$device" is not cuda or cpu" >&2; exit 2 ;;
esac
[ -x "$cujit" ] || { echo "mlp_compare.sh: no cujit command at $cujit (--cujit PATH)" >&2; exit 2; }
[ -f "$root/data/mnist_5k.csv.gz" ] ||
  { echo "mlp_compare.sh: no data; run scripts/fetch_mnist.sh first" >&2; exit 2; }
mkdir -p "$out"
# the runs start in examples/: paths given relative to where the script was started become absolute
case $cujit in /*) ;; *) cujit=$(pwd)/$cujit ;; esac
case $python in */*) case $python in /*) ;; *) python=$(pwd)/$python ;; esac ;; esac
out=$(cd "$out" && pwd)
log=$out/results.log
: > "$log"
rm -f "$out"/init-*.bin # a stale file must not stand in for this run's

# run SECONDS NAME COMMAND...: the command's output goes to OUT/NAME.log and its RESULT lines
# to the results log, tagged with their implementation. No run goes past the whole script's
# budget (BUDGET seconds from the start): what does not fit is skipped (its rows `missing`).
BUDGET=${MLP_COMPARE_BUDGET:-300}
began=$(date +%s)
run() {
  limit=$1 name=$2
  shift 2
  left=$((BUDGET - ($(date +%s) - began)))
  if [ "$left" -lt 15 ]; then
    echo "== $name: skipped, the ${BUDGET} s budget is spent" >&2
    return
  fi
  [ "$limit" -le "$left" ] || limit=$left
  echo "== $name (at most $limit s): $*" >&2
  start=$(date +%s)
  timeout -k 5 "$limit" "$@" > "$out/$name.log" 2>&1
  rc=$?
  echo "   exit $rc after $(( $(date +%s) - start )) s (log: $out/$name.log)" >&2
  [ $rc -eq 0 ] || tail -n 5 "$out/$name.log" >&2
  grep -E '^(GEMM)?RESULT' "$out/$name.log" | sed "s/^/$name /" >> "$log"
}

cd "$root/examples" || exit 1
export CUJIT_EXAMPLE_OUT="$out"
both="--batch 128,1024 --quiet"
mnist_epochs=20 fashion_epochs=10 fashion_limit='' gemm_size=4096
[ $quick -eq 0 ] || mnist_epochs=2 fashion_epochs=1 fashion_limit="--train-limit 4096" gemm_size=256
twin="$root/scripts/bench/mlp_torch.py"
run 120 cujit-gemm "$cujit" mlp.lua --gemm --gemm-size $gemm_size --batch 128,1024 \
  --precision f32,f16,bf16
run 120 torch-gemm "$python" "$twin" --gemm --gemm-size $gemm_size --batch 128,1024 --device "$device"
run 150 cujit-mnist "$cujit" mlp.lua --data mnist5k --epochs $mnist_epochs $both --precision f32,f16,bf16 \
  --exec graph,launch --init-out "$out/init-mnist5k.bin"
run 150 cujit-fashion "$cujit" mlp.lua --data fashion --epochs $fashion_epochs $fashion_limit $both \
  --precision f32,f16,bf16 --exec graph,launch --init-out "$out/init-fashion.bin"
# the twin from cujit's initial weights when cujit wrote them (its own He draw otherwise)
init() { [ -f "$out/init-$1.bin" ] && echo "--init $out/init-$1.bin"; }
run 150 torch-mnist "$python" "$twin" --data mnist5k --epochs $mnist_epochs $both \
  --precision f32,f16 --modes $modes --device "$device" $(init mnist5k)
run 200 torch-fashion "$python" "$twin" --data fashion --epochs $fashion_epochs $fashion_limit $both \
  --precision f32,f16 --modes $modes --device "$device" $(init fashion)
echo "== all runs done after $(( $(date +%s) - began )) s" >&2

"$python" - "$log" "$quick" "$gemm_size" <<'PY'
import sys

quick, size = sys.argv[2] == "1", sys.argv[3]
if quick:
    print("\n**A --quick trial: small runs, the figures and verdicts mean nothing.**")

rows, gemm = [], []
for line in open(sys.argv[1]):
    name, kind, *fields = line.split()
    kv = dict(f.split("=", 1) for f in fields if "=" in f)
    kv["impl"] = "torch" if name.startswith("torch") else "cujit"
    (gemm if kind == "GEMMRESULT" else rows).append(kv)

def find(impl, data, precision, exec_, batch):
    for r in rows:
        if (r["impl"], r.get("data"), r.get("precision"), r.get("exec"), r.get("batch")) == \
           (impl, data, precision, exec_, str(batch)) and "test_acc" in r:
            return r
    return None

print("\n## Training: test accuracy after the last epoch, median epoch time (epochs 2..)\n")
print("| data | batch | precision | run | test acc | epoch ms | step us |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for data in ("mnist5k", "fashion"):
    for batch in (128, 1024):
        for impl, precision, exec_ in (("cujit", "f32", "graph"), ("cujit", "f32", "launch"),
                                       ("cujit", "f16", "graph"), ("cujit", "f16", "launch"),
                                       ("cujit", "bf16", "graph"), ("cujit", "bf16", "launch"),
                                       ("torch", "f32", "eager"), ("torch", "f16", "eager"),
                                       ("torch", "f32", "graphs"), ("torch", "f32", "compile")):
            r = find(impl, data, precision, exec_, batch)
            if r is None and exec_ == "compile":
                continue
            if r is None:
                print(f"| {data} | {batch} | {precision} | {impl} {exec_} | missing | | |")
            else:
                print(f"| {data} | {batch} | {precision} | {impl} {exec_} | "
                      f"{100 * float(r['test_acc']):.2f} % | {float(r['epoch_ms']):.2f} | "
                      f"{float(r['step_us']):.1f} |")

print("\n## GEMM (cujit: nn.lua's GEMM and cuda.gemm per precision; torch.matmul f32, TF32 off)\n")
print("| op | m x n x k | precision | cujit GEMM | cujit TFLOP/s | torch f32 TFLOP/s | ratio |")
print("| --- | --- | --- | --- | --- | --- | --- |")
def g(impl, op, m, n, k, dtype="f32", kernel="nn"):
    for r in gemm:
        if (r["impl"], r["op"], r["m"], r["n"], r["k"]) == (impl, op, m, n, k) and \
           (impl == "torch" or (r.get("dtype", "f32"), r.get("kernel", "nn")) == (dtype, kernel)):
            return float(r["tflops"])
for r in gemm:
    if r["impl"] != "cujit":
        continue
    t = g("torch", r["op"], r["m"], r["n"], r["k"])
    c = float(r["tflops"])
    print(f"| {r['op']} | {r['m']}x{r['n']}x{r['k']} | {r.get('dtype', 'f32')} | "
          f"{r.get('kernel', 'nn')} | {c:.2f} | "
          f"{'missing' if t is None else f'{t:.2f}'} | {'' if not t else f'{c / t:.2f}'} |")

print("\n## Goals\n")
verdicts = []
def verdict(goal, ok, detail):
    word = "missing" if ok is None else ("PASS" if ok else "FAIL")
    verdicts.append(word)
    print(f"- {word}: {goal} ({detail})")

for data, floor, epochs in (("mnist5k", 0.95, 20), ("fashion", 0.87, 10)):
    for batch in (128, 1024):
        c = find("cujit", data, "f32", "graph", batch)
        t = find("torch", data, "f32", "eager", batch)
        verdict(f"{data} batch {batch}: cujit f32 test accuracy >= {100 * floor:.0f} % after {epochs} epochs",
                None if c is None else float(c["test_acc"]) >= floor,
                "missing" if c is None else f"{100 * float(c['test_acc']):.2f} %")
        verdict(f"{data} batch {batch}: within 0.5 points of PyTorch eager (same initial weights)",
                None if c is None or t is None else
                abs(float(c["test_acc"]) - float(t["test_acc"])) <= 0.005,
                "missing" if c is None or t is None else
                f"{100 * float(c['test_acc']):.2f} % against {100 * float(t['test_acc']):.2f} %")
for batch in (128, 1024):
    c = find("cujit", "fashion", "f32", "graph", batch)
    e = find("torch", "fashion", "f32", "eager", batch)
    gr = find("torch", "fashion", "f32", "graphs", batch)
    cp = find("torch", "fashion", "f32", "compile", batch)
    verdict(f"Fashion (60,000) batch {batch}: cujit graph epoch >= 5x faster than PyTorch eager",
            None if c is None or e is None else 5 * float(c["epoch_ms"]) <= float(e["epoch_ms"]),
            "missing" if c is None or e is None else
            f"{float(c['epoch_ms']):.2f} ms against {float(e['epoch_ms']):.2f} ms, "
            f"{float(e['epoch_ms']) / float(c['epoch_ms']):.1f}x")
    best = min((float(r["epoch_ms"]) for r in (gr, cp) if r is not None), default=None)
    verdict(f"Fashion batch {batch}: faster than PyTorch with CUDA graphs / reduce-overhead",
            None if c is None or best is None else float(c["epoch_ms"]) < best,
            "missing" if c is None or best is None else
            f"{float(c['epoch_ms']):.2f} ms against {best:.2f} ms")
# issue 26: the low-precision nets on tensor cores against f32, graph replays, both data sets
for data in ("mnist5k", "fashion"):
    for batch, share, goal in ((1024, 0.6, "<= 0.6x"), (128, 1.0, "no slower than")):
        f = find("cujit", data, "f32", "graph", batch)
        b = find("cujit", data, "bf16", "graph", batch)
        verdict(f"{data} batch {batch}: bf16 epoch {goal} the f32 epoch (issue 26)",
                None if f is None or b is None else
                float(b["epoch_ms"]) <= share * float(f["epoch_ms"]),
                "missing" if f is None or b is None else
                f"{float(b['epoch_ms']):.2f} ms against {float(f['epoch_ms']):.2f} ms, "
                f"{float(b['epoch_ms']) / float(f['epoch_ms']):.2f}x")
c, t = g("cujit", "A*B", size, size, size), g("torch", "A*B", size, size, size)
verdict(f"GEMM {size}^3 f32 >= 60 % of cuBLAS", None if c is None or t is None else c >= 0.6 * t,
        "missing" if c is None or t is None else f"{c:.2f} against {t:.2f} TFLOP/s, {100 * c / t:.0f} %")

# docs/examples.md's "Figures on the H200", ready to paste.
def acc_ms(r):
    return "missing" if r is None else \
        f"{100 * float(r['test_acc']):.2f} %, {float(r['epoch_ms']):.2f} ms"

print("\n## For docs/examples.md (test accuracy after the last epoch, median epoch time)\n")
print("| run | test accuracy | epoch time | PyTorch eager | PyTorch graphs |")
print("| --- | --- | --- | --- | --- |")
for data, name in (("mnist5k", "MNIST 5k"), ("fashion", "Fashion")):
    for batch, precision in ((128, "f32"), (128, "f16"), (128, "bf16"), (1024, "f32"),
                             (1024, "f16"), (1024, "bf16")):
        c = find("cujit", data, precision, "graph", batch)
        e = find("torch", data, precision, "eager", batch)
        gr = find("torch", data, precision, "graphs", batch)
        print(f"| {name}, batch {batch}, {precision}, graph | "
              + ("missing | |" if c is None else
                 f"{100 * float(c['test_acc']):.2f} % | {float(c['epoch_ms']):.2f} ms |")
              + f" {acc_ms(e)} | {acc_ms(gr) if precision == 'f32' else '-'} |")
gc, gt = g("cujit", "A*B", size, size, size), g("torch", "A*B", size, size, size)
print(f"| GEMM {size}³ f32 | | {'missing' if gc is None else f'{gc:.2f}'} TFLOP/s | "
      f"cuBLAS (torch.matmul): {'missing' if gt is None else f'{gt:.2f}'} TFLOP/s | |")

print(f"\n{verdicts.count('PASS')} passed, {verdicts.count('FAIL')} failed, "
      f"{verdicts.count('missing')} missing")
PY
