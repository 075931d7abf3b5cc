-- example_checks.lua -- how many checks each Lua example makes as ctest runs it, by script and
-- arguments, in each mode it runs in without a GPU: compile (CUJIT_EXAMPLE_COMPILE_ONLY=1: the
-- host-side checks) and cpu (a full run on the CPU device). examples/CMakeLists.txt names this
-- file in CUJIT_EXAMPLE_CHECKS, and example_support.lua fails a run whose count differs from the
-- one listed for its mode, or is not listed: a check removed from an example, or one that no
-- longer runs, fails the example's test. Change a count only with the example's checks. Runs on a
-- GPU are not counted. tma_copy runs nothing on the CPU device (TMA is refused there: it skips).
return {
  ["cluster_reduce"] = {compile = 0, cpu = 3},
  ["cluster_reduce --sweep"] = {cpu = 8},
  ["conv2d"] = {compile = 6, cpu = 12},
  ["cooperative"] = {compile = 0, cpu = 3},
  ["devices"] = {compile = 1, cpu = 3},
  ["graphs"] = {compile = 1, cpu = 7},
  ["half"] = {compile = 2, cpu = 7},
  ["matmul"] = {compile = 4, cpu = 13},
  ["mlp"] = {compile = 8, cpu = 16},
  ["mlp_data_parallel"] = {compile = 3, cpu = 6},
  ["monte_carlo"] = {compile = 6, cpu = 12},
  ["multi_gpu"] = {compile = 5, cpu = 6},
  ["reduce"] = {compile = 2, cpu = 12},
  ["streams"] = {compile = 1, cpu = 3},
  ["tma_copy"] = {compile = 0},
  ["vector_add"] = {compile = 0, cpu = 3},
}
