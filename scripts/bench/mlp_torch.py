"""mlp_torch.py -- the PyTorch twin of examples/mlp.lua: the same 784-128-128-10 MLP, He
initialisation (N(0, 2/fan_in), zero biases), optimiser (SGD with momentum, or Adam), batch size,
epochs, input normalisation, train/test split and data order (the same splitmix64 Fisher-Yates
shuffle, the last partial batch dropped), on the same GPU, with the same training recipe (weight
decay, a linear warm-up and cosine decay of the learning rate per step, the learning rate per
batch size, and random shifts of the training images drawn from the same splitmix64 stream as
mlp.lua's, so both move the same image the same way in the same step).

Same start: with --init FILE (written by `cujit mlp.lua --init-out FILE`, same --seed) the twin
starts from exactly cujit's initial weights (its cuda.random He draw), so that the two runs differ
only by rounding; without it the twin draws its own He initialisation from torch.manual_seed, the
same distribution but other numbers. scripts/bench/mlp_compare.sh passes the file. Modes:
  eager    plain PyTorch, f32 (and f16 autocast + GradScaler with --precision f16)
  graphs   the whole step (gather, forward, loss, backward, optimiser) captured once with
           torch.cuda.graph and replayed per batch (f32)
  compile  torch.compile(mode="reduce-overhead") of the model (f32; slow to compile)
Prints per-epoch lines and one RESULT line per run (the same keys as mlp.lua's), and with --gemm
torch.matmul's TFLOP/s (TF32 off) at 4096^3 and the MLP's shapes as GEMMRESULT lines.

  python3 scripts/bench/mlp_torch.py --data mnist5k --epochs 20 --batch 128,1024 --modes eager,graphs
  python3 scripts/bench/mlp_torch.py --device cpu --modes eager ...   (no GPU: eager on the CPU)
"""
import argparse
import gzip
import math
import os
import struct
import sys
import time

import torch

MASK64 = (1 << 64) - 1
PIXELS = {"fashion": (0.2860, 0.3530)}  # mean, std; everything else: MNIST's
MNIST_PIXELS = (0.1307, 0.3081)


