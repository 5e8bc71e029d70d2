# Stage runner sourced by .ci/run: `stage NAME CMD…` runs one step and records its wall time; `stage_parallel NAME
# CMD1 CMD2` runs two shell commands side by side (outputs printed whole, in order); a summary table closes the
# run from an EXIT trap, so a failed run shows it too. Test stages add their vitest counts to the table.
# shellcheck shell=bash

CI_STAGE_NAMES=()
CI_STAGE_SECS=()
CI_STAGE_RESULTS=()
CI_EXIT_HOOKS=()
CI_TESTS_PASSED=0
CI_TESTS_FAILED=0
CI_TESTS_SKIPPED=0
CI_RUN_START="$EPOCHREALTIME"
CI_LOG_DIR="$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/ci-logs.XXXXXX")"

on_exit() { CI_EXIT_HOOKS+=("$1"); }

_ci_elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

# Vitest's closing "Tests  2 failed | 1380 passed | 3 skipped (1385)" line, added to the run's totals.
_ci_count_tests() {
  local line
  CI_LAST_COUNTS=""
  line="$(sed 's/\x1b\[[0-9;]*m//g' "$1" | grep -aE '^ +Tests +' | tail -1 || true)"
  [ -n "$line" ] || return 0
  local passed failed skipped
  passed="$(sed -nE 's/.* ([0-9]+) passed.*/\1/p' <<<"$line")"
  failed="$(sed -nE 's/.* ([0-9]+) failed.*/\1/p' <<<"$line")"
  skipped="$(sed -nE 's/.* ([0-9]+) skipped.*/\1/p' <<<"$line")"
  CI_TESTS_PASSED=$((CI_TESTS_PASSED + ${passed:-0}))
  CI_TESTS_FAILED=$((CI_TESTS_FAILED + ${failed:-0}))
  CI_TESTS_SKIPPED=$((CI_TESTS_SKIPPED + ${skipped:-0}))
  CI_LAST_COUNTS="${passed:-0} passed, ${failed:-0} failed"
}

_ci_record() {
  CI_STAGE_NAMES+=("$1")
  CI_STAGE_SECS+=("$2")
  CI_STAGE_RESULTS+=("$3")
  echo "== $1: $3 in $2 s"
}

stage() {
  local name="$1" start log rc result
  shift
  echo "== $name"
  start="$EPOCHREALTIME"
  log="$CI_LOG_DIR/stage-${#CI_STAGE_NAMES[@]}.log"
  set +e
  "$@" 2>&1 | tee "$log"
  rc="${PIPESTATUS[0]}"
  set -e
  result="ok"
  [ "$rc" = 0 ] || result="FAILED (exit $rc)"
  _ci_count_tests "$log"
  [ -z "$CI_LAST_COUNTS" ] || result="$result; $CI_LAST_COUNTS"
  _ci_record "$name" "$(_ci_elapsed "$start")" "$result"
  [ "$rc" = 0 ] || exit "$rc"
}

stage_parallel() {
  local name="$1" start i rc=0 pids=() logs=() codes=()
  shift
  echo "== $name"
  start="$EPOCHREALTIME"
  for i in "$@"; do
    logs+=("$CI_LOG_DIR/parallel-${#CI_STAGE_NAMES[@]}-${#logs[@]}.log")
    bash -c "$i" >"${logs[-1]}" 2>&1 &
    pids+=("$!")
  done
  for i in "${!pids[@]}"; do
    if wait "${pids[$i]}"; then codes+=(0); else codes+=("$?"); rc="${codes[-1]}"; fi
  done
  for i in "${!logs[@]}"; do
    echo "-- ${*:$((i + 1)):1} (exit ${codes[$i]})"
    cat "${logs[$i]}"
  done
  _ci_record "$name" "$(_ci_elapsed "$start")" "$([ "$rc" = 0 ] && echo ok || echo "FAILED (exit $rc)")"
  [ "$rc" = 0 ] || exit "$rc"
}

_ci_summary() {
  local rc=$? i hook
  for hook in "${CI_EXIT_HOOKS[@]}"; do eval "$hook" >/dev/null 2>&1 || true; done
  echo
  echo "== summary"
  printf '| %-78s | %8s | %s\n' "stage" "seconds" "result"
  for i in "${!CI_STAGE_NAMES[@]}"; do
    printf '| %-78s | %8s | %s\n' "${CI_STAGE_NAMES[$i]}" "${CI_STAGE_SECS[$i]}" "${CI_STAGE_RESULTS[$i]}"
  done
  printf '| %-78s | %8s | %s\n' "total" "$(_ci_elapsed "$CI_RUN_START")" "$([ "$rc" = 0 ] && echo passed || echo "FAILED (exit $rc)")"
  rm -rf "$CI_LOG_DIR"
  echo "tests: $CI_TESTS_PASSED passed, $CI_TESTS_FAILED failed, $CI_TESTS_SKIPPED skipped"
  exit "$rc"
}
trap _ci_summary EXIT
