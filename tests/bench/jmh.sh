#!/usr/bin/env bash
# Runs the JMH benchmarks of tests/src/test/java/org/hintfs/bench (default: PolicyAccessBenchmark).
# Usage: tests/bench/jmh.sh [JMH ARGS...]
set -euo pipefail
root=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
cd "$root"
mvn -q -DskipTests install -pl backing,policy,fs -am >/dev/null
mvn -q -DskipTests test-compile -pl tests >/dev/null
cp=$(mvn -q -pl tests dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=/dev/stdout)
exec java -cp "tests/target/test-classes:$cp" org.openjdk.jmh.Main "${@:-PolicyAccessBenchmark}"
