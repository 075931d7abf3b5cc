// linklib.cu -- the device library of the bench's `link` case (scripts/bench/link.c): about 500
// lines of device code of the shape a user keeps apart from kernels (polynomial approximations,
// integer mixers, a counter-based random generator, tile reductions through cooperative groups)
// and a dispatcher, lib_eval, which the kernels declare extern and call. Compiled once to LTO-IR
// by cujit (link = {...}), or whole with each kernel for the comparison.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

__device__ __noinline__ float lib_poly0(float x) {
  // degree-8 polynomial, Horner's rule, argument folded into [-1, 1]
  float t = x - 2.0f * rintf(x * 0.5f);
  float r = -0.246075f;
  r = fmaf(r, t, 0.853577f);
  r = fmaf(r, t, 0.686893f);
  r = fmaf(r, t, -0.571908f);
  r = fmaf(r, t, 0.743416f);
  r = fmaf(r, t, 0.272923f);
  r = fmaf(r, t, -0.915216f);
  r = fmaf(r, t, 0.905944f);
  r = fmaf(r, t, -0.488633f);
  return r;
}

__device__ __noinline__ float lib_poly1(float x) {
  // degree-8 polynomial, Horner's rule, argument folded into [-1, 1]
  float t = x - 2.0f * rintf(x * 0.5f);
  float r = -0.388198f;
  r = fmaf(r, t, -0.15184f);
  r = fmaf(r, t, 0.177028f);
  r = fmaf(r, t, -0.751217f);
  r = fmaf(r, t, 0.373355f);
  r = fmaf(r, t, 0.664481f);
  r = fmaf(r, t, 0.024638f);
  r = fmaf(r, t, 0.588922f);
  r = fmaf(r, t, 0.24996f);
  return r;
}

__device__ __noinline__ float lib_poly2(float x) {
  // degree-8 polynomial, Horner's rule, argument folded into [-1, 1]
  float t = x - 2.0f * rintf(x * 0.5f);
  float r = 0.649625f;
  r = fmaf(r, t, -0.638122f);
  r = fmaf(r, t, -0.282645f);
  r = fmaf(r, t, -0.061211f);
  r = fmaf(r, t, -0.792032f);
  r = fmaf(r, t, 0.946213f);
  r = fmaf(r, t, 0.272059f);
  r = fmaf(r, t, -0.803548f);
  r = fmaf(r, t, 0.165552f);
  return r;
}

__device__ __noinline__ float lib_poly3(float x) {
  // degree-8 polynomial, Horner's rule, argument folded into [-1, 1]
  float t = x - 2.0f * rintf(x * 0.5f);
  float r = -0.171148f;
  r = fmaf(r, t, -0.621207f);
  r = fmaf(r, t, -0.678135f);
  r = fmaf(r, t, -0.078513f);
  r = fmaf(r, t, -0.85926f);
  r = fmaf(r, t, 0.126156f);
  r = fmaf(r, t, 0.029856f);
  r = fmaf(r, t, -0.74584f);
  r = fmaf(r, t, 0.750322f);
  return r;
}

__device__ __noinline__ float lib_poly4(float x) {
  // degree-8 polynomial, Horner's rule, argument folded into [-1, 1]
  float t = x - 2.0f * rintf(x * 0.5f);
  float r = -0.918947f;
  r = fmaf(r, t, -0.655856f);
  r = fmaf(r, t, 0.634357f);
  r = fmaf(r, t, -0.558369f);
  r = fmaf(r, t, -0.151566f);
  r = fmaf(r, t, 0.119165f);
  r = fmaf(r, t, -0.128877f);
  r = fmaf(r, t, -0.011728f);
  r = fmaf(r, t, 0.009463f);
  return r;
}

__device__ __noinline__ float lib_poly5(float x) {
  // degree-8 polynomial, Horner's rule, argument folded into [-1, 1]
  float t = x - 2.0f * rintf(x * 0.5f);
  float r = -0.034523f;
  r = fmaf(r, t, -0.884781f);
  r = fmaf(r, t, 0.632673f);
  r = fmaf(r, t, -0.434302f);
  r = fmaf(r, t, -0.90452f);
  r = fmaf(r, t, -0.183432f);
  r = fmaf(r, t, 0.628888f);
  r = fmaf(r, t, 0.257652f);
  r = fmaf(r, t, -0.085532f);
  return r;
}