def read(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        return f.read()


def parse_idx(data, what):
    zero, dtype, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype != 8:
        sys.exit(f"{what}: not a u8 IDX file")
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    body = data[4 + 4 * ndim:]
    n = 1
    for d in dims:
        n *= d
    if len(body) != n:
        sys.exit(f"{what}: header says {n} bytes of data, the file holds {len(body)}")
    return dims, body


def idx_set(images_path, labels_path):
    idims, images = parse_idx(read(images_path), images_path)
    ldims, labels = parse_idx(read(labels_path), labels_path)
    x = torch.frombuffer(bytearray(images), dtype=torch.uint8).reshape(idims[0], -1)
    y = torch.frombuffer(bytearray(labels), dtype=torch.uint8).long()
    return x, y


def mnist_csv(path, train_share=0.8):
    """As nn.parse_mnist_csv: per class, the first 80 % train, the rest test, classes interleaved."""
    rows = [list(map(int, line.split(","))) for line in read(path).decode().splitlines() if line]
    per_class = {}
    for r in rows:
        per_class[r[-1]] = per_class.get(r[-1], 0) + 1
    seen, parts = {}, {"train": [], "test": []}
    for r in rows:
        c = r[-1]
        seen[c] = seen.get(c, 0) + 1
        part = "train" if seen[c] <= int(per_class[c] * train_share + 0.5) else "test"
        parts[part].append(r)

    def interleave(rs):
        count, keyed = {}, []
        for i, r in enumerate(rs):
            count[r[-1]] = count.get(r[-1], 0) + 1
            keyed.append((count[r[-1]], r[-1], i))
        rs = [rs[i] for _, _, i in sorted(keyed)]
        x = torch.tensor([r[:-1] for r in rs], dtype=torch.uint8)
        y = torch.tensor([r[-1] for r in rs], dtype=torch.long)
        return x, y

    return interleave(parts["train"]), interleave(parts["test"])


def load(args):
    if args.data == "mnist5k":
        return mnist_csv(os.path.join(args.data_dir, "mnist_5k.csv.gz"))
    d = os.path.join(args.data_dir, "fashion-mnist") if args.data == "fashion" else args.data

    def path(base):
        p = os.path.join(d, base)
        return p + ".gz" if os.path.exists(p + ".gz") else p

    return (idx_set(path("train-images-idx3-ubyte"), path("train-labels-idx1-ubyte")),
            idx_set(path("t10k-images-idx3-ubyte"), path("t10k-labels-idx1-ubyte")))


def splitmix64(seed):
    """nn_host.splitmix64: the next 64-bit value (unsigned here, two's complement in Lua)."""
    state = [seed & MASK64]

    def next64():
        state[0] = (state[0] + 0x9E3779B97F4A7C15) & MASK64
        z = state[0]
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    return next64


def shuffler(seed, n):
    """nn_host.shuffler: splitmix64 driving Fisher-Yates, the same permutations as mlp.lua."""
    next64 = splitmix64(seed)
    perm = list(range(n))

    def epoch():
        for i in range(n - 1, 0, -1):
            j = (next64() >> 1) % (i + 1)
            perm[i], perm[j] = perm[j], perm[i]
        return perm

    return epoch


SHIFT_SALT = 0x5348494654  # nn_host.SHIFT_SALT


def shift_codes(seed, n, radius):
    """nn_host.shift_codes: each epoch, a move code per position of the order, from a splitmix64
    stream of its own (code -> dx = code % side - radius, dy = code // side - radius)."""
    next64 = splitmix64(seed ^ SHIFT_SALT)
    side = 2 * radius + 1

    def epoch():
        if radius == 0:
            return [0] * n
        return [(next64() >> 1) % (side * side) for _ in range(n)]

    return epoch


def shift_maps(radius, width=28, height=28):
    """For each move code, the source pixel of every output pixel (x[r, c] = image[r - dy, c - dx],
    as nn.lua's gather), or width * height where it falls outside: the background column."""
    side, maps = 2 * radius + 1, []
    for code in range(side * side):
        dx, dy = code % side - radius, code // side - radius
        row = []
        for f in range(width * height):
            r, c = f // width - dy, f % width - dx
            row.append(r * width + c if 0 <= r < height and 0 <= c < width else width * height)
        maps.append(row)
    return torch.tensor(maps, dtype=torch.long)


def lr_at(t, lr, warmup, total, schedule):
    """nn_host.lr_at: lr x linear warm-up over `warmup` steps x cosine decay to 0 over `total`."""
    f = 1.0
    if schedule == "cosine" and total > 0:
        f = 0.5 * (1 + math.cos(math.pi * t / total))
    if warmup > 0 and t < warmup:
        f *= (t + 1) / warmup
    return lr * f


def default_lr(optimizer, batch):
    """nn_host.default_lr: 0.1 x (batch / 128)^(1/3) for SGD, 0.001 for Adam."""
    return 0.001 if optimizer == "adam" else 0.1 * (batch / 128) ** (1 / 3)


WEIGHTS_MAGIC = b"cujit-mlp-weights 1\n"


def read_weights(path):
    """nn_host.read_weights: the tensors of a weights file written by mlp.lua --init-out, each a
    rows x cols float32 tensor (W1 as fan_in x fan_out, b1 as 1 x fan_out, W2, b2, ...)."""
    data = read(path)
    if not data.startswith(WEIGHTS_MAGIC):
        sys.exit(f"{path}: not a cujit-mlp-weights file (write one with mlp.lua --init-out)")
    at = len(WEIGHTS_MAGIC)
    (count,) = struct.unpack_from("<I", data, at)
    at += 4
    tensors = []
    for _ in range(count):
        rows, cols = struct.unpack_from("<II", data, at)
        at += 8
        if at + 4 * rows * cols > len(data):
            sys.exit(f"{path}: truncated")
        t = torch.frombuffer(bytearray(data[at:at + 4 * rows * cols]), dtype=torch.float32)
        tensors.append(t.reshape(rows, cols))
        at += 4 * rows * cols
    if at != len(data):
        sys.exit(f"{path}: bytes after the last tensor")
    return tensors


def model(seed, dev, init=None):
    torch.manual_seed(seed)
    layers = []
    for fin, fout in ((784, 128), (128, 128), (128, 10)):
        lin = torch.nn.Linear(fin, fout)
        torch.nn.init.normal_(lin.weight, 0.0, (2.0 / fin) ** 0.5)  # He, as mlp.lua
        torch.nn.init.zeros_(lin.bias)
        layers += [lin, torch.nn.ReLU()]
    linears = layers[0::2]
    if init is not None:  # cujit's own initial weights: W stored fan_in x fan_out there
        if len(init) != 2 * len(linears):
            sys.exit(f"--init: {len(init)} tensors, the model has {2 * len(linears)}")
        with torch.no_grad():
            for lin, w, b in zip(linears, init[0::2], init[1::2]):
                if tuple(w.shape) != tuple(lin.weight.t().shape) or b.numel() != lin.bias.numel():
                    sys.exit(f"--init: a {tuple(w.shape)} weight where the model has "
                             f"{tuple(lin.weight.t().shape)}")
                lin.weight.copy_(w.t())
                lin.bias.copy_(b.reshape(-1))
    return torch.nn.Sequential(*layers[:-1]).to(dev)


def optimiser(args, net, lr, graphs):
    """The optimiser; with graphs, its learning rate is a device tensor (set before each replay:
    a float would be frozen into the captured graph) and the step one capturable kernel."""
    if args.optimizer == "adam":
        return torch.optim.Adam(net.parameters(), lr=lr, weight_decay=args.weight_decay,
                                capturable=graphs)
    return torch.optim.SGD(net.parameters(), lr=lr, momentum=args.momentum,
                           weight_decay=args.weight_decay, fused=True if graphs else None)


def run(args, data, mode, precision, batch, init):
    dev = torch.device(args.device)
    (xtr, ytr), (xte, yte) = data
    mean, std = PIXELS.get(args.data, MNIST_PIXELS)
    xtr = ((xtr.to(dev).float() / 255 - mean) / std).contiguous()
    xte = ((xte.to(dev).float() / 255 - mean) / std).contiguous()
    ytr, yte = ytr.to(dev), yte.to(dev)
    n, steps = xtr.shape[0], xtr.shape[0] // batch
    # The shifts: a background column (pixel 0, normalised) after the 784 pixels, and each move
    # code's source pixel per output pixel.
    xpad = torch.cat([xtr, torch.full((n, 1), -mean / std, device=dev)], 1).contiguous()
    maps = shift_maps(args.shift).to(dev)
    base_lr = args.lr or default_lr(args.optimizer, batch)
    total, warmup = steps * args.epochs, int(args.warmup * steps + 0.5)
    graphs = mode == "graphs"
    lr_now = torch.tensor(lr_at(0, base_lr, warmup, total, args.schedule), device=dev)
    net = model(args.seed, dev, init)
    opt = optimiser(args, net, lr_now if graphs else lr_now.item(), graphs)
    lossf = torch.nn.CrossEntropyLoss()
    amp = precision == "f16"
    scaler = torch.amp.GradScaler("cuda", init_scale=1024.0, growth_interval=1000) if amp else None
    fwd = torch.compile(net, mode="reduce-overhead") if mode == "compile" else net
    loss_sum = torch.zeros((), device=dev)
    right = torch.zeros((), device=dev, dtype=torch.long)
    idx = torch.zeros(batch, device=dev, dtype=torch.long)
    codes = torch.zeros(batch, device=dev, dtype=torch.long)
    clock = [0]  # steps taken: the schedule's t
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)

    def set_lr():  # before each step (eager: the float; graphs: the tensor the graph reads)
        lr = lr_at(clock[0], base_lr, warmup, total, args.schedule)
        if graphs:
            lr_now.fill_(lr)
        else:
            for group in opt.param_groups:
                group["lr"] = lr
        clock[0] += 1

    def step():
        x, y = xpad[idx.unsqueeze(1), maps[codes]], ytr[idx]
        with torch.autocast(dev.type, dtype=torch.float16, enabled=amp):
            out = fwd(x)
            loss = lossf(out.float(), y)
        opt.zero_grad(set_to_none=False)
        if amp:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        loss_sum.add_(loss.detach() * batch)
        right.add_((out.argmax(1) == y).sum())

    next_order = shuffler(args.seed, n)
    next_codes = shift_codes(args.seed, n, args.shift)
    graph = None
    times, test_acc, train_acc, losses = [], [], [], []
    for epoch in range(1, args.epochs + 1):
        order = torch.tensor(next_order(), device=dev)
        epoch_codes = torch.tensor(next_codes(), device=dev)
        loss_sum.zero_()
        right.zero_()
        sync()
        t0 = time.perf_counter()
        first = 0
        if mode == "graphs" and graph is None:
            # Warm up on a side stream with the epoch's first batches (real steps), then capture.
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for s in range(min(3, steps)):
                    idx.copy_(order[s * batch:(s + 1) * batch])
                    codes.copy_(epoch_codes[s * batch:(s + 1) * batch])
                    set_lr()
                    step()
            torch.cuda.current_stream().wait_stream(side)
            first = min(3, steps)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                step()
        for s in range(first, steps):
            idx.copy_(order[s * batch:(s + 1) * batch])
            codes.copy_(epoch_codes[s * batch:(s + 1) * batch])
            set_lr()
            graph.replay() if graph is not None else step()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
        with torch.no_grad():
            acc = (net(xte).argmax(1) == yte).float().mean().item()
        losses.append(loss_sum.item() / (steps * batch))
        train_acc.append(right.item() / (steps * batch))
        test_acc.append(acc)
        if not args.quiet:
            print(f"  epoch {epoch:2d}  loss {losses[-1]:.4f}  train {100 * train_acc[-1]:6.2f}%  "
                  f"test {100 * acc:6.2f}%  {times[-1]:8.2f} ms", flush=True)
    rest = sorted(times[1:] if len(times) > 1 else times)
    ms = rest[(len(rest) - 1) // 2]
    print(f"RESULT impl=torch data={args.data} precision={precision} exec={mode} batch={batch} "
          f"epochs={args.epochs} train_n={n} optimizer={args.optimizer} lr={base_lr:g} "
          f"test_acc={test_acc[-1]:.4f} "
          f"train_acc={train_acc[-1]:.4f} loss={losses[-1]:.5f} epoch_ms={ms:.3f} "
          f"step_us={ms * 1e3 / steps:.2f}", flush=True)


def gemm(args):
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    shapes = [(4096, 4096, 4096, False, False, "A*B")]
    for b in args.batch:
        shapes += [(b, 128, 784, False, False, "X*W1"), (784, 128, b, True, False, "X^T*dZ1"),
                   (b, 784, 128, False, True, "dZ1*W1^T"), (b, 128, 128, False, False, "H1*W2")]
    for m, n, k, ta, tb, what in shapes:
        a = torch.randn((k, m) if ta else (m, k), device=dev)
        b = torch.randn((n, k) if tb else (k, n), device=dev)
        a_, b_ = (a.t() if ta else a), (b.t() if tb else b)
        reps = 10 if m * n * k > 1e9 else 200
        torch.matmul(a_, b_)
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(reps):
            torch.matmul(a_, b_)
        e1.record()
        e1.synchronize()
        ms = e0.elapsed_time(e1) / reps
        print(f"GEMMRESULT impl=torch op={what} m={m} n={n} k={k} ms={ms:.5f} "
              f"tflops={2 * m * n * k / ms / 1e9:.3f}", flush=True)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", default="mnist5k", help="mnist5k, fashion, or a directory of IDX files")
    p.add_argument("--data-dir", default=os.path.join(here, "..", "..", "data"))
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batch", default="128", type=lambda s: [int(v) for v in s.split(",")])
    p.add_argument("--modes", default="eager,graphs", type=lambda s: s.split(","))
    p.add_argument("--precision", default="f32", type=lambda s: s.split(","))
    p.add_argument("--optimizer", default="sgd", choices=["sgd", "adam"])
    p.add_argument("--lr", type=float, default=0.0,
                   help="default 0.1 x (batch/128)^(1/3) (sgd), 0.001 (adam)")
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--schedule", default="cosine", choices=["cosine", "constant"])
    p.add_argument("--warmup", type=float, default=1.0, help="epochs of linear warm-up")
    p.add_argument("--shift", type=int, default=1, choices=range(8),
                   help="largest random move of a training image, pixels (0: none)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--init", help="start from these weights (cujit mlp.lua --init-out FILE)")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--gemm", action="store_true")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("mlp_torch.py: no CUDA device for PyTorch (--device cpu runs eager on the CPU)")
    if args.gemm:
        gemm(args)
        return
    data = load(args)
    init = read_weights(args.init) if args.init else None
    for batch in args.batch:
        for precision in args.precision:
            for mode in args.modes:
                if precision == "f16" and mode != "eager":
                    continue  # GradScaler's overflow check syncs with the host: not capturable
                print(f"torch {args.data}, {precision}, {mode}, batch {batch}, {args.epochs} epochs, "
                      f"{args.optimizer}, {'cujit' if init else 'its own'} initial weights:",
                      flush=True)
                try:
                    run(args, data, mode, precision, batch, init)
                except Exception as e:  # a mode that does not run here is reported, not fatal
                    print(f"RESULT impl=torch data={args.data} precision={precision} exec={mode} "
                          f"batch={batch} error={type(e).__name__}: {str(e)[:200]!r}", flush=True)


if __name__ == "__main__":
    main()
