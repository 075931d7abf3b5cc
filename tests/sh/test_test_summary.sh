#!/usr/bin/env bash
# test_test_summary.sh -- scripts/test_summary.lua, the end of scripts/test.sh, on a made-up
# ctest JUnit report: a passed Criterion program whose cases partly skipped (ctest calls it
# passed; the summary must count its skipped cases) and partly ran on the CPU device, a skipped
# test with its reason, a failed test, XML escapes in the reasons; and where each test ran: on a
# GPU, on the CPU device (by its "runs on:" lines, or as the CPU device's own suite), compile-only,
# or with no device named.
. "$(dirname "$0")/lib.sh"
lua=$(command -v lua5.4 || echo "$CUJIT")
summary="$(dirname "$0")/../../scripts/test_summary.lua"
cat >"$TMP/junit.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="Linux-cc" tests="9" failures="1" disabled="0" skipped="1">
	<testcase name="c.test_runtime" classname="c.test_runtime" time="0.5" status="run">
		<system-out>[====] Running 5 tests from runtime_gpu:
[PASS] runtime_cpu::a: (0.00s)
runs on: CPU device [runtime_device::d]
[PASS] runtime_device::d: (0.01s)
runs on: CPU device [runtime_device::e]
[PASS] runtime_device::e: (0.01s)
[SKIP] runtime_gpu::b: no GPU: no CUDA driver &lt;x&gt;
[SKIP] runtime_gpu::c: no GPU: no CUDA driver &lt;x&gt;
[====] Synthesis: Tested: 3 | Passing: 3 | Failing: 0 | Crashing: 0 
</system-out>
	</testcase>
	<testcase name="example.vector_add" classname="example.vector_add" time="3" status="run">
		<system-out>runs on: GPU 0 (NVIDIA H200)
ok   c = a + b
</system-out>
	</testcase>
	<testcase name="example.vector_add.compile" classname="example.vector_add.compile" time="1" status="run">
		<system-out>compile-only: kernels compiled for sm_90, host checks done
</system-out>
	</testcase>
	<testcase name="c.test_cpu_e2e" classname="c.test_cpu_e2e" time="1" status="run">
		<system-out>[====] Synthesis: Tested: 2 | Passing: 2 | Failing: 0 | Crashing: 0 
</system-out>
	</testcase>
	<testcase name="sh.test_cli" classname="sh.test_cli" time="1" status="run">
		<system-out>ok   cujit --help
</system-out>
	</testcase>
	<testcase name="lua.test_gpu" classname="lua.test_gpu" time="0.0" status="notrun">
		<skipped message="SKIP_RETURN_CODE=77"/>
		<system-out>seed 1
SKIP: no GPU: no CUDA driver &lt;x&gt;
</system-out>
	</testcase>
	<testcase name="sh.test_pty" classname="sh.test_pty" time="0.0" status="notrun">
		<skipped message="SKIP_RETURN_CODE=77"/>
		<system-out>skip: python3 is needed to drive a pseudo-terminal
</system-out>
	</testcase>
	<testcase name="sh.test_broken" classname="sh.test_broken" time="0.1" status="fail">
		<failure message="Failed"/>
		<system-out>FAIL: something</system-out>
	</testcase>
</testsuite>
XML
run "$lua" "$summary" "$TMP/junit.xml" 8 "cujit devices: no CUDA driver"
check_rc "the summary runs" 0
check "ctest's status is shown" "$out" "^== summary \(ctest exit status 8\) ==$"
check "tests counted" "$out" "^ctest: +8 tests: 5 passed, 1 failed, 2 skipped$"
check "Criterion cases counted, skips included" "$out" \
  "^Criterion: +7 cases in 2 programs: 5 passed, 0 failed, 0 crashed, 2 skipped$"
check "GPU: the test that said so" "$out" "^  GPU: +1 test$"
check "GPU: named" "$out" "^ +example\.vector_add$"
check "CPU device: by its cases' lines and by its name" "$out" \
  "^  CPU device: +2 tests \(2 Criterion cases that said so\)$"
check "CPU device: named" "$out" "^ +c\.test_runtime c\.test_cpu_e2e$"
check "compile-only" "$out" "^  compile-only: +1 test$"
check "no device named: the rest that ran, failures included" "$out" \
  "^  no device named: +2 tests$"
check "no device named: named" "$out" "^ +sh\.test_cli sh\.test_broken$"
check "failed tests named" "$out" "^failed: +sh.test_broken$"
check "the GPU line gathers the test and the cases, unescaped" "$out" \
  "^GPU: +1 test and 2 cases skipped: no GPU: no CUDA driver <x>$"
check "the skipped test is named" "$out" "tests: lua.test_gpu$"
check "the skipped cases by suite" "$out" "cases: runtime_gpu 2$"
check "a skip not about a device has its own line" "$out" \
  "^skipped: +1 test and 0 cases skipped: python3 is needed to drive a pseudo-terminal$"
run "$lua" "$summary" "$TMP/none.xml" 3
check "no report: says so" "$out" "no ctest report at .*none.xml \(ctest exit status 3\)"
finish
