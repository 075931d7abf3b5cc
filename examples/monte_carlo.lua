-- monte_carlo.lua -- option pricing by Monte Carlo with random numbers made inside the kernel by
-- <cujit/random.h> (counter-based: no generator state to set up, unlike cuRAND's XORWOW).
--   European call: 2^24 paths of the exact log-normal step S_T = S0 exp((r - s^2/2) T + s sqrt(T) Z),
--   checked against the Black-Scholes closed form within five standard errors. The standard error
--   is the exact one (the payoff's variance has a closed form too), and the one the kernel's sums
--   of squares give must agree with it within 5 %: a kernel whose squares were wrong would
--   otherwise widen its own bound.
--   Asian call (arithmetic average of 64 fixings): no closed form; priced on the same kind of
--   paths together with the geometric-average Asian call, which has one (checked within five
--   standard errors), and the arithmetic price must be at least the geometric one (AM >= GM on
--   every path).
-- Each block of threads sums its payoffs in double; the per-block sums are added by a:sum().
-- On the CPU device the paths are 2^20 (the checks, in standard errors, are the same).
local cuda = require "cujit"
package.path = (arg[0]:match("^(.*)/") or ".") .. "/?.lua;" .. package.path -- find example_support
local S = require "example_support"

local S0, STRIKE, RATE, SIGMA, T = 100.0, 105.0, 0.05, 0.2, 1.0
local PATHS = S.on_cpu and 1 << 20 or 1 << 24 -- the CPU device draws about 10^7 normals a second
local FIXINGS = 64
local BLOCK, GRID = 256, 1024

local european = cuda.jit([[european(unsigned long long seed, long long paths, float s0, float strike,
                                     float drift, float vol, double *sums, double *squares)]], [[
  double s = 0.0, q = 0.0;
  for (long long b : cujit::grid_stride(paths / 4)) { // four paths per Philox block
    float4 z = cujit::normal_float4(seed, b);
    float zs[4] = {z.x, z.y, z.z, z.w};
    for (int k = 0; k < 4; k++) {
      double p = fmaxf(s0 * expf(drift + vol * zs[k]) - strike, 0.0f);
      s += p;
      q += p * p;
    }
  }
  s = cujit::block_sum(s);
  q = cujit::block_sum(q);
  if (cujit::block_rank() == 0) sums[blockIdx.x] = s, squares[blockIdx.x] = q;
]], S.options({preamble = "#include <cujit/random.h>\n#include <cujit/reduce.h>\n"}))

-- Path p uses Philox blocks p * FIXINGS/4 + j of random stream 1: 4 steps per block.
local asian = cuda.jit([[asian(unsigned long long seed, long long paths, float s0, float strike,
                         float step_drift, float step_vol, double *sums, double *squares,
                         double *geo_sums, double *geo_squares)]], [[
  constexpr int FIX = ]] .. FIXINGS .. [[;
  double s = 0.0, q = 0.0, gs = 0.0, gq = 0.0;
  for (long long p : cujit::grid_stride(paths)) {
    float log_s = logf(s0), total = 0.0f, log_total = 0.0f;
    for (int j = 0; j < FIX / 4; j++) {
      float4 z = cujit::normal_float4(seed, (unsigned long long)p * (FIX / 4) + j, 1);
      float zs[4] = {z.x, z.y, z.z, z.w};
      for (int k = 0; k < 4; k++) {
        log_s += step_drift + step_vol * zs[k];
        total += expf(log_s);
        log_total += log_s;
      }
    }
    double a = fmaxf(total / FIX - strike, 0.0f);
    double g = fmaxf(expf(log_total / FIX) - strike, 0.0f);
    s += a, q += a * a, gs += g, gq += g * g;
  }
  s = cujit::block_sum(s);
  q = cujit::block_sum(q);
  gs = cujit::block_sum(gs);
  gq = cujit::block_sum(gq);
  if (cujit::block_rank() == 0)
    sums[blockIdx.x] = s, squares[blockIdx.x] = q, geo_sums[blockIdx.x] = gs,
    geo_squares[blockIdx.x] = gq;
]], S.options({preamble = "#include <cujit/random.h>\n#include <cujit/reduce.h>\n"}))

-- Closed forms (host) -----------------------------------------------------------------------

local ncdf, black_scholes, moments = S.normal_cdf, S.black_scholes, S.lognormal_call_moments

-- Call on the geometric average of n equally spaced fixings t_i = i T / n: log G is normal
-- with mean log S0 + (r - s^2/2) T (n+1)/(2n) and variance s^2 T (n+1)(2n+1)/(6n^2).
local function geometric_asian(s0, k, r, sigma, t, n)
  local mu = math.log(s0) + (r - sigma * sigma / 2) * t * (n + 1) / (2 * n)
  local sd = sigma * math.sqrt(t * (n + 1) * (2 * n + 1) / (6 * n * n))
  local d2 = (mu - math.log(k)) / sd
  return math.exp(-r * t) * (math.exp(mu + sd * sd / 2) * ncdf(d2 + sd) - k * ncdf(d2))
end

S.check(math.abs(black_scholes(100, 100, 0.05, 0.2, 1) - 10.450584) < 1e-5,
        "Black-Scholes(100, 100, 5%%, 20%%, 1y) = %.6f (textbook value 10.450584)",
        black_scholes(100, 100, 0.05, 0.2, 1))
do -- put-call parity: C - P = S0 - K e^{-rT}, with P from the same formula by symmetry
  local c = black_scholes(S0, STRIKE, RATE, SIGMA, T)
  local d1 = (math.log(S0 / STRIKE) + (RATE + SIGMA ^ 2 / 2) * T) / (SIGMA * math.sqrt(T))
  local p = STRIKE * math.exp(-RATE * T) * ncdf(-(d1 - SIGMA * math.sqrt(T))) - S0 * ncdf(-d1)
  S.check(math.abs(c - p - (S0 - STRIKE * math.exp(-RATE * T))) < 1e-6,
          "put-call parity holds for the closed form (call %.6f, put %.6f)", c, p)
end
S.check(math.abs(geometric_asian(S0, STRIKE, RATE, SIGMA, T, 1) -
                 black_scholes(S0, STRIKE, RATE, SIGMA, T)) < 1e-9,
        "geometric Asian with one fixing is the European call")

-- The log of the price at T (European) and of the geometric average (Asian): mean, variance.
local EURO_MU, EURO_VAR = math.log(S0) + (RATE - SIGMA ^ 2 / 2) * T, SIGMA ^ 2 * T
local GEO_MU = math.log(S0) + (RATE - SIGMA ^ 2 / 2) * T * (FIXINGS + 1) / (2 * FIXINGS)
local GEO_VAR = SIGMA ^ 2 * T * (FIXINGS + 1) * (2 * FIXINGS + 1) / (6 * FIXINGS ^ 2)
do
  local m1, sd = moments(EURO_MU, EURO_VAR, STRIKE)
  S.check(math.abs(math.exp(-RATE * T) * m1 - black_scholes(S0, STRIKE, RATE, SIGMA, T)) < 1e-9,
          "the payoff's exact mean is Black-Scholes undiscounted (its sd %.6f)", sd)
  local g1 = moments(GEO_MU, GEO_VAR, STRIKE)
  S.check(math.abs(math.exp(-RATE * T) * g1 - geometric_asian(S0, STRIKE, RATE, SIGMA, T, FIXINGS))
          < 1e-9, "the geometric Asian payoff's exact mean is its closed form undiscounted")
end

-- The kernel's standard error must agree with the exact one within 5 %, relatively: an SE is of
-- the order of 0.01 here, so any absolute bound would pass a kernel whose SE is off by half.
local function se_agrees(se, exact)
  return math.abs(se / exact - 1) <= 0.05
end
S.check(se_agrees(0.0104, 0.01) and not se_agrees(0.0106, 0.01) and not se_agrees(0.005, 0.01),
        "host: the standard-error check is relative (5 %): 0.0104 agrees with 0.01, 0.0106 and "
        .. "0.005 do not")
S.host_checks_done()

-- GPU runs ------------------------------------------------------------------------------------

local seed = S.seed()
local disc = math.exp(-RATE * T)

-- Mean, standard error of the discounted payoff from the per-block sums.
local function price(sums, squares, n)
  local mean = sums:sum() / n
  local var = (squares:sum() / n - mean * mean) * n / (n - 1)
  return disc * mean, disc * math.sqrt(var / n)
end

-- The exact standard error of the discounted mean of n payoffs max(e^X - K, 0), X ~ N(mu, var);
-- the kernel's own (se) must agree with it within 5 % (its sampling error: about 0.5 % at 2^20).
local function exact_se(what, se, mu, var, n)
  local _, sd = moments(mu, var, STRIKE)
  local exact = disc * sd / math.sqrt(n)
  S.check(se_agrees(se, exact), "%s: the kernel's standard error %.6f is the exact "
          .. "%.6f within 5 %%", what, se, exact)
  return exact
end

local sums, squares = cuda.device_array(GRID, "f64"), cuda.device_array(GRID, "f64")
local drift, vol = (RATE - SIGMA ^ 2 / 2) * T, SIGMA * math.sqrt(T)
local launch = european[{GRID, BLOCK}]
local t0 = S.clock()
local ms = S.gpu_ms(function() launch(seed, PATHS, S0, STRIKE, drift, vol, sums, squares) end)
local value, se = price(sums, squares, PATHS)
local wall = (S.clock() - t0) * 1e3
local exact = black_scholes(S0, STRIKE, RATE, SIGMA, T)
S.printf("European call, %d paths: %.6f +- %.6f (SE); Black-Scholes %.6f", PATHS, value, se, exact)
S.printf("  kernel %.3f ms (%s); first RNG to price %.3f ms wall (launch, kernel, 2 sums); no "
         .. "RNG state to set up", ms, S.on_cpu and "the CPU device" or "GPU", wall)
S.check_estimate("European", value, "Black-Scholes", exact,
                 exact_se("European", se, EURO_MU, EURO_VAR, PATHS))
ms = S.gpu_ms(function() launch(seed, PATHS, S0, STRIKE, drift, vol, sums, squares) end, 10)
S.printf("  kernel again, warm: %.3f ms", ms)

local gsums, gsquares = cuda.device_array(GRID, "f64"), cuda.device_array(GRID, "f64")
local dt = T / FIXINGS
local alaunch = asian[{GRID, BLOCK}]
t0 = S.clock()
ms = S.gpu_ms(function()
  alaunch(seed, PATHS, S0, STRIKE, (RATE - SIGMA ^ 2 / 2) * dt, SIGMA * math.sqrt(dt), sums,
          squares, gsums, gsquares)
end)
local avalue, ase = price(sums, squares, PATHS)
local gvalue, gse = price(gsums, gsquares, PATHS)
wall = (S.clock() - t0) * 1e3
local gexact = geometric_asian(S0, STRIKE, RATE, SIGMA, T, FIXINGS)
S.printf("Asian call (%d fixings), %d paths: arithmetic %.6f +- %.6f, geometric %.6f +- %.6f "
         .. "(closed form %.6f)", FIXINGS, PATHS, avalue, ase, gvalue, gse, gexact)
S.printf("  kernel %.3f ms (%s, %d normals); first RNG to price %.3f ms wall", ms,
         S.on_cpu and "the CPU device" or "GPU", PATHS * FIXINGS, wall)
S.check_estimate("geometric Asian", gvalue, "closed form", gexact,
                 exact_se("geometric Asian", gse, GEO_MU, GEO_VAR, PATHS))
S.check(avalue >= gvalue, "arithmetic Asian %.6f >= geometric Asian %.6f", avalue, gvalue)
S.check(avalue < value, "Asian %.6f < European %.6f (averaging lowers the volatility)", avalue,
        value)
S.done()
