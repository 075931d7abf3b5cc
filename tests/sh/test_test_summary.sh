#!/usr/bin/env bash
# test_test_summary.sh -- scripts/test_summary.lua, the end of scripts/test.sh, on a made-up
# ctest JUnit report: a passed Criterion program whose cases partly skipped (ctest calls it
# passed; the summary must count its skipped cases), a skipped test with its reason, a failed
# test, and XML escapes in the reasons.
. "$(dirname "$0")/lib.sh"
lua=$(command -v lua5.4 || echo "$CUJIT")
summary="$(dirname "$0")/../../scripts/test_summary.lua"
cat >"$TMP/junit.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="Linux-cc" tests="4" failures="1" disabled="0" skipped="1">
	<testcase name="c.test_runtime" classname="c.test_runtime" time="0.5" status="run">
		<system-out>[====] Running 3 tests from runtime_gpu:
[PASS] runtime_cpu::a: (0.00s)
[SKIP] runtime_gpu::b: no GPU: no CUDA driver &lt;x&gt;
[SKIP] runtime_gpu::c: no GPU: no CUDA driver &lt;x&gt;
[====] Synthesis: Tested: 1 | Passing: 1 | Failing: 0 | Crashing: 0 
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
check "tests counted" "$out" "^ctest: +4 tests: 1 passed, 1 failed, 2 skipped$"
check "Criterion cases counted, skips included" "$out" \
  "^Criterion: +3 cases in 1 program: 1 passed, 0 failed, 0 crashed, 2 skipped$"
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
