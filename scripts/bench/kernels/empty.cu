// empty.cu -- the launch-overhead kernels (cases 1 and 2): empty bodies with 1, 4 and 12
// parameters, so the figure is the host's cost of a launch and of packing its arguments.
extern "C" __global__ void empty1(int i0) {}

extern "C" __global__ void empty4(const float *x, float *y, int n, float a) {}

extern "C" __global__ void empty12(const float *p0, const float *p1, float *p2, float *p3, int i0,
                                   int i1, int i2, int i3, float f0, float f1, float f2,
                                   float f3) {}