__device__ __noinline__ float lib_poly6(float x) {
  // degree-8 polynomial, Horner's rule, argument folded into [-1, 1]
  float t = x - 2.0f * rintf(x * 0.5f);
  float r = -0.044f;
  r = fmaf(r, t, -0.560748f);
  r = fmaf(r, t, 0.236124f);
  r = fmaf(r, t, -0.299086f);
  r = fmaf(r, t, -0.871623f);
  r = fmaf(r, t, -0.73978f);
  r = fmaf(r, t, -0.814753f);
  r = fmaf(r, t, 0.368999f);
  r = fmaf(r, t, 0.764389f);
  return r;
}

__device__ __noinline__ float lib_poly7(float x) {
  // degree-8 polynomial, Horner's rule, argument folded into [-1, 1]
  float t = x - 2.0f * rintf(x * 0.5f);
  float r = 0.510992f;
  r = fmaf(r, t, -0.561043f);
  r = fmaf(r, t, -0.705824f);
  r = fmaf(r, t, 0.901077f);
  r = fmaf(r, t, -0.252036f);
  r = fmaf(r, t, -0.665578f);
  r = fmaf(r, t, 0.142878f);
  r = fmaf(r, t, 0.237497f);
  r = fmaf(r, t, 0.081458f);
  return r;
}

__device__ __noinline__ float lib_poly8(float x) {
  // degree-8 polynomial, Horner's rule, argument folded into [-1, 1]
  float t = x - 2.0f * rintf(x * 0.5f);
  float r = -0.096114f;
  r = fmaf(r, t, -0.392453f);
  r = fmaf(r, t, -0.01066f);
  r = fmaf(r, t, -0.084967f);
  r = fmaf(r, t, 0.362672f);
  r = fmaf(r, t, -0.103477f);
  r = fmaf(r, t, -0.290163f);
  r = fmaf(r, t, 0.972306f);
  r = fmaf(r, t, -0.778551f);
  return r;
}

__device__ __noinline__ float lib_poly9(float x) {
  // degree-8 polynomial, Horner's rule, argument folded into [-1, 1]
  float t = x - 2.0f * rintf(x * 0.5f);
  float r = 0.51123f;
  r = fmaf(r, t, -0.165476f);
  r = fmaf(r, t, 0.610793f);
  r = fmaf(r, t, 0.416388f);
  r = fmaf(r, t, 0.132285f);
  r = fmaf(r, t, 0.220274f);
  r = fmaf(r, t, -0.54091f);
  r = fmaf(r, t, -0.967891f);
  r = fmaf(r, t, 0.493091f);
  return r;
}

__device__ __noinline__ float lib_poly10(float x) {
  // degree-8 polynomial, Horner's rule, argument folded into [-1, 1]
  float t = x - 2.0f * rintf(x * 0.5f);
  float r = -0.482283f;
  r = fmaf(r, t, -0.777797f);
  r = fmaf(r, t, 0.622758f);
  r = fmaf(r, t, 0.181949f);
  r = fmaf(r, t, -0.935298f);
  r = fmaf(r, t, 0.03894f);
  r = fmaf(r, t, -0.672864f);
  r = fmaf(r, t, 0.730511f);
  r = fmaf(r, t, -0.458023f);
  return r;
}

__device__ __noinline__ float lib_poly11(float x) {
  // degree-8 polynomial, Horner's rule, argument folded into [-1, 1]
  float t = x - 2.0f * rintf(x * 0.5f);
  float r = 0.879668f;
  r = fmaf(r, t, 0.225083f);
  r = fmaf(r, t, -0.843337f);
  r = fmaf(r, t, -0.182327f);
  r = fmaf(r, t, 0.93298f);
  r = fmaf(r, t, 0.401953f);
  r = fmaf(r, t, -0.690201f);
  r = fmaf(r, t, -0.264213f);
  r = fmaf(r, t, -0.452563f);
  return r;
}

