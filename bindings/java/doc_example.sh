#!/bin/sh
# Compiles and runs the Java example of docs/bindings.md (the first ```java
# block under "## Java") against kite.jar; it must print "ExecutionReport".
# Usage: doc_example.sh BINDINGS_MD KITE_JAR WORK_DIR JAVAC JAVA
set -eu
md=$1 jar=$2 work=$3 javac=$4 java=$5
rm -rf "$work" && mkdir -p "$work"
awk '/^## Java/{java=1} /^## /&&!/^## Java/{java=0} java&&/^```java/{on=1;next} on&&/^```/{exit} on{print}' "$md" > "$work/AckExample.java"
[ -s "$work/AckExample.java" ] || { echo "doc_example.sh: no \`\`\`java block under ## Java in $md" >&2; exit 1; }
"$javac" --release 17 -cp "$jar" -d "$work" "$work/AckExample.java"
out=$("$java" -cp "$jar:$work" AckExample)
printf '%s\n' "$out"
printf '%s\n' "$out" | grep -q "ExecutionReport" || { echo "doc_example.sh: the example printed no ExecutionReport" >&2; exit 1; }