__device__ __noinline__ float lib_poly12(float x) {
  // degree-8 polynomial, Horner's rule, argument folded into [-1, 1]
  float t = x - 2.0f * rintf(x * 0.5f);
  float r = -0.813211f;
  r = fmaf(r, t, 0.187336f);
  r = fmaf(r, t, 0.389952f);
  r = fmaf(r, t, -0.566306f);
  r = fmaf(r, t, 0.103726f);
  r = fmaf(r, t, 0.722343f);
  r = fmaf(r, t, 0.78471f);
  r = fmaf(r, t, -0.657397f);
  r = fmaf(r, t, -0.850177f);
  return r;
}

__device__ __noinline__ float lib_poly13(float x) {
  // degree-8 polynomial, Horner's rule, argument folded into [-1, 1]
  float t = x - 2.0f * rintf(x * 0.5f);
  float r = 0.824734f;
  r = fmaf(r, t, -0.347078f);
  r = fmaf(r, t, -0.667914f);
  r = fmaf(r, t, 0.597705f);
  r = fmaf(r, t, -0.471604f);
  r = fmaf(r, t, 0.436043f);
  r = fmaf(r, t, 0.381812f);
  r = fmaf(r, t, -0.414698f);
  r = fmaf(r, t, -0.077926f);
  return r;
}

__device__ __noinline__ float lib_poly14(float x) {
  // degree-8 polynomial, Horner's rule, argument folded into [-1, 1]
  float t = x - 2.0f * rintf(x * 0.5f);
  float r = -0.421156f;
  r = fmaf(r, t, 0.612816f);
  r = fmaf(r, t, -0.431997f);
  r = fmaf(r, t, -0.452371f);
  r = fmaf(r, t, 0.714962f);
  r = fmaf(r, t, -0.447279f);
  r = fmaf(r, t, -0.126787f);
  r = fmaf(r, t, 0.031822f);
  r = fmaf(r, t, -0.995976f);
  return r;
}

__device__ __noinline__ float lib_poly15(float x) {
  // degree-8 polynomial, Horner's rule, argument folded into [-1, 1]
  float t = x - 2.0f * rintf(x * 0.5f);
  float r = -0.426415f;
  r = fmaf(r, t, 0.487172f);
  r = fmaf(r, t, 0.962422f);
  r = fmaf(r, t, -0.316443f);
  r = fmaf(r, t, -0.046183f);
  r = fmaf(r, t, -0.886064f);
  r = fmaf(r, t, -0.023882f);
  r = fmaf(r, t, -0.280553f);
  r = fmaf(r, t, 0.004216f);
  return r;
}

__device__ __noinline__ float lib_poly16(float x) {
  // degree-8 polynomial, Horner's rule, argument folded into [-1, 1]
  float t = x - 2.0f * rintf(x * 0.5f);
  float r = -0.402771f;
  r = fmaf(r, t, -0.372105f);
  r = fmaf(r, t, 0.826429f);
  r = fmaf(r, t, 0.55433f);
  r = fmaf(r, t, -0.27988f);
  r = fmaf(r, t, -0.859756f);
  r = fmaf(r, t, -0.895765f);
  r = fmaf(r, t, -0.806977f);
  r = fmaf(r, t, -0.739078f);
  return r;
}

__device__ __noinline__ float lib_poly17(float x) {
  // degree-8 polynomial, Horner's rule, argument folded into [-1, 1]
  float t = x - 2.0f * rintf(x * 0.5f);
  float r = 0.16529f;
  r = fmaf(r, t, 0.042063f);
  r = fmaf(r, t, -0.74014f);
  r = fmaf(r, t, 0.756396f);
  r = fmaf(r, t, 0.34074f);
  r = fmaf(r, t, 0.419041f);
  r = fmaf(r, t, 0.791112f);
  r = fmaf(r, t, -0.372322f);
  r = fmaf(r, t, 0.805659f);
  return r;
}

__device__ __noinline__ float lib_poly18(float x) {
  // degree-8 polynomial, Horner's rule, argument folded into [-1, 1]
  float t = x - 2.0f * rintf(x * 0.5f);
  float r = 0.95227f;
  r = fmaf(r, t, 0.817604f);
  r = fmaf(r, t, -0.908337f);
  r = fmaf(r, t, 0.701565f);
  r = fmaf(r, t, 0.968646f);
  r = fmaf(r, t, -0.786458f);
  r = fmaf(r, t, 0.730909f);
  r = fmaf(r, t, 0.630617f);
  r = fmaf(r, t, -0.9355f);
  return r;
}

__device__ __noinline__ float lib_poly19(float x) {
  // degree-8 polynomial, Horner's rule, argument folded into [-1, 1]
  float t = x - 2.0f * rintf(x * 0.5f);
  float r = 0.415261f;
  r = fmaf(r, t, 0.518771f);
  r = fmaf(r, t, 0.498634f);
  r = fmaf(r, t, -0.884469f);
  r = fmaf(r, t, 0.939401f);
  r = fmaf(r, t, -0.85203f);
  r = fmaf(r, t, -0.830663f);
  r = fmaf(r, t, 0.894404f);
  r = fmaf(r, t, -0.037845f);
  return r;
}

__device__ __noinline__ float lib_poly20(float x) {
  // degree-8 polynomial, Horner's rule, argument folded into [-1, 1]
  float t = x - 2.0f * rintf(x * 0.5f);
  float r = -0.643175f;
  r = fmaf(r, t, -0.21055f);
  r = fmaf(r, t, 0.247169f);
  r = fmaf(r, t, -0.463342f);
  r = fmaf(r, t, 0.828997f);
  r = fmaf(r, t, 0.351754f);
  r = fmaf(r, t, -0.227244f);
  r = fmaf(r, t, -0.266639f);
  r = fmaf(r, t, -0.76874f);
  return r;
}

__device__ __noinline__ float lib_poly21(float x) {
  // degree-8 polynomial, Horner's rule, argument folded into [-1, 1]
  float t = x - 2.0f * rintf(x * 0.5f);
  float r = 0.971626f;
  r = fmaf(r, t, -0.385386f);
  r = fmaf(r, t, 0.872014f);
  r = fmaf(r, t, 0.07997f);
  r = fmaf(r, t, 0.074756f);
  r = fmaf(r, t, -0.648771f);
  r = fmaf(r, t, 0.00526f);
  r = fmaf(r, t, -0.802809f);
  r = fmaf(r, t, -0.103967f);
  return r;
}

__device__ __noinline__ float lib_poly22(float x) {
  // degree-8 polynomial, Horner's rule, argument folded into [-1, 1]
  float t = x - 2.0f * rintf(x * 0.5f);
  float r = 0.226816f;
  r = fmaf(r, t, 0.851594f);
  r = fmaf(r, t, -0.558103f);
  r = fmaf(r, t, -0.636893f);
  r = fmaf(r, t, 0.5755f);
  r = fmaf(r, t, -0.73544f);
  r = fmaf(r, t, -0.610812f);
  r = fmaf(r, t, -0.043377f);
  r = fmaf(r, t, -0.14499f);
  return r;
}

__device__ __noinline__ float lib_poly23(float x) {
  // degree-8 polynomial, Horner's rule, argument folded into [-1, 1]
  float t = x - 2.0f * rintf(x * 0.5f);
  float r = 0.985741f;
  r = fmaf(r, t, -0.869391f);
  r = fmaf(r, t, 0.742082f);
  r = fmaf(r, t, -0.074743f);
  r = fmaf(r, t, -0.723542f);
  r = fmaf(r, t, -0.523524f);
  r = fmaf(r, t, 0.817738f);
  r = fmaf(r, t, -0.646292f);
  r = fmaf(r, t, -0.153829f);
  return r;
}

__device__ __noinline__ unsigned lib_mix0(unsigned h) {
  h ^= h >> 2;
  h *= 0xca23cfbdu;
  h ^= h >> 11;
  h *= 0xb33f79edu;
  h ^= h >> 16;
  return h;
}

__device__ __noinline__ unsigned lib_mix1(unsigned h) {
  h ^= h >> 8;
  h *= 0x5711abbdu;
  h ^= h >> 24;
  h *= 0x45a9e809u;
  h ^= h >> 7;
  return h;
}

__device__ __noinline__ unsigned lib_mix2(unsigned h) {
  h ^= h >> 14;
  h *= 0xd5ada93fu;
  h ^= h >> 20;
  h *= 0xe0a23fdfu;
  h ^= h >> 27;
  return h;
}

__device__ __noinline__ unsigned lib_mix3(unsigned h) {
  h ^= h >> 28;
  h *= 0x0e2bb78fu;
  h ^= h >> 15;
  h *= 0xdd646cd1u;
  h ^= h >> 12;
  return h;
}

__device__ __noinline__ unsigned lib_mix4(unsigned h) {
  h ^= h >> 7;
  h *= 0x79cc37a7u;
  h ^= h >> 12;
  h *= 0xbac8ad1du;
  h ^= h >> 21;
  return h;
}

__device__ __noinline__ unsigned lib_mix5(unsigned h) {
  h ^= h >> 2;
  h *= 0xafad1639u;
  h ^= h >> 17;
  h *= 0x1d07d4b5u;
  h ^= h >> 1;
  return h;
}

__device__ __noinline__ unsigned lib_mix6(unsigned h) {
  h ^= h >> 4;
  h *= 0x42dc6987u;
  h ^= h >> 18;
  h *= 0xcceba7edu;
  h ^= h >> 13;
  return h;
}

__device__ __noinline__ unsigned lib_mix7(unsigned h) {
  h ^= h >> 26;
  h *= 0xe5d913fbu;
  h ^= h >> 20;
  h *= 0xa7b46817u;
  h ^= h >> 5;
  return h;
}

__device__ __noinline__ unsigned lib_mix8(unsigned h) {
  h ^= h >> 26;
  h *= 0x6b1b99bdu;
  h ^= h >> 1;
  h *= 0xf113362du;
  h ^= h >> 12;
  return h;
}

__device__ __noinline__ unsigned lib_mix9(unsigned h) {
  h ^= h >> 14;
  h *= 0xde0d5edfu;
  h ^= h >> 9;
  h *= 0x08043475u;
  h ^= h >> 11;
  return h;
}

__device__ __noinline__ unsigned lib_mix10(unsigned h) {
  h ^= h >> 3;
  h *= 0x7e3ee7fdu;
  h ^= h >> 28;
  h *= 0x76ba98b7u;
  h ^= h >> 14;
  return h;
}

__device__ __noinline__ unsigned lib_mix11(unsigned h) {
  h ^= h >> 8;
  h *= 0xc6992933u;
  h ^= h >> 2;
  h *= 0x446ad7bdu;
  h ^= h >> 18;
  return h;
}

struct lib_counter { unsigned c[4]; };

// Ten rounds of a multiply-xor counter generator keyed by two words: four words per call.
__device__ __noinline__ lib_counter lib_rounds(lib_counter v, unsigned k0, unsigned k1) {
  for (int r = 0; r < 10; r++) {
    unsigned long long p0 = 0xD2511F53ull * v.c[0], p1 = 0xCD9E8D57ull * v.c[2];
    lib_counter n;
    n.c[0] = (unsigned)(p1 >> 32) ^ v.c[1] ^ k0;
    n.c[1] = (unsigned)p1;
    n.c[2] = (unsigned)(p0 >> 32) ^ v.c[3] ^ k1;
    n.c[3] = (unsigned)p0;
    v = n;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return v;
}

__device__ __noinline__ float lib_uniform(unsigned seed, unsigned index) {
  lib_counter v = {{index, 0u, seed, 0u}};
  v = lib_rounds(v, seed ^ 0x1234567u, 0x89ABCDEFu);
  return (v.c[0] >> 8) * (1.0f / 16777216.0f);
}

__device__ __noinline__ float lib_normal(unsigned seed, unsigned index) {
  float u1 = fmaxf(lib_uniform(seed, 2u * index), 1e-7f);
  float u2 = lib_uniform(seed, 2u * index + 1u);
  return sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
}

__device__ __noinline__ float lib_tile4_sum(float v) {
  cg::thread_block_tile<4> t = cg::tiled_partition<4>(cg::this_thread_block());
  return cg::reduce(t, v, cg::plus<float>());
}

__device__ __noinline__ float lib_tile8_sum(float v) {
  cg::thread_block_tile<8> t = cg::tiled_partition<8>(cg::this_thread_block());
  return cg::reduce(t, v, cg::plus<float>());
}

__device__ __noinline__ float lib_tile16_sum(float v) {
  cg::thread_block_tile<16> t = cg::tiled_partition<16>(cg::this_thread_block());
  return cg::reduce(t, v, cg::plus<float>());
}

__device__ __noinline__ float lib_tile32_sum(float v) {
  cg::thread_block_tile<32> t = cg::tiled_partition<32>(cg::this_thread_block());
  return cg::reduce(t, v, cg::plus<float>());
}

__device__ __noinline__ float lib_tile4_max(float v) {
  cg::thread_block_tile<4> t = cg::tiled_partition<4>(cg::this_thread_block());
  return cg::reduce(t, v, cg::greater<float>());
}

__device__ __noinline__ float lib_tile8_max(float v) {
  cg::thread_block_tile<8> t = cg::tiled_partition<8>(cg::this_thread_block());
  return cg::reduce(t, v, cg::greater<float>());
}

__device__ __noinline__ float lib_tile16_max(float v) {
  cg::thread_block_tile<16> t = cg::tiled_partition<16>(cg::this_thread_block());
  return cg::reduce(t, v, cg::greater<float>());
}

__device__ __noinline__ float lib_tile32_max(float v) {
  cg::thread_block_tile<32> t = cg::tiled_partition<32>(cg::this_thread_block());
  return cg::reduce(t, v, cg::greater<float>());
}

__device__ __noinline__ float lib_tile4_min(float v) {
  cg::thread_block_tile<4> t = cg::tiled_partition<4>(cg::this_thread_block());
  return cg::reduce(t, v, cg::less<float>());
}

__device__ __noinline__ float lib_tile8_min(float v) {
  cg::thread_block_tile<8> t = cg::tiled_partition<8>(cg::this_thread_block());
  return cg::reduce(t, v, cg::less<float>());
}

__device__ __noinline__ float lib_tile16_min(float v) {
  cg::thread_block_tile<16> t = cg::tiled_partition<16>(cg::this_thread_block());
  return cg::reduce(t, v, cg::less<float>());
}

__device__ __noinline__ float lib_tile32_min(float v) {
  cg::thread_block_tile<32> t = cg::tiled_partition<32>(cg::this_thread_block());
  return cg::reduce(t, v, cg::less<float>());
}

__device__ __noinline__ float lib_smooth0(float x) {
  float s = tanhf(1.464f * x + -1.9674f);
  float e = expf(-fabsf(x) * 0.732f);
  return s * e + lib_poly0(x) * (1.0f - e);
}

__device__ __noinline__ float lib_smooth1(float x) {
  float s = tanhf(0.5242f * x + -0.6765f);
  float e = expf(-fabsf(x) * 0.2621f);
  return s * e + lib_poly1(x) * (1.0f - e);
}

__device__ __noinline__ float lib_smooth2(float x) {
  float s = tanhf(0.6767f * x + 1.7743f);
  float e = expf(-fabsf(x) * 0.3383f);
  return s * e + lib_poly2(x) * (1.0f - e);
}

__device__ __noinline__ float lib_smooth3(float x) {
  float s = tanhf(0.5125f * x + -1.8479f);
  float e = expf(-fabsf(x) * 0.2562f);
  return s * e + lib_poly3(x) * (1.0f - e);
}

__device__ __noinline__ float lib_smooth4(float x) {
  float s = tanhf(0.5893f * x + -1.5046f);
  float e = expf(-fabsf(x) * 0.2947f);
  return s * e + lib_poly4(x) * (1.0f - e);
}

__device__ __noinline__ float lib_smooth5(float x) {
  float s = tanhf(2.6834f * x + 1.5711f);
  float e = expf(-fabsf(x) * 1.3417f);
  return s * e + lib_poly5(x) * (1.0f - e);
}

__device__ __noinline__ float lib_smooth6(float x) {
  float s = tanhf(1.7824f * x + 1.1903f);
  float e = expf(-fabsf(x) * 0.8912f);
  return s * e + lib_poly6(x) * (1.0f - e);
}

__device__ __noinline__ float lib_smooth7(float x) {
  float s = tanhf(1.1827f * x + -1.58f);
  float e = expf(-fabsf(x) * 0.5914f);
  return s * e + lib_poly7(x) * (1.0f - e);
}

__device__ __noinline__ float lib_smooth8(float x) {
  float s = tanhf(1.4992f * x + 0.2627f);
  float e = expf(-fabsf(x) * 0.7496f);
  return s * e + lib_poly8(x) * (1.0f - e);
}

__device__ __noinline__ float lib_smooth9(float x) {
  float s = tanhf(1.7957f * x + 1.0139f);
  float e = expf(-fabsf(x) * 0.8979f);
  return s * e + lib_poly9(x) * (1.0f - e);
}

// The one entry point kernels call: function k of the library at x.
__device__ float lib_eval(float x, int k) {
  switch (k & 63) {
  case 0: return lib_poly0(x);
  case 1: return lib_poly1(x);
  case 2: return lib_poly2(x);
  case 3: return lib_poly3(x);
  case 4: return lib_poly4(x);
  case 5: return lib_poly5(x);
  case 6: return lib_poly6(x);
  case 7: return lib_poly7(x);
  case 8: return lib_poly8(x);
  case 9: return lib_poly9(x);
  case 10: return lib_poly10(x);
  case 11: return lib_poly11(x);
  case 12: return lib_poly12(x);
  case 13: return lib_poly13(x);
  case 14: return lib_poly14(x);
  case 15: return lib_poly15(x);
  case 16: return lib_poly16(x);
  case 17: return lib_poly17(x);
  case 18: return lib_poly18(x);
  case 19: return lib_poly19(x);
  case 20: return lib_poly20(x);
  case 21: return lib_poly21(x);
  case 22: return lib_poly22(x);
  case 23: return lib_poly23(x);
  case 24: return (float)(lib_mix0(__float_as_uint(x)) >> 8) * (1.0f / 16777216.0f);
  case 25: return (float)(lib_mix1(__float_as_uint(x)) >> 8) * (1.0f / 16777216.0f);
  case 26: return (float)(lib_mix2(__float_as_uint(x)) >> 8) * (1.0f / 16777216.0f);
  case 27: return (float)(lib_mix3(__float_as_uint(x)) >> 8) * (1.0f / 16777216.0f);
  case 28: return (float)(lib_mix4(__float_as_uint(x)) >> 8) * (1.0f / 16777216.0f);
  case 29: return (float)(lib_mix5(__float_as_uint(x)) >> 8) * (1.0f / 16777216.0f);
  case 30: return (float)(lib_mix6(__float_as_uint(x)) >> 8) * (1.0f / 16777216.0f);
  case 31: return (float)(lib_mix7(__float_as_uint(x)) >> 8) * (1.0f / 16777216.0f);
  case 32: return (float)(lib_mix8(__float_as_uint(x)) >> 8) * (1.0f / 16777216.0f);
  case 33: return (float)(lib_mix9(__float_as_uint(x)) >> 8) * (1.0f / 16777216.0f);
  case 34: return (float)(lib_mix10(__float_as_uint(x)) >> 8) * (1.0f / 16777216.0f);
  case 35: return (float)(lib_mix11(__float_as_uint(x)) >> 8) * (1.0f / 16777216.0f);
  case 36: return lib_smooth0(x);
  case 37: return lib_smooth1(x);
  case 38: return lib_smooth2(x);
  case 39: return lib_smooth3(x);
  case 40: return lib_smooth4(x);
  case 41: return lib_smooth5(x);
  case 42: return lib_smooth6(x);
  case 43: return lib_smooth7(x);
  case 44: return lib_smooth8(x);
  case 45: return lib_smooth9(x);
  case 46: return lib_uniform(__float_as_uint(x), 7u);
  case 47: return lib_normal(__float_as_uint(x), 11u);
  case 48: return lib_tile4_sum(x);
  case 49: return lib_tile8_sum(x);
  case 50: return lib_tile16_sum(x);
  case 51: return lib_tile32_sum(x);
  case 52: return lib_tile4_max(x);
  case 53: return lib_tile8_max(x);
  case 54: return lib_tile16_max(x);
  case 55: return lib_tile32_max(x);
  case 56: return lib_tile4_min(x);
  case 57: return lib_tile8_min(x);
  case 58: return lib_tile16_min(x);
  case 59: return lib_tile32_min(x);
  default: return x;
  }
}

// A light function the run-time figure's kernel calls in its loop: inlined by LTO, as whole.
__device__ float lib_step(float x, float a) {
  return fmaf(a, x, 0.5f) * 0.999f - 0.25f * x;
}
